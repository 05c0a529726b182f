# --- triage: read the symptoms, fix the configuration, report each cause ---
import glob
import json
import os
import re
import sys

from skillfacts import vocabulary

TASK = json.loads(sys.argv[1])
MOVE_APP = "--move-app" in sys.argv  # fix port problems on the app's side instead of nginx's
# the output of a live `nginx -t` on the mirrored configuration, read instead of the recorded one
NGINX_T = sys.argv[sys.argv.index("--nginx-t") + 1] if "--nginx-t" in sys.argv else "logs/nginx-t.txt"
APP, DOMAIN = TASK["app"], TASK["domain"]
SITE, ENV, UNIT = f"etc/nginx/sites-enabled/{APP}.conf", f"etc/{APP}/app.env", f"etc/systemd/system/{APP}.service"
KEYWORDS = {
    "upstream_port": ("upstream", "unreachable"),
    "syntax": ("config", "syntax"),
    "permission": ("permission",),
    "port_conflict": ("port conflict", "conflict", "in use"),
}
CLASSES = TASK["classes"] or vocabulary()


def cause(kind):
    for keyword in KEYWORDS[kind]:
        matches = [term for term in CLASSES if keyword in term.lower()]
        if len(matches) == 1:
            return matches[0]
    raise SystemExit(f"no class for {kind} in {CLASSES}")


def read(path):
    with open(path, encoding="utf-8") as handle:
        return handle.read()


def write(path, text):
    with open(path, "w", encoding="utf-8") as handle:
        handle.write(text)


def listen_ports():
    ports = set()
    for conf in glob.glob("etc/nginx/sites-enabled/*.conf"):
        for value in re.findall(r"^\s*listen\s+([^;\s]+)", read(conf), re.M):
            ports.add(int(value.rsplit(":", 1)[-1]))
    return ports


def set_proxy_port(port):
    write(SITE, re.sub(r"(proxy_pass http://127\.0\.0\.1:)\d+;", rf"\g<1>{port};", read(SITE)))


def set_app_port(port):
    write(ENV, re.sub(r"^PORT=\d+$", f"PORT={port}", read(ENV), flags=re.M))


findings = []
nginx_t = read(NGINX_T)
broken = re.search(r'in "\w+" directive in (?:/app)?/etc/nginx/(\S+):(\d+)', nginx_t)
if broken and "test failed" in nginx_t:
    path = "etc/nginx/" + broken.group(1)
    lines = read(path).split("\n")
    number = int(broken.group(2)) - 1
    # nginx names the line where the run-on directive ends; the missing ";" is on a line above it
    while number > 0 and (not lines[number].strip() or lines[number].rstrip().endswith((";", "{", "}"))):
        number -= 1
    if not lines[number].rstrip().endswith((";", "{", "}")):
        lines[number] = lines[number].rstrip() + ";"
    write(path, "\n".join(lines))
    findings.append({"cause": cause("syntax"), "file": path})

journal, errors = read(f"logs/journal-{APP}.txt"), read("logs/nginx/error.log")
app_port = int(re.search(r"^PORT=(\d+)$", read(ENV), re.M).group(1))
proxy_port = int(re.search(r"proxy_pass http://127\.0\.0\.1:(\d+);", read(SITE)).group(1))
taken = listen_ports()
if "Address already in use" in journal or app_port in taken:
    port = proxy_port if not MOVE_APP and proxy_port not in taken else next(p for p in range(18000, 19000) if p not in taken)
    set_app_port(port)
    if proxy_port != port:
        set_proxy_port(port)
    findings.append({"cause": cause("port_conflict"), "file": ENV})
elif proxy_port != app_port and f'upstream: "http://127.0.0.1:{proxy_port}/' in errors:
    if MOVE_APP and proxy_port not in taken:
        set_app_port(proxy_port)
        findings.append({"cause": cause("upstream_port"), "file": ENV})
    else:
        set_proxy_port(app_port)
        findings.append({"cause": cause("upstream_port"), "file": SITE})

denied = re.search(r"Permission denied: '(/var/lib/[^']+)'", journal)
if denied:
    owner = read(glob.glob(f"var/ls-{APP}-uploads.txt")[0]).split()[2]
    write(UNIT, re.sub(r"^User=.*$", f"User={owner}", read(UNIT), flags=re.M))
    findings.append({"cause": cause("permission"), "file": UNIT})

os.makedirs("out", exist_ok=True)
write("out/triage.json", json.dumps({"findings": findings[::-1] if MOVE_APP else findings}, indent=2))
