"""Code and configuration snippets for the security-audit repository: each planted insecure line
in a clean and a noisy spelling, look-alike safe lines, and the config files with lines that are
either planted or written safely. Every planted finding sits on one line of its own."""

from __future__ import annotations

import random
import re
from dataclasses import dataclass, field

SECRET_ENV = ["SECRET_KEY", "JWT_SECRET", "SESSION_SECRET", "API_TOKEN", "SIGNING_KEY", "WEBHOOK_SECRET",
              "ENCRYPTION_KEY", "CSRF_SECRET", "OAUTH_CLIENT_SECRET", "INTERNAL_API_KEY", "REFRESH_TOKEN_SECRET",
              "STRIPE_SECRET_KEY", "ADMIN_TOKEN", "CACHE_SECRET", "MAILER_API_KEY", "SENTRY_AUTH_TOKEN"]
CREDENTIALS = ["DB_PASSWORD", "ADMIN_PASSWORD", "SMTP_PASSWORD", "STRIPE_API_KEY", "AWS_SECRET_ACCESS_KEY",
               "REDIS_PASSWORD", "LDAP_BIND_PASSWORD", "MAPS_API_KEY", "GITHUB_TOKEN", "SLACK_BOT_TOKEN"]
FALLBACKS = ["changeme", "dev-secret", "insecure-default", "local-only", "please-change-me", "default-key", "test1234",
             "secret", "dev", "not-for-prod"]
WORDS = ["Winter", "Harbor", "Falcon", "Copper", "Maple", "Orbit", "Tundra", "Velvet"]
PY_HEADER = ["import hashlib", "import os", "from os import environ, getenv", "", "from Crypto.Cipher import AES"]
JS_HEADER = ["const crypto = require('crypto');", "const fs = require('fs');", "const cors = require('cors');",
             "const express = require('express');", "", "const app = express();"]
FILLER_PY = [
    ["def paginate(items, page, size=20):", "    start = (page - 1) * size", "    return items[start:start + size]"],
    ["def slugify(title):", "    return \"-\".join(title.lower().split())"],
    ["def clamp(value, low, high):", "    return max(low, min(high, value))"],
    ["def chunked(values, size):", "    for start in range(0, len(values), size):", "        yield values[start:start + size]"],
]
FILLER_JS = [
    ["function paginate(items, page, size = 20) {", "  return items.slice((page - 1) * size, page * size);", "}"],
    ["function slugify(title) {", "  return title.toLowerCase().split(/\\s+/).join('-');", "}"],
    ["app.get('/health', (req, res) => res.json({ ok: true }));"],
]


@dataclass
class Block:
    lines: list[str]
    marks: list[tuple[int, str, str]] = field(default_factory=list)  # (index in lines, category, env var)
    imports: tuple[str, ...] = ()


def camel(name: str) -> str:
    head, *rest = name.lower().split("_")
    return head + "".join(part.title() for part in rest)


class Names:
    """Unique names and values for one repository."""

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng
        self.pools: dict[str, list[str]] = {"env": rng.sample(SECRET_ENV, len(SECRET_ENV)),
                                            "cred": rng.sample(CREDENTIALS, len(CREDENTIALS))}
        self.used: set[str] = set()
        self.serial = 0

    def take(self, pool: str) -> str:
        if self.pools[pool]:
            return self.pools[pool].pop()
        self.serial += 1
        return f"{self.rng.choice(SECRET_ENV if pool == 'env' else CREDENTIALS)}_{self.serial}"

    def once(self, key: str) -> bool:
        """True the first time ``key`` is asked for: variants that may appear once per repository."""
        fresh = key not in self.used
        self.used.add(key)
        return fresh

    def function(self, stem: str) -> str:
        self.serial += 1
        return f"{stem}_v{self.serial}" if not self.once(stem) else stem

    def fallback(self) -> str:
        return self.rng.choice(FALLBACKS)

    def credential_value(self) -> str:
        rng = self.rng
        return rng.choice([f"{rng.choice(WORDS)}-{rng.randint(1000, 9999)}!", f"sk_live_{rng.getrandbits(64):016x}",
                           f"{rng.choice(WORDS).lower()}{rng.randint(10, 99)}{rng.choice(WORDS)}"])


def _mark(lines: list[str], index: int, category: str, env: str = "", imports: tuple[str, ...] = ()) -> Block:
    return Block(lines, [(index, category, env)], imports)


def py_finding(rng: random.Random, names: Names, kind: str, noisy: bool) -> Block:
    if kind == "permissive":
        options = [o for o in ("debug", "cors", "hosts", "auth", "chmod") if names.once(f"py-permissive-{o}")]
        if not options:
            kind = "hash"
        else:
            return _py_permissive(rng, names, rng.choice(options), noisy)
    if kind == "fallback":
        env, lit = names.take("env"), names.fallback()
        lines = [f"{env}=os.getenv('{env}','{lit}')", f"{env} = getenv( \"{env}\" )  or  '{lit}'",
                 f"{env.lower()} = environ.get('{env}', '{lit}')"] if noisy else [
            f'{env} = os.getenv("{env}") or "{lit}"', f'{env} = os.environ.get("{env}", "{lit}")']
        return _mark([rng.choice(lines)], 0, "fallback-secret", env)
    if kind == "credential":
        name, value = names.take("cred"), names.credential_value()
        if noisy and rng.random() < 0.5:
            table = names.function("SERVICE_ACCOUNT")
            return _mark([f"{table} = {{", '    "user": "svc-app",', f'    "password": "{value}",', "}"], 2,
                         "hardcoded-credential")
        line = f"{name}: str = '{value}'" if noisy else f'{name} = "{value}"'
        return _mark([line], 0, "hardcoded-credential")
    arg = rng.choice(["password", "token", "secret"])
    if kind == "hash":
        algo = rng.choice(["md5", "sha1"])
        body = (f'    return hashlib.new("{algo}", {arg}.encode()).hexdigest()' if noisy
                else f"    return hashlib.{algo}({arg}.encode()).hexdigest()")
        return _mark([f"def {names.function('hash_' + arg)}({arg}):", body], 1, "weak-crypto")
    if kind == "ecb":
        call = "AES.new(key, mode=AES.MODE_ECB)" if noisy else "AES.new(key, AES.MODE_ECB)"
    else:
        call = 'AES.new(key, AES.MODE_CBC, iv=b"0123456789abcdef")' if noisy else 'AES.new(key, AES.MODE_CBC, b"\\x00" * 16)'
    return _mark([f"def {names.function('encrypt_record')}(key, data):", f"    cipher = {call}",
                  "    return cipher.encrypt(data)"], 1, "weak-crypto")


def _py_permissive(rng: random.Random, names: Names, option: str, noisy: bool) -> Block:
    if option == "chmod":
        return _mark([f"def {names.function('prepare_upload_dir')}(path):", "    os.makedirs(path, exist_ok=True)",
                      "    os.chmod(path, 0o777)"], 2, "permissive-default")
    if option == "auth":
        names.once("flag-AUTH_REQUIRED")  # the safe look-alike must not reuse the name
    line = {"debug": ("DEBUG=True", "DEBUG = True"),
            "cors": ("CORS_ALLOWED_ORIGINS = ['*']", 'CORS_ALLOWED_ORIGINS = ["*"]'),
            "hosts": ("ALLOWED_HOSTS=['*']", 'ALLOWED_HOSTS = ["*"]'),
            "auth": ("AUTH_REQUIRED = getenv('AUTH_REQUIRED') or 'false'", 'AUTH_REQUIRED = os.getenv("AUTH_REQUIRED", "false")'),
            }[option][0 if noisy else 1]
    return _mark([line], 0, "permissive-default")


def py_decoys(rng: random.Random, names: Names, noise: float) -> list[Block]:
    """Safe lines that look like findings: a secret that must be set, non-secret defaults, a
    security flag that defaults to on, an MD5 checksum of content."""
    env = names.take("env")
    noisy = rng.random() < noise
    blocks = [Block([f"{env} = environ['{env}']" if noisy else f'{env} = os.environ["{env}"]']),
              Block([rng.choice(['PORT = int(os.getenv("PORT", "8000"))', 'LOG_LEVEL = os.getenv("LOG_LEVEL") or "info"',
                                 "WORKERS = int(os.environ.get('WORKERS', '4'))"])]),
              Block([f"def {names.function('etag_for')}(body):", "    return hashlib.md5(body).hexdigest()"]),
              Block(["PASSWORD_MIN_LENGTH = 12"])]
    if names.once("flag-AUTH_REQUIRED"):
        blocks.append(Block(['AUTH_REQUIRED = os.getenv("AUTH_REQUIRED", "true")']))
    return blocks


def js_finding(rng: random.Random, names: Names, kind: str, noisy: bool) -> Block:
    if kind == "permissive":
        options = [o for o in ("cors", "chmod") if names.once(f"js-permissive-{o}")]
        if options:
            line = ("app.use(cors({ origin: '*' }));" if options[0] == "cors"
                    else "fs.chmodSync(uploadDir, 0o777);")
            lines = [line] if options[0] == "cors" else ["const uploadDir = '/var/app/uploads';", line]
            return _mark(lines, len(lines) - 1, "permissive-default")
        kind = "hash"
    if kind == "fallback":
        env, lit = names.take("env"), names.fallback()
        var = camel(env)
        lines = [f'const {var}=process.env["{env}"]||"{lit}";', f"let {var} = process.env.{env}  ||  '{lit}'"] if noisy \
            else [f"const {var} = process.env.{env} || '{lit}';", f'const {var} = process.env.{env} ?? "{lit}";']
        return _mark([rng.choice(lines)], 0, "fallback-secret", env)
    if kind == "credential":
        name, value = names.take("cred"), names.credential_value()
        if noisy:
            table = camel(names.function("mail_options"))
            return _mark([f"const {table} = {{", "  host: 'smtp.internal',", "  user: 'mailer',",
                          f"  password: '{value}',", "};"], 3, "hardcoded-credential")
        return _mark([f'const {camel(name)} = "{value}";'], 0, "hardcoded-credential")
    arg = rng.choice(["password", "token", "secret"])
    fn = camel(names.function("digest_" + arg))
    if kind == "hash":
        algo = rng.choice(["md5", "sha1"])
        call = (f'crypto.createHash("{algo}").update(String({arg})).digest("hex")' if noisy
                else f"crypto.createHash('{algo}').update({arg}).digest('hex')")
        return _mark([f"function {fn}({arg}) {{", f"  return {call};", "}"], 1, "weak-crypto")
    fn = camel(names.function("seal_payload"))
    cipher = ("crypto.createCipheriv('aes-128-ecb', key, null)" if kind == "ecb" else
              "crypto.createCipheriv('aes-256-cbc', key, Buffer.from('0000000000000000'))" if noisy else
              "crypto.createCipheriv('aes-256-cbc', key, Buffer.alloc(16, 0))")
    return _mark([f"function {fn}(key, data) {{", f"  const cipher = {cipher};",
                  "  return Buffer.concat([cipher.update(data), cipher.final()]);", "}"], 1, "weak-crypto")


def js_decoys(rng: random.Random, names: Names, noise: float) -> list[Block]:
    env = names.take("env")
    var = camel(env)
    blocks = [Block([f"const {var} = process.env.{env};", f"if (!{var}) throw new Error('{env} is required');"]),
              Block(["const port = process.env.PORT || 3000;"]),
              Block([f"function {camel(names.function('etag'))}(buffer) {{",
                     "  return crypto.createHash('sha1').update(buffer).digest('hex');", "}"])]
    if names.once("js-permissive-cors"):
        blocks.append(Block(["app.use(cors({ origin: ['https://app.example.com'] }));"]))
    return blocks


def traced_blocks(rng: random.Random, names: Names, noise: float) -> tuple[list[Block], dict[str, bytes]]:
    """Fallbacks whose default lives in another module: a constant and a helper that returns a
    development value (fail-open), and a helper that raises (fail-secure, not a finding)."""
    open_const, open_call, closed = names.take("env"), names.take("env"), names.take("env")
    key = rng.choice(["signing", "webhook", "session"])
    defaults = ['"""Values that let the service start on a laptop."""', "",
                f'LOCAL_FALLBACK = "{names.fallback()}-local"',
                '_DEV_VALUES = {"signing": "dev-signing", "webhook": "dev-webhook", "session": "dev-session"}', "", "",
                "def dev_default(name):", '    return _DEV_VALUES.get(name, "dev")']
    guards = ['"""Start-up checks."""', "", "", "def require(name):",
              '    raise RuntimeError(f"{name} must be set before the service starts")']
    helpers = ("from app.defaults import LOCAL_FALLBACK, dev_default", "from app.guards import require")
    blocks = [
        _mark([f'{open_const} = os.environ.get("{open_const}", LOCAL_FALLBACK)'], 0, "fallback-secret", open_const,
              helpers),
        _mark([f'{open_call} = getenv("{open_call}") or dev_default("{key}")'], 0, "fallback-secret", open_call,
              helpers),
        Block([f'{closed} = os.getenv("{closed}") or require("{closed}")'], imports=helpers),
    ]
    files = {"app/defaults.py": ("\n".join(defaults) + "\n").encode(), "app/guards.py": ("\n".join(guards) + "\n").encode()}
    return blocks, files


@dataclass(frozen=True)
class ConfigLine:
    """A config line that is planted (insecure) or written safely."""

    key: str
    file: str
    category: str
    planted: str
    safe: str


def config_lines(names: Names, noisy: bool) -> list[ConfigLine]:
    value = names.credential_value
    return [
        ConfigLine("env_cred", ".env", "hardcoded-credential", f"DB_PASSWORD={value()}", "# DB_PASSWORD comes from the vault"),
        ConfigLine("env_debug", ".env", "permissive-default", "DEBUG=True" if noisy else "DEBUG=true", "DEBUG=false"),
        ConfigLine("yaml_debug", "config/settings.yaml", "permissive-default", "  debug: true", "  debug: false"),
        ConfigLine("yaml_cors", "config/settings.yaml", "permissive-default",
                   "  allowed_origins: ['*']" if noisy else '  allowed_origins: "*"',
                   '  allowed_origins: ["https://app.example.com"]'),
        ConfigLine("yaml_cred", "config/settings.yaml", "hardcoded-credential", f'  password: "{value()}"',
                   "  password_env: ADMIN_PASSWORD"),
        ConfigLine("docker_cred", "Dockerfile", "hardcoded-credential", f"ENV ADMIN_PASSWORD={value()}",
                   "ENV APP_ENV=production"),
        ConfigLine("docker_debug", "Dockerfile", "permissive-default", "ENV FLASK_DEBUG=1", "ENV FLASK_DEBUG=0"),
        ConfigLine("tls_protocols", "deploy/nginx.conf", "weak-tls",
                   "    ssl_protocols  SSLv3 TLSv1.2 ;" if noisy else "    ssl_protocols TLSv1 TLSv1.1 TLSv1.2;",
                   "    ssl_protocols TLSv1.2 TLSv1.3;"),
        ConfigLine("tls_ciphers", "deploy/nginx.conf", "weak-tls",
                   "    ssl_ciphers HIGH:!aNULL:RC4-SHA;" if noisy else "    ssl_ciphers 'RC4-SHA:DES-CBC3-SHA:HIGH';",
                   "    ssl_ciphers HIGH:!aNULL:!MD5:!RC4;"),
    ]


CONFIG_LAYOUT = {
    ".env": ["# Settings docker compose loads for the app container", "APP_ENV=production", "PORT=8000",
             "LOG_LEVEL=info", "DB_HOST=db.internal", "DB_USER=app", "{env_cred}", "{env_debug}"],
    "config/settings.yaml": ["server:", "  host: 0.0.0.0", "  port: 8000", "{yaml_debug}", "security:", "{yaml_cors}",
                             "  session_cookie_secure: true", "admin:", "  username: admin", "{yaml_cred}"],
    "Dockerfile": ["FROM python:3.11-slim", "WORKDIR /srv/app", "COPY requirements.txt .",
                   "RUN pip install --no-cache-dir -r requirements.txt", "COPY . .", "{docker_cred}", "{docker_debug}",
                   "EXPOSE 8000", 'CMD ["gunicorn", "app.server:app", "--bind", "0.0.0.0:8000"]'],
    "deploy/nginx.conf": ["server {", "    listen 80;", "    server_name app.example.com;",
                          "    return 301 https://$host$request_uri;", "}", "", "server {", "    listen 443 ssl;",
                          "    server_name app.example.com;", "    ssl_certificate /etc/nginx/tls/app.crt;",
                          "    ssl_certificate_key /etc/nginx/tls/app.key;", "{tls_protocols}", "{tls_ciphers}",
                          "    ssl_prefer_server_ciphers on;", "    location / {", "        proxy_pass http://127.0.0.1:8000;",
                          "    }", "}"],
}
SLOT = re.compile(r"^\{(\w+)\}$")


def render_config(lines: list[ConfigLine], planted: set[str]) -> dict[str, list[tuple[str, str]]]:
    """Each config file as (line, category if planted else '')."""
    by_key = {line.key: line for line in lines}
    out: dict[str, list[tuple[str, str]]] = {}
    for path, layout in CONFIG_LAYOUT.items():
        rows = []
        for raw in layout:
            slot = SLOT.match(raw)
            if not slot:
                rows.append((raw, ""))
                continue
            line = by_key[slot.group(1)]
            rows.append((line.planted, line.category) if line.key in planted else (line.safe, ""))
        out[path] = rows
    return out
