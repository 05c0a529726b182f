"""Runtime requirements: network, GPU, credentials, external binaries, dependencies, env vars,
OS/arch, destructive writes. Rules first; each value carries the evidence that produced it, and
the needs (network, GPU, credentials) also the evidence that was discounted and why."""

from __future__ import annotations

import re
from collections import defaultdict

from skillgym_core.contracts.skill import Annotation, Evidence

from skillgym_ingest.annotate.binaries import external_binaries
from skillgym_ingest.annotate.credentials import CREDENTIAL_RULES, credentials_annotation, key_variable_hits, qualified
from skillgym_ingest.annotate.deps import dependencies
from skillgym_ingest.annotate.gpu import GPU_RULES, gpu_annotation
from skillgym_ingest.annotate.network import NETWORK_RULES, network_annotation
from skillgym_ingest.annotate.qualifiers import Outline, outline
from skillgym_ingest.annotate.rules import Hit, RuleSet, rule
from skillgym_ingest.content import SCRIPT_LANGUAGES, SkillContent
from skillgym_ingest.spec import allowed_tools

ENV_RULES = [
    rule("runtime.env.python", r"os\.(?:environ(?:\.get)?\s*[\[(]|getenv\()\s*['\"]([A-Z][A-Z0-9_]{2,})['\"]",
         ["environ", "getenv"], "code", 0),
    rule("runtime.env.js", r"process\.env\.([A-Z][A-Z0-9_]{2,})", ["process.env"], "code", 0),
    rule("runtime.env.shell", r"\$\{?([A-Z][A-Z0-9_]*(?:API_KEY|TOKEN|SECRET|PASSWORD|_KEY|_URL))\}?|"
         r"\bexport\s+([A-Z][A-Z0-9_]{2,})=", ["$", "export"], "all", 0, anchors=["$", "export"]),
]
OS_RULES = [
    rule("runtime.os.macos", r"\bmacOS(?: only)?\b|\bosascript\b|\bbrew install\b|\bsys\.platform\s*==\s*['\"]darwin|"
         r"\bApple Silicon\b|\bpbcopy\b", ["macos", "osascript", "brew", "darwin", "apple silicon", "pbcopy"]),
    rule("runtime.os.windows", r"\bWindows(?: only)?\b|\bpowershell\b|\bwinreg\b|\bwin32api\b|\.exe\b|\bcmd\.exe\b",
         ["windows", "powershell", "winreg", "win32", ".exe"]),
    rule("runtime.os.linux", r"\bsystemctl\b|\bjournalctl\b|\bapt(?:-get)? install\b|\b/proc/\w|\bLinux only\b",
         ["systemctl", "journalctl", "apt", "/proc/", "linux only"]),
    rule("runtime.arch.arm64", r"\b(?:arm64|aarch64)\b", ["arm64", "aarch64"]),
    rule("runtime.arch.x86_64", r"\b(?:x86_64|amd64)\b", ["x86_64", "amd64"]),
]
DESTRUCTIVE_RULES = [
    rule("runtime.destructive.rm_outside", r"\brm\s+-[a-zA-Z]*[rf][a-zA-Z]*\s+(?:--no-preserve-root\s+)?"
         r"(?:/(?:\s|$|\*|etc|usr|var|bin|boot|home|opt|lib|root|System|Library)|~|\$HOME|\$\{HOME\})",
         ["rm "]),
    rule("runtime.destructive.system_write", r"(?:>>?|\btee\s+(?:-a\s+)?)\s*(?:/etc/|/usr/|/boot/|/bin/|/sbin/|/lib/|"
         r"/System/|~/\.(?:bashrc|zshrc|profile|ssh)|\$HOME/\.(?:bashrc|zshrc|profile|ssh))",
         ["/etc/", "/usr/", "/boot/", "/bin/", "/sbin/", "/lib/", "/system/", "bashrc", "zshrc", "profile", ".ssh"]),
    rule("runtime.destructive.disk", r"\b(?:mkfs(?:\.\w+)?|fdisk|wipefs)\b|\bdd\s+[^\n]*\bof=/dev/", ["mkfs", "fdisk",
         "wipefs", "of=/dev/"]),
    rule("runtime.destructive.python_outside", r"\b(?:shutil\.rmtree|os\.remove|os\.unlink|os\.rmdir)\(\s*"
         r"(?:['\"](?:/|~)|os\.path\.expanduser|Path\.home\(\))", ["rmtree", "os.remove", "os.unlink", "os.rmdir"],
         "code"),
    rule("runtime.destructive.chmod_root", r"\bchmod\s+-R\s+\d+\s+/(?:\s|$)|\bchown\s+-R\s+\S+\s+/(?:\s|$)",
         ["chmod", "chown"]),
]


def _annotation(value: object, hits: list[Hit], rule_name: str | None = None) -> Annotation:
    evidence = [h.evidence() for h in hits[:20]] or ([Evidence(rule=rule_name)] if rule_name else [])
    return Annotation(value=value, evidence=evidence)


RUNTIME_RULES = RuleSet(NETWORK_RULES + GPU_RULES + CREDENTIAL_RULES + ENV_RULES + OS_RULES + DESTRUCTIVE_RULES)


def annotate_runtime(content: SkillContent, hits: list[Hit] | None = None) -> dict[str, Annotation]:
    """``hits`` may come from a combined scan; only ``runtime.*`` hits are read."""
    if hits is None:
        hits = RUNTIME_RULES.scan(content)
    hits = [h for h in hits if h.rule.startswith("runtime.")]
    by_prefix: dict[str, list[Hit]] = defaultdict(list)
    for hit in hits:
        by_prefix[hit.rule.rsplit(".", 1)[0]].append(hit)

    needs = ("runtime.network", "runtime.gpu", "runtime.credentials", "runtime.env")
    # Most skills have no need signals at all; only those that do have their SKILL.md outlined.
    shape = outline(content) if any(by_prefix[p] for p in needs) else Outline(content.skill_md_path, [], [], [])
    tools = allowed_tools(content.parsed.front_matter)
    network_tools = [t for t in tools if t.split("(")[0] in {"WebFetch", "WebSearch"}]
    env_names = _env_names(by_prefix["runtime.env"])
    api_keys = sorted(n for n in env_names if any(s in n for s in ("KEY", "TOKEN", "SECRET", "PASSWORD")))
    needed, discounted = qualified(by_prefix["runtime.credentials"], key_variable_hits(by_prefix["runtime.env"], shape),
                                   shape)
    os_hits = by_prefix["runtime.os"] + by_prefix["runtime.arch"]
    os_mentioned = sorted({h.rule.split(".")[2] for h in by_prefix["runtime.os"]})
    os_only = sorted({h.rule.split(".")[2] for h in by_prefix["runtime.os"]
                      if _is_script(h.file) or " only" in h.excerpt.lower()})
    binaries, binary_evidence = external_binaries(content)
    deps_value, deps_evidence = dependencies(content)
    destructive_hits = by_prefix["runtime.destructive"]
    return {
        "network": network_annotation(by_prefix["runtime.network"], shape, network_tools=network_tools,
                                      credential_hits=needed,
                                      data_builders=data_builders(content, by_prefix["runtime.network"])),
        "gpu": gpu_annotation(by_prefix["runtime.gpu"], shape),
        "credentials": credentials_annotation(needed, discounted),
        "external_binaries": Annotation(value=binaries, evidence=binary_evidence[:20]),
        "dependencies": Annotation(value=deps_value, evidence=deps_evidence[:20]),
        "env_vars": _annotation({"names": env_names, "api_keys": api_keys}, by_prefix["runtime.env"],
                                "runtime.env.none_found"),
        "os_arch": _annotation(
            {"os": os_mentioned, "limited_to": os_only if len(os_only) == 1 else [],
             "arch": sorted({h.rule.split(".")[2] for h in by_prefix["runtime.arch"]})},
            os_hits, "runtime.os.none_found"),
        "destructive_writes": _annotation({"outside_workdir": bool(destructive_hits)}, destructive_hits,
                                          "runtime.destructive.none_found"),
    }


# a script that (re)builds the data a skill ships: "build-database.js", "update_index.py", "fetch-data.sh"
_DATA_BUILDER = re.compile(r"(?:build|rebuild|update|refresh|regenerate|generate|sync|scrape|fetch|download|crawl|import)"
                           r"[-_]?(?:the[-_])?(?:db|database|data|dataset|index|cache|catalog)s?$", re.IGNORECASE)


def data_builders(content: SkillContent, hits: list[Hit]) -> frozenset[str]:
    """Scripts with hits that rebuild the skill's bundled data and that no other file of the skill
    names: the maintainer's tool beside the skill, not a step of its procedure."""
    candidates = {h.file for h in hits if _is_script(h.file)
                  and _DATA_BUILDER.search(h.file.rsplit("/", 1)[-1].rsplit(".", 1)[0])}
    if not candidates or content.skill_md_path is None:
        return frozenset()
    others = [(content.skill_md_path, content.description + "\n" + content.body)]
    others += [(f.path, f.text) for f in content.text_files]
    unnamed = set()
    for path in candidates:
        name = path.rsplit("/", 1)[-1]
        stem = name.rsplit(".", 1)[0]
        if not any(other != path and (name in text or stem in text) for other, text in others):
            unnamed.add(path)
    return frozenset(unnamed)


def _is_script(path: str) -> bool:
    return ("." + path.rsplit(".", 1)[-1].lower()) in SCRIPT_LANGUAGES if "." in path else False


def _env_names(hits: list[Hit]) -> list[str]:
    names: set[str] = set()
    for hit in hits:
        for item in ENV_RULES:
            if item.rule == hit.rule:
                for match in item.pattern.finditer(hit.excerpt):
                    names.update(g for g in match.groups() if g)
    return sorted(names - {"HOME", "PATH", "USER", "PWD", "SHELL", "TMPDIR", "LANG"})
