# --- audit rules shared by the scanners: scope (from the skill when it sets it), severities, config files ---
import json
import os
import re

from skill_text import skill_lines

HEADING = re.compile(r"^#{1,6}\s+(.+?)\s*#*\s*$")
EXCLUSION_TITLE = re.compile(r"\bnot\b|\bexclu|\bskip|\bignore|out of scope|false positives?", re.I)
QUOTED_DIR = re.compile(r"`([\w.-]+)/`")
BARE_DIR = re.compile(r"(?<![\w/`.-])([A-Za-z_][\w-]*)/(?=[\s,;:)]|$)")
QUOTED_SUFFIX = re.compile(r"`(\.[A-Za-z][\w-]*)`")
APP_DIRS = {"app", "web", "src", "config", "deploy", "out"}
SECRET_NAME = re.compile(r"secret|key|token|password", re.I)
SEVERITY = {"fallback-secret": "critical", "hardcoded-credential": "critical", "weak-crypto": "high",
            "permissive-default": "medium", "weak-tls": "high"}
PRODUCTION_ENV = "deploy/production.env"
WEAK_PROTOCOLS = {"sslv2", "sslv3", "tlsv1", "tlsv1.1"}
WEAK_SUITES = re.compile(r"RC4|DES|NULL|EXPORT|MD5", re.I)


def exclusion_rules():
    """The folders and suffixes the skill's "when not to use" / exclusion section rules out."""
    dirs, suffixes, inside = [], [], False
    for raw in skill_lines():
        heading = HEADING.match(raw)
        if heading:
            inside = bool(EXCLUSION_TITLE.search(heading.group(1)))
            continue
        if inside:
            dirs += [d for d in QUOTED_DIR.findall(raw) + BARE_DIR.findall(re.sub(r"`[^`]*`", "", raw))
                     if d not in APP_DIRS]
            suffixes += QUOTED_SUFFIX.findall(raw)
    if not dirs or not suffixes:
        return None
    return {"dirs": list(dict.fromkeys(dirs)), "suffixes": list(dict.fromkeys(suffixes))}


def scope(task):
    rules = exclusion_rules() if task["rules_from_skill"] else {"dirs": task["dirs"], "suffixes": task["suffixes"]}
    if rules is None:
        raise SystemExit("the skill states no exclusion rules")
    print("out of scope:", json.dumps(rules))
    return rules


def out_of_scope(path, rules):
    parts = path.split("/")
    return any(p in rules["dirs"] for p in parts[:-1]) or any(parts[-1].endswith(s) for s in rules["suffixes"])


def repository_files(rules):
    for root, dirs, files in os.walk("."):
        dirs[:] = sorted(d for d in dirs if not (root == "." and d in ("out", ".git")))
        for name in sorted(files):
            path = os.path.relpath(os.path.join(root, name), ".").replace(os.sep, "/")
            if not out_of_scope(path, rules):
                yield path


def injected_in_production():
    if not os.path.exists(PRODUCTION_ENV):
        return set()
    with open(PRODUCTION_ENV, encoding="utf-8") as handle:
        return {line.split("=", 1)[0].strip() for line in handle if "=" in line and not line.startswith("#")}


def config_findings(path, text):
    """(path, line, category, "") of env files, YAML settings, Dockerfiles and nginx configs."""
    name = path.rsplit("/", 1)[-1]
    out = []
    for number, raw in enumerate(text.split("\n"), 1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        if name == "Dockerfile" and line.startswith("ENV "):
            key, _, value = line[4:].partition("=")
            out += _setting(number, key, value)
        elif name.endswith(".env") and path != PRODUCTION_ENV and "=" in line:
            key, _, value = line.partition("=")
            out += _setting(number, key, value)
        elif name.endswith((".yaml", ".yml")) and ":" in line:
            key, _, value = line.partition(":")
            out += _setting(number, key, value)
        elif name.endswith(".conf"):
            out += _tls(number, line)
    return [(path, number, category, "") for number, category in out]


def _setting(number, key, value):
    key, value = key.strip(), value.strip().strip("\"'")
    if SECRET_NAME.search(key) and value and not value.isupper():
        return [(number, "hardcoded-credential")]
    if re.search(r"debug", key, re.I) and value.lower() in ("true", "1", "yes", "on"):
        return [(number, "permissive-default")]
    if re.search(r"origin|hosts", key, re.I) and re.fullmatch(r"\[?\s*['\"]?\*['\"]?\s*\]?", value):
        return [(number, "permissive-default")]
    return []


def _tls(number, line):
    words = line.rstrip(";").split()
    if words and words[0] == "ssl_protocols" and {w.lower() for w in words[1:]} & WEAK_PROTOCOLS:
        return [(number, "weak-tls")]
    if words and words[0] == "ssl_ciphers":
        suites = " ".join(words[1:]).strip("'\"").split(":")
        if any(WEAK_SUITES.search(s) and not s.startswith("!") for s in suites):
            return [(number, "weak-tls")]
    return []


def write_report(findings, skipped):
    production = injected_in_production()
    rows = []
    for path, line, category, env in sorted(set(findings)):
        severity = "high" if category == "fallback-secret" and env in production else SEVERITY[category]
        rows.append({"file": path, "line": line, "category": category, "severity": severity})
    os.makedirs("out", exist_ok=True)
    with open("out/findings.json", "w", encoding="utf-8") as handle:
        json.dump({"findings": rows, "skipped": sorted(skipped)}, handle, indent=2)
    print(f"{len(rows)} findings, {len(skipped)} files skipped")
