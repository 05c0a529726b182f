"""The service the service-triage family breaks: nginx main and site configuration, the app's
environment file and systemd unit, and the logs and listings the planted faults leave."""

from __future__ import annotations

import configparser
import hashlib
import json
import random
from dataclasses import dataclass, field

APPS = [("shop", "shop.example.com"), ("billing", "billing.example.org"), ("wiki", "wiki.example.net"),
        ("tracker", "tracker.example.com"), ("media", "media.example.org")]
FAULT_KINDS = ("upstream_port", "permission", "port_conflict", "syntax")
EXCLUSIVE = {frozenset({"upstream_port", "port_conflict"})}
# how a fault kind is recognised among the classes a skill names (first keyword that matches wins)
KIND_KEYWORDS = {
    "upstream_port": ("upstream", "unreachable"),
    "syntax": ("config", "syntax"),
    "permission": ("permission",),
    "port_conflict": ("port conflict", "conflict", "in use"),
}
DEFAULT_CLASSES = ["config error", "dependency missing", "permission denied", "port conflict",
                   "upstream unreachable", "DNS mismatch"]
SYNTAX_TARGET = "        proxy_set_header X-Real-IP $remote_addr;"

NGINX_CONF = """user www-data;
worker_processes auto;
pid /run/nginx.pid;

events {
    worker_connections 768;
}

http {
    sendfile on;
    tcp_nopush on;
    types_hash_max_size 2048;
    default_type application/octet-stream;
    access_log /var/log/nginx/access.log;
    error_log /var/log/nginx/error.log;
    gzip on;
    gzip_types text/plain text/css application/json;
    include sites-enabled/*.conf;
}
"""
SITE_CONF = """server {{
    listen 80;
    server_name {domain};
    client_max_body_size {body_size};
    add_header X-Frame-Options DENY;
    add_header X-Content-Type-Options nosniff;

    location /static/ {{
        alias /srv/{app}/static/;
        expires 7d;
    }}

    location / {{
        proxy_set_header Host $host;
        proxy_set_header X-Real-IP $remote_addr;
        proxy_set_header X-Forwarded-For $proxy_add_x_forwarded_for;
        proxy_read_timeout {timeout};
        proxy_pass http://127.0.0.1:{proxy_port};
    }}
}}

server {{
    listen 127.0.0.1:{health_port};
    server_name localhost;

    location /healthz {{
        return 200 "ok";
    }}
}}
"""
STATUS_CONF = """server {
    listen 8080;
    server_name status.internal;

    location / {
        return 204;
    }
}
"""
APP_ENV = """APP_NAME={app}
PORT={app_port}
BIND=0.0.0.0
UPLOAD_DIR=/var/lib/{app}/uploads
LOG_LEVEL=info
WORKERS={workers}
"""
UNIT = """[Unit]
Description={title} web application
After=network.target

[Service]
Type=simple
User={user}
Group={owner}
WorkingDirectory=/srv/{app}
EnvironmentFile=/etc/{app}/app.env
ExecStart=/srv/{app}/venv/bin/gunicorn --workers {workers} --bind 0.0.0.0:${{PORT}} {app}.wsgi:app
Restart=on-failure

[Install]
WantedBy=multi-user.target
"""


@dataclass
class Service:
    app: str
    domain: str
    owner: str
    app_port: int
    health_port: int
    body_size: str
    timeout: str
    workers: int
    faults: list[str] = field(default_factory=list)

    @property
    def site(self) -> str:
        return f"etc/nginx/sites-enabled/{self.app}.conf"

    @property
    def env(self) -> str:
        return f"etc/{self.app}/app.env"

    @property
    def unit(self) -> str:
        return f"etc/systemd/system/{self.app}.service"

    def proxy_port(self) -> int:
        return self.app_port + 1000 if "upstream_port" in self.faults else self.app_port

    def env_port(self) -> int:
        return self.health_port if "port_conflict" in self.faults else self.app_port


def choose_faults(rng: random.Random, count: int, syntax: bool) -> list[str]:
    pool = [k for k in FAULT_KINDS if k != "syntax"]
    rng.shuffle(pool)
    chosen: list[str] = []
    for kind in pool:
        if len(chosen) < count and not any({kind, other} in EXCLUSIVE for other in chosen):
            chosen.append(kind)
    return chosen + (["syntax"] if syntax else [])


def make_service(rng: random.Random, faults: list[str]) -> Service:
    app, domain = rng.choice(APPS)
    return Service(app=app, domain=domain, owner=f"{app}svc", app_port=rng.choice([5000, 8000, 8081, 9000, 3000]),
                   health_port=rng.choice([8070, 8090, 9180]), body_size=rng.choice(["10m", "20m", "50m"]),
                   timeout=rng.choice(["30s", "60s", "90s"]), workers=rng.choice([2, 4, 8]), faults=faults)


def healthy_site(service: Service) -> str:
    return SITE_CONF.format(domain=service.domain, body_size=service.body_size, app=service.app,
                            timeout=service.timeout, proxy_port=service.app_port, health_port=service.health_port)


def configuration(service: Service) -> dict[str, str]:
    """The configuration files as planted (faults included)."""
    site = SITE_CONF.format(domain=service.domain, body_size=service.body_size, app=service.app,
                            timeout=service.timeout, proxy_port=service.proxy_port(), health_port=service.health_port)
    if "syntax" in service.faults:
        site = site.replace("        proxy_set_header Host $host;", "        proxy_set_header Host $host")
    user = "www-data" if "permission" in service.faults else service.owner
    return {
        "etc/nginx/nginx.conf": NGINX_CONF,
        service.site: site,
        service.env: APP_ENV.format(app=service.app, app_port=service.env_port(), workers=service.workers),
        service.unit: UNIT.format(title=service.app.title(), user=user, owner=service.owner, app=service.app,
                                  workers=service.workers),
    }


def healthy_unit(service: Service) -> str:
    return UNIT.format(title=service.app.title(), user=service.owner, owner=service.owner, app=service.app,
                       workers=service.workers)


def syntax_line(service: Service) -> int:
    """The line nginx reports for the missing ";": the next one, where the run-on directive ends."""
    return healthy_site(service).split("\n").index("        proxy_set_header Host $host;") + 2


def _stamp(second: int) -> str:
    return f"Mar 04 10:{second // 60:02d}:{second % 60:02d}"


def logs(service: Service, rng: random.Random, lines: int, noise: float) -> dict[str, str]:
    app, port = service.app, service.env_port()
    journal = [f"{_stamp(0)} web01 systemd[1]: Started {app.title()} web application.",
               f"{_stamp(1)} web01 gunicorn[2210]: [INFO] Starting gunicorn 21.2.0"]
    if "port_conflict" in service.faults:
        journal += [f"{_stamp(2)} web01 gunicorn[2210]: [ERROR] Connection in use: ('0.0.0.0', {port})",
                    f"{_stamp(3)} web01 gunicorn[2210]: OSError: [Errno 98] Address already in use",
                    f"{_stamp(4)} web01 systemd[1]: {app}.service: Main process exited, code=exited, status=1/FAILURE"]
    else:
        journal.append(f"{_stamp(2)} web01 gunicorn[2210]: [INFO] Listening at: http://0.0.0.0:{port} (2210)")
    if "permission" in service.faults:
        journal += [f"{_stamp(9)} web01 gunicorn[2214]: [ERROR] upload failed for /api/upload",
                    f"{_stamp(9)} web01 gunicorn[2214]: PermissionError: [Errno 13] Permission denied: "
                    f"'/var/lib/{app}/uploads/report-{rng.randint(100, 999)}.pdf'"]
    error = [f"2025/03/04 10:00:0{i} [notice] 1187#1187: signal process started" for i in range(1, 3)]
    if {"upstream_port", "port_conflict"} & set(service.faults):
        error.append(f'2025/03/04 10:07:12 [error] 1190#1190: *41 connect() failed (111: Connection refused) while '
                     f'connecting to upstream, client: 10.0.4.17, server: {service.domain}, request: "GET / HTTP/1.1", '
                     f'upstream: "http://127.0.0.1:{service.proxy_port()}/", host: "{service.domain}"')
    journal, error = _noisy(journal, rng, lines, noise, app, "journal"), _noisy(error, rng, lines, noise, app, "error")
    if "syntax" in service.faults:
        nginx_t = (f'nginx: [emerg] invalid number of arguments in "proxy_set_header" directive in '
                   f"/etc/nginx/sites-enabled/{app}.conf:{syntax_line(service)}\n"
                   "nginx: configuration file /etc/nginx/nginx.conf test failed\n")
    else:
        nginx_t = ("nginx: the configuration file /etc/nginx/nginx.conf syntax is ok\n"
                   "nginx: configuration file /etc/nginx/nginx.conf test is successful\n")
    return {
        f"logs/journal-{app}.txt": "\n".join(journal) + "\n",
        "logs/nginx/error.log": "\n".join(error) + "\n",
        "logs/nginx-t.txt": nginx_t,
        f"var/ls-{app}-uploads.txt": f"drwxr-x--- 2 {service.owner} {service.owner} 4096 Mar  4 09:58 /var/lib/{app}/uploads\n",
    }


def _noisy(lines: list[str], rng: random.Random, total: int, noise: float, app: str, kind: str) -> list[str]:
    """``lines`` (kept in order) among routine lines; ``noise`` of the routine ones look alarming."""
    routine = {
        "journal": ["web01 gunicorn[2214]: [INFO] GET /api/items 200 {ms}ms",
                    "web01 gunicorn[2214]: [INFO] POST /api/cart 201 {ms}ms"],
        "error": ["[info] 1190#1190: *{ms} client closed keepalive connection"],
    }[kind]
    alarming = {
        "journal": ["web01 gunicorn[2214]: [WARNING] slow request GET /api/search {ms}ms",
                    f"web01 {app}[2214]: [WARNING] cache miss storm, {{ms}} keys"],
        "error": ['[warn] 1190#1190: *{ms} an upstream response is buffered to a temporary file',
                  f'[error] 1190#1190: *{{ms}} open() "/srv/{app}/static/favicon.ico" failed (2: No such file or directory)'],
    }[kind]
    out = list(lines)
    width = 15 if kind == "journal" else 19
    for _ in range(max(0, total - len(lines))):
        template = rng.choice(alarming if rng.random() < noise else routine)
        second = rng.randint(5, 59 * 60)
        prefix = _stamp(second) if kind == "journal" else f"2025/03/04 10:{second // 60:02d}:{second % 60:02d}"
        out.append(f"{prefix} " + template.format(ms=rng.randint(3, 2500)))
    return sorted(out, key=lambda line: line[:width])


def digest(value: object) -> str:
    """How the verifier holds expected values it must not show: a digest of their compact JSON."""
    return hashlib.sha256(json.dumps(value, separators=(",", ":")).encode()).hexdigest()


def nginx_directives(text: str) -> list[list[object]]:
    """``[context path, directive, args]`` for every directive but ``proxy_pass``, as crossplane
    reports them for the configurations this module writes (quotes removed, blocks as paths)."""
    tokens: list[str] = []
    word, quoted = "", False
    for char in text:
        if quoted:
            if char == '"':
                quoted = False
                tokens.append(word)
                word = ""
            else:
                word += char
        elif char == '"':
            quoted = True
        elif char in "{};" or char.isspace():
            if word:
                tokens.append(word)
                word = ""
            if not char.isspace():
                tokens.append(char)
        else:
            word += char
    out: list[list[object]] = []
    stack: list[list[str]] = []
    statement: list[str] = []
    for token in tokens:
        if token in (";", "{"):
            directive, args = statement[0], statement[1:]
            if directive != "proxy_pass":
                out.append([[part for frame in stack for part in frame], directive, args])
            if token == "{":
                stack.append([directive, *args])
            statement = []
        elif token == "}":
            stack.pop()
        else:
            statement.append(token)
    return out


def unit_settings(text: str) -> list[list[str]]:
    parser = configparser.ConfigParser(strict=False, interpolation=None)
    parser.optionxform = str  # type: ignore[assignment,method-assign]
    parser.read_string(text)
    return [[section, key, value] for section in parser.sections() for key, value in parser[section].items()]
