"""Runtime requirements: network, GPU, external binaries, dependencies, env vars, OS/arch,
destructive writes. Rules first; each value carries the evidence that produced it."""

from __future__ import annotations

from collections import defaultdict

from skillgym_core.contracts.skill import Annotation, Evidence

from skillgym_ingest.annotate.binaries import external_binaries
from skillgym_ingest.annotate.deps import dependencies
from skillgym_ingest.annotate.rules import Hit, RuleSet, rule
from skillgym_ingest.content import SCRIPT_LANGUAGES, SkillContent
from skillgym_ingest.spec import allowed_tools

_NOT_LOCAL = r"(?!localhost|127\.|0\.0\.0\.0|\[::1\]|example\.(?:com|org))"

NETWORK_RULES = [
    rule("runtime.network.python_http", r"\b(?:requests|httpx|aiohttp|urllib3)\.(?:get|post|put|patch|delete|request|"
         r"Session|Client|AsyncClient|ClientSession|PoolManager)\b|\burllib\.request\.urlopen|\burlopen\(",
         ["requests.", "httpx.", "aiohttp.", "urllib", "urlopen"], "code", human_docs=False),
    rule("runtime.network.js_http", r"\bfetch\(\s*[`'\"]https?://" + _NOT_LOCAL + r"|\baxios\.(?:get|post|create)\b|"
         r"\bhttps?\.get\(", ["fetch(", "axios.", ".get("], "code", human_docs=False,
         anchors=["fetch(", "axios.", "http"]),
    rule("runtime.network.download_command", r"\b(?:curl|wget)\b[^\n|]*?https?://" + _NOT_LOCAL,
         ["curl", "wget"], human_docs=False),
    rule("runtime.network.git_clone", r"\bgit\s+clone\s+(?:https?://|git@)", ["git clone"], human_docs=False),
    rule("runtime.network.web_tool", r"\b(?:WebFetch|WebSearch|web[_ ](?:search|fetch)|browse the web|search the web|"
         r"internet access|requires? (?:an? )?(?:internet|network) connection)\b",
         ["webfetch", "websearch", "web search", "web_search", "web_fetch", "web fetch", "browse the web",
          "search the web", "internet", "network connection"], "instructions", human_docs=False),
    rule("runtime.network.api_endpoint", r"https?://(?:api\.|[\w.-]*\.googleapis\.com|hooks\.slack\.com|"
         r"[\w.-]*\.amazonaws\.com|graph\.microsoft\.com)[\w./-]*", ["http"], "scripts"),
    rule("runtime.network.socket", r"\bsocket\.(?:create_connection|socket)\(|\bnew WebSocket\(|\bwebsockets?\.connect\(|"
         r"\bsmtplib\.SMTP(?:_SSL)?\(", ["socket", "smtplib"], "scripts"),
    rule("runtime.network.remote_cli", r"\b(?:gh\s+(?:pr|run|api|auth|repo|issue|release|workflow)|"
         r"gcloud\s+[a-z]|aws\s+(?:s3|ec2|lambda|iam|sts|configure|cloudformation|ecr|eks)\b|"
         r"az\s+(?:login|account|group|vm|storage|aks)|git\s+(?:push|pull|fetch)|"
         r"docker\s+(?:pull|push|login))\b",
         ["gh ", "gcloud ", "aws ", "az ", "git push", "git pull", "git fetch", "docker pull", "docker push",
          "docker login"], "instructions", human_docs=False),
    rule("runtime.network.mcp", r"\bmcp__\w+|\bMCP server\b|`[A-Z][A-Za-z]+:[a-z][a-z0-9]*(?:-[a-z0-9]+)+`",
         ["mcp", "`"], "instructions", human_docs=False, anchors=["mcp", "`"]),
]
NETWORK_INSTALL_RULES = [
    rule("runtime.network.install_time", r"\b(?:pip3?|uv pip|npm|pnpm|yarn|apt(?:-get)?|brew|cargo|gem|conda)\s+"
         r"(?:install|add|i)\b", ["install", " add", " i "]),
]
GPU_REQUIRED_RULES = [
    rule("runtime.gpu.cuda_device", r"\.cuda\(\)|\bdevice\s*=\s*['\"]cuda|['\"]cuda:\d['\"]|\bto\(['\"]cuda",
         ["cuda"], "code"),
    rule("runtime.gpu.nvidia_tooling", r"\bnvidia-smi\b|\bCUDA_VISIBLE_DEVICES\b|--gpus\b|\bnvcc\b",
         ["nvidia-smi", "cuda_visible_devices", "--gpus", "nvcc"]),
    rule("runtime.gpu.gpu_library", r"\b(?:vllm|flash_attn|cupy|tensorrt|bitsandbytes|xformers|triton)\b",
         ["vllm", "flash_attn", "cupy", "tensorrt", "bitsandbytes", "xformers", "triton"], "code"),
    rule("runtime.gpu.stated", r"\b(?:requires?|needs?|must have)\s+(?:an?\s+)?(?:NVIDIA\s+|CUDA[- ]capable\s+)?GPU\b|"
         r"\bGPU\s+(?:is\s+)?required\b|\baccelerator\s*=\s*['\"]gpu", ["gpu"]),
]
GPU_OPTIONAL_RULES = [
    rule("runtime.gpu.fallback", r"cuda\.is_available\(\)|\bGPU\s+(?:is\s+)?optional\b|\bif (?:you have )?a GPU\b|"
         r"\bfalls? back to (?:the )?CPU\b|\bCPU[- ]only\b|--device\s+cpu",
         ["is_available", "optional", "a gpu", "cpu"]),
]
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


RUNTIME_RULES = RuleSet(
    NETWORK_RULES + NETWORK_INSTALL_RULES + GPU_REQUIRED_RULES + GPU_OPTIONAL_RULES + ENV_RULES + OS_RULES
    + DESTRUCTIVE_RULES
)


def annotate_runtime(content: SkillContent, hits: list[Hit] | None = None) -> dict[str, Annotation]:
    """``hits`` may come from a combined scan; only ``runtime.*`` hits are read."""
    if hits is None:
        hits = RUNTIME_RULES.scan(content)
    hits = [h for h in hits if h.rule.startswith("runtime.")]
    by_prefix: dict[str, list[Hit]] = defaultdict(list)
    for hit in hits:
        by_prefix[hit.rule.rsplit(".", 1)[0]].append(hit)

    tools = allowed_tools(content.parsed.front_matter)
    net_tools = [t for t in tools if t.split("(")[0] in {"WebFetch", "WebSearch"}]
    network_hits = [h for h in by_prefix["runtime.network"] if h.rule != "runtime.network.install_time"]
    env_names = _env_names(by_prefix["runtime.env"])
    api_keys = sorted(n for n in env_names if any(s in n for s in ("KEY", "TOKEN", "SECRET", "PASSWORD")))
    # A credential the skill itself reads (script) or tells the user to export: a remote service.
    service_keys = sorted(
        n for n in _env_names([h for h in by_prefix["runtime.env"]
                               if (h.rule in {"runtime.env.python", "runtime.env.js"} and _is_script(h.file))
                               or h.excerpt.lstrip().startswith("export ")])
        if any(s in n for s in ("API_KEY", "TOKEN", "ACCESS_KEY"))
    )
    network_value = {
        "required": bool(network_hits or net_tools or service_keys),
        "install_time": any(h.rule == "runtime.network.install_time" for h in hits),
        "signals": sorted({h.rule.rsplit(".", 1)[1] for h in network_hits}
                          | ({"allowed_tools"} if net_tools else set()) | ({"api_key"} if service_keys else set())),
    }
    network_evidence = network_hits + [h for h in by_prefix["runtime.env"] if any(k in h.excerpt for k in service_keys)]

    gpu_hits = by_prefix["runtime.gpu"]
    required_files = {h.file for h in gpu_hits if h.rule != "runtime.gpu.fallback"}
    fallback_files = {h.file for h in gpu_hits if h.rule == "runtime.gpu.fallback"}
    gpu_value = {"required": bool(required_files - fallback_files), "mentioned": bool(gpu_hits)}

    os_hits = by_prefix["runtime.os"] + by_prefix["runtime.arch"]
    os_mentioned = sorted({h.rule.split(".")[2] for h in by_prefix["runtime.os"]})
    os_only = sorted({h.rule.split(".")[2] for h in by_prefix["runtime.os"]
                      if _is_script(h.file) or " only" in h.excerpt.lower()})
    binaries, binary_evidence = external_binaries(content)
    deps_value, deps_evidence = dependencies(content)
    destructive_hits = by_prefix["runtime.destructive"]
    return {
        "network": _annotation(network_value, network_evidence, "runtime.network.none_found"),
        "gpu": _annotation(gpu_value, gpu_hits, "runtime.gpu.none_found"),
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
