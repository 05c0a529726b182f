"""Verifier for service-triage: the fixed configuration parses with crossplane (a real nginx
config parser), routes to the port the app listens on without clashing with nginx, runs the
unit as the data directory's owner, keeps every other directive and setting (compared as
digests of the healthy configuration), and triage.json classifies each planted cause. Where the
task installs nginx, nginx's own syntax test must pass too: it is run, confined, on the host's
main configuration (the verifier's copy) with the sites as the solver left them."""

import collections
import configparser
import functools
import hashlib
import json
import os
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import crossplane
from checks import app_path, load_expected, read_json, run, run_untrusted, share

E = load_expected()
APP = E["app"]
FILES = {"site": f"etc/nginx/sites-enabled/{APP}.conf", "env": f"etc/{APP}/app.env",
         "unit": f"etc/systemd/system/{APP}.service"}


def digest(value):
    return hashlib.sha256(json.dumps(value, separators=(",", ":")).encode()).hexdigest()


def nginx_accepts():
    """nginx -t's verdict on the configuration itself ("syntax is ok"). Run unprivileged, nginx -t
    goes on to fail on the pid file, temp paths and port 80; those come after that verdict."""
    scratch = tempfile.mkdtemp(prefix="nginx-t-")
    main = E["nginx_conf"].replace("include sites-enabled/", "include " + app_path("etc/nginx/sites-enabled/"))
    with open(os.path.join(scratch, "nginx.conf"), "w", encoding="utf-8") as handle:
        handle.write(main)
    conf = os.path.join(scratch, "nginx.conf")
    done = run_untrusted(["nginx", "-t", "-e", "stderr", "-c", conf], timeout=30)
    lines = done.stderr.splitlines()
    verdict = f"nginx: the configuration file {conf} syntax is ok"  # the path is unguessable to the solver
    if verdict not in lines or any("[emerg]" in line for line in lines[:lines.index(verdict)]):
        raise ValueError(f"nginx -t rejects the configuration: {done.stderr.strip()[-300:]}")


@functools.cache  # routing and preservation both read it; nginx -t runs once
def parsed():
    result = crossplane.parse(app_path("etc/nginx/nginx.conf"), combine=False)
    if result["status"] != "ok" or result["errors"]:
        raise ValueError(f"nginx configuration does not parse: {result['errors'][:2]}")
    if E.get("nginx_conf"):
        nginx_accepts()
    return result


def site_blocks(result):
    for config in result["config"]:
        if config["file"].endswith("/" + FILES["site"]):
            return config["parsed"]
    raise ValueError("the site configuration is not included any more")


def env_values():
    """KEY=VALUE settings in file order; a key set twice is an error."""
    values = {}
    with open(app_path(FILES["env"]), encoding="utf-8") as handle:
        for line in handle:
            if "=" in line and not line.lstrip().startswith("#"):
                key, value = line.strip().split("=", 1)
                if key.strip() in values:
                    raise ValueError(f"{key.strip()} is set twice")
                values[key.strip()] = value.strip()
    return values


def flatten(blocks, path=()):
    out = []
    for item in blocks:
        if item["directive"] != "proxy_pass":
            out.append([list(path), item["directive"], item["args"]])
        if "block" in item:
            out += flatten(item["block"], (*path, item["directive"], *item["args"]))
    return out


def listen_ports(result):
    ports = set()
    for config in result["config"]:
        stack = list(config["parsed"])
        while stack:
            item = stack.pop()
            if item["directive"] == "listen":
                ports.add(int(item["args"][0].rsplit(":", 1)[-1]))
            stack += item.get("block", [])
    return ports


def routing():
    result = parsed()
    port = int(env_values()["PORT"])
    targets = []
    for server in (b for b in site_blocks(result) if b["directive"] == "server"):
        for location in (d for d in server["block"] if d["directive"] == "location" and d["args"] == ["/"]):
            targets += [d["args"][0] for d in location.get("block", []) if d["directive"] == "proxy_pass"]
    return targets == [f"http://127.0.0.1:{port}"] and 1024 <= port <= 65535 and port not in listen_ports(result)


def service_unit():
    parser = configparser.ConfigParser(strict=True, interpolation=None)
    parser.optionxform = str
    with open(app_path(FILES["unit"]), encoding="utf-8") as handle:
        parser.read_string(handle.read())
    settings = [[s, k, v] for s in parser.sections() for k, v in parser[s].items()]
    return parser["Service"].get("User") == E["owner"] and [digest(s) for s in settings] == E["unit_settings"]


def preserved():
    site = [digest(d) for d in flatten(site_blocks(parsed()))]
    env = [digest([k, v]) for k, v in env_values().items() if k != "PORT"]
    return site == E["site_directives"] and env == E["env_settings"]


def relative(path):
    path = str(path).strip()
    return path[len("/app/"):] if path.startswith("/app/") else path.lstrip("./")


def diagnosis():
    findings = read_json("out/triage.json")["findings"]
    causes = [digest(str(f["cause"]).strip().casefold()) for f in findings]
    if collections.Counter(causes) != collections.Counter(f["cause"] for f in E["faults"]):
        return False
    for fault in E["faults"]:
        named = {relative(f["file"]) for f, c in zip(findings, causes, strict=True) if c == fault["cause"]}
        if not named & {FILES[kind] for kind in fault["files"]}:
            return False
    return True


def configuration():
    """The share of configuration checks met (each needs the configuration to parse), each
    reported on its own."""
    return share("configuration", [("routing", routing), ("service_unit", service_unit), ("preserved", preserved)])


run([("configuration", configuration), ("diagnosis", diagnosis)])
