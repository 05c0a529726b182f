"""The small application repository a security-audit instance audits: Python and JS modules,
env files, YAML settings, a Dockerfile and an nginx TLS block, with planted insecure defaults at
known lines, look-alike safe patterns next to them, and (by knob) files in out-of-scope places,
defaults traced across modules, and files that cannot be audited."""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from pathlib import PurePosixPath

from skillgym_builder.families.security_audit_snippets import (
    FILLER_JS,
    FILLER_PY,
    JS_HEADER,
    PY_HEADER,
    Block,
    ConfigLine,
    Names,
    config_lines,
    js_decoys,
    js_finding,
    py_decoys,
    py_finding,
    render_config,
    traced_blocks,
)

CATEGORIES = ("fallback-secret", "hardcoded-credential", "weak-crypto", "permissive-default", "weak-tls")
SEVERITY = {"fallback-secret": "critical", "hardcoded-credential": "critical", "weak-crypto": "high",
            "permissive-default": "medium", "weak-tls": "high"}
SEVERITIES = ("critical", "high", "medium", "low")
PRODUCTION_ENV = "deploy/production.env"
PY_MODULES = ["app/settings.py", "app/auth.py", "app/storage.py", "app/billing.py", "app/notify.py", "app/admin.py",
              "app/reports.py", "app/uploads.py"]
JS_MODULES = ["web/src/server.js", "web/src/session.ts", "web/src/payments.ts", "web/src/client.js",
              "web/src/webhooks.ts"]
CODE_KINDS = {"fallback-secret": ["fallback"], "hardcoded-credential": ["credential"],
              "weak-crypto": ["hash", "ecb", "static_iv"], "permissive-default": ["permissive"]}


@dataclass
class Repo:
    files: dict[str, bytes] = field(default_factory=dict)
    findings: list[dict[str, object]] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)
    decoy_files: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class Exclusions:
    dirs: tuple[str, ...]
    suffixes: tuple[str, ...]

    def covers(self, path: str) -> bool:
        parts = PurePosixPath(path).parts
        return any(part in self.dirs for part in parts[:-1]) or any(parts[-1].endswith(s) for s in self.suffixes)


def _lay_out(path: str, blocks: list[Block]) -> tuple[bytes, list[tuple[int, str, str]]]:
    """The module's bytes and its planted (line, category, env var) marks."""
    python = path.endswith(".py")
    imports = sorted({line for block in blocks for line in block.imports})
    lines = [*(PY_HEADER if python else JS_HEADER), *imports]
    marks = []
    for block in blocks:
        lines += ["", ""] if python else [""]
        marks += [(len(lines) + offset + 1, category, env) for offset, category, env in block.marks]
        lines += block.lines
    return ("\n".join(lines) + "\n").encode(), marks


def _spread(rng: random.Random, modules: list[str], blocks: list[Block], filler: list[list[str]],
            per_file: int) -> dict[str, list[Block]]:
    count = max(1, min(len(modules), -(-len(blocks) // per_file)))
    chosen = modules[:count]
    out: dict[str, list[Block]] = {m: [Block(list(rng.choice(filler)))] for m in chosen}
    for index, block in enumerate(blocks):
        out[chosen[index % count]].append(block)
    for module in chosen:
        rng.shuffle(out[module])
    return out


def _choose(rng: random.Random, count: int, config: list[ConfigLine]) -> tuple[list[str], set[str]]:
    """(code finding kinds, planted config keys): one weak TLS line and one of every code
    category first, then a mix until ``count`` findings."""
    spare = [line.key for line in config]
    rng.shuffle(spare)
    planted = {next(key for key in spare if key.startswith("tls_"))}
    spare = [key for key in spare if key not in planted]
    code = [rng.choice(CODE_KINDS[category]) for category in rng.sample(list(CODE_KINDS), len(CODE_KINDS))]
    while len(code) + len(planted) < count:
        if spare and rng.random() < 0.3:
            planted.add(spare.pop())
        else:
            code.append(rng.choice([kind for kinds in CODE_KINDS.values() for kind in kinds]))
    return code, planted


def generate(rng: random.Random, knobs: dict[str, float], exclusions: Exclusions) -> Repo:
    count, noise = int(knobs["record_count"]), float(knobs["noise_level"])
    traced, decoys, broken = int(knobs["multi_step"]), int(knobs["distractor_files"]), int(knobs["error_recovery"])
    names = Names(rng)
    config = config_lines(names, rng.random() < noise)
    code, planted = _choose(rng, count, config)
    py_blocks: list[Block] = []
    js_blocks: list[Block] = []
    for kind in code:
        noisy = rng.random() < noise
        if rng.random() < 0.6:
            py_blocks.append(py_finding(rng, names, kind, noisy))
        else:
            js_blocks.append(js_finding(rng, names, kind, noisy))
    repo = Repo()
    if traced:
        extra, helpers = traced_blocks(rng, names, noise)
        py_blocks += extra
        repo.files.update(helpers)
    py_blocks += py_decoys(rng, names, noise)
    js_blocks += js_decoys(rng, names, noise)
    marks: dict[str, list[tuple[int, str, str]]] = {}
    for path, blocks in _spread(rng, PY_MODULES, py_blocks, FILLER_PY, 4).items():
        repo.files[path], marks[path] = _lay_out(path, blocks)
    for path, blocks in _spread(rng, JS_MODULES, js_blocks, FILLER_JS, 4).items():
        repo.files[path], marks[path] = _lay_out(path, blocks)
    for path, rows in render_config(config, planted).items():
        repo.files[path] = ("\n".join(line for line, _ in rows) + "\n").encode()
        marks[path] = [(index + 1, category, "") for index, (_, category) in enumerate(rows) if category]
    if decoys:
        _add_out_of_scope(rng, names, repo, exclusions, decoys, config)
    if broken:
        _add_unreadable(rng, names, repo)
    in_scope = {path: found for path, found in sorted(marks.items()) if not exclusions.covers(path)}
    fallbacks = sorted(env for found in in_scope.values() for _, category, env in found if env)
    injected = set(rng.sample(fallbacks, len(fallbacks) // 2)) if traced else set()
    repo.files[PRODUCTION_ENV] = _production_env(sorted(injected))
    for path, found in in_scope.items():
        for line, category, env in found:
            severity = "high" if env in injected else SEVERITY[category]
            repo.findings.append({"file": path, "line": line, "category": category, "severity": severity})
    return repo


def _production_env(injected: list[str]) -> bytes:
    lines = ["# Variables the production deployment injects; values are secret-manager references.",
             "PORT=8080", "LOG_LEVEL=warning"]
    lines += [f"{var}=vault:kv/prod/{var.lower().replace('_', '-')}" for var in injected]
    return ("\n".join(lines) + "\n").encode()


def _add_out_of_scope(rng: random.Random, names: Names, repo: Repo, exclusions: Exclusions, level: int,
                      config: list[ConfigLine]) -> None:
    """Insecure-looking code where the rules say not to look: fixtures in excluded folders and
    example copies of the config; at the higher level more of them plus clean helper modules."""
    dirs = [d for d in exclusions.dirs if d not in ("app", "web", "config", "deploy", "out")]
    for folder in rng.sample(dirs, min(level, len(dirs))):
        py = py_finding(rng, names, "fallback", False).lines + py_finding(rng, names, "credential", False).lines
        path = f"{folder}/fixtures_settings.py"
        repo.files[path] = ("\n".join([*PY_HEADER, "", *py]) + "\n").encode()
        repo.decoy_files.append(path)
        js = js_finding(rng, names, "fallback", False).lines + js_finding(rng, names, "hash", False).lines
        path = f"{folder}/session.fixture.js"
        repo.files[path] = ("\n".join([*JS_HEADER, "", *js]) + "\n").encode()
        repo.decoy_files.append(path)
    insecure = render_config(config, {line.key for line in config})
    for suffix in rng.sample(list(exclusions.suffixes), min(level, len(exclusions.suffixes))):
        for source in (".env", "config/settings.yaml"):
            path = source + suffix
            repo.files[path] = ("\n".join(line for line, _ in insecure[source]) + "\n").encode()
            repo.decoy_files.append(path)
    if level > 1:
        blocks = [*(Block(list(lines)) for lines in rng.sample(FILLER_PY, 2)), *py_decoys(rng, names, 1.0)]
        repo.files["app/utils.py"], _ = _lay_out("app/utils.py", blocks)


def _add_unreadable(rng: random.Random, names: Names, repo: Repo) -> None:
    """A Python module that does not parse and a JS file that is not UTF-8, each with an insecure
    line an auditor cannot vouch for."""
    planted = py_finding(rng, names, "fallback", False).lines
    text = "\n".join([*PY_HEADER, "", *planted, "", "def legacy_banner():", '    print "session store v1"', ""])
    repo.files["app/legacy_session.py"] = text.encode()
    planted_js = js_finding(rng, names, "fallback", False).lines
    body = "\n".join(["// Cach\udce9 des jetons de session (ancienne version)", *JS_HEADER, "", *planted_js, ""])
    repo.files["web/src/legacy-cache.js"] = body.encode("utf-8", "surrogateescape")
    repo.skipped = sorted(["app/legacy_session.py", "web/src/legacy-cache.js"])
