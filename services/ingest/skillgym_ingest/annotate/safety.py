"""Safety screening: patterns of malicious or dangerous skills. Every finding is Evidence.

Destructive writes found by the runtime rules are copied here too (rule prefix
``safety.destructive``), so the safety list is the complete screen."""

from __future__ import annotations

import io
import re
import zipfile

from skillgym_core.contracts.skill import Annotation, Evidence

from skillgym_ingest.annotate.rules import Hit, RuleSet, has_run, rule
from skillgym_ingest.content import SkillContent

_BASE64 = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
SAFETY_RULES = [
    rule("safety.download_execute.pipe_shell",
         r"\b(?:curl|wget|iwr|Invoke-WebRequest)\b[^\n]*\|\s*(?:sudo\s+)?(?:ba|z|da)?sh\b|"
         r"\b(?:curl|wget)\b[^\n]*\|\s*(?:sudo\s+)?python3?\b", ["curl", "wget", "iwr", "invoke-webrequest"],
         human_docs=False),  # a README's install line is for the person installing, not a step the agent takes
    rule("safety.download_execute.process_substitution",
         r"\b(?:ba)?sh\s+<\(\s*(?:curl|wget)|\beval\s+\"?\$\((?:curl|wget)|\bpython3?\s+-c\s+\"?\$\((?:curl|wget)",
         ["<(", "eval", "$("]),
    rule("safety.download_execute.powershell", r"\b(?:iex|Invoke-Expression)\b[^\n]*(?:DownloadString|iwr|"
         r"Invoke-WebRequest|Net\.WebClient)", ["iex", "invoke-expression"]),
    rule("safety.download_execute.fetch_then_run", r"\b(?:curl|wget)\b[^\n]*(?:-o|-O|>)\s*(\S+)[^\n]*(?:&&|;|\n)\s*"
         r"(?:chmod\s+\+x\s+\S+\s*(?:&&|;)\s*)?(?:\./|sh\s+|bash\s+)", ["curl", "wget"]),
    rule("safety.encoded_payload.decode_exec", r"base64\s+(?:-d|--decode|-D)\b[^\n]*\|\s*(?:ba)?sh\b|"
         r"\b(?:exec|eval)\(\s*(?:base64\.b64decode|zlib\.decompress|marshal\.loads|codecs\.decode|bytes\.fromhex|"
         r"__import__\(['\"]base64)|\beval\(\s*(?:atob|Buffer\.from)\(", ["base64", "exec(", "eval("]),
    rule("safety.encoded_payload.blob", r"[A-Za-z0-9+/]{300,}={0,2}", [], "code", 0, guard=has_run(_BASE64, 300)),
    rule("safety.encoded_payload.hex_escapes", r"(?:\\x[0-9a-fA-F]{2}){40,}", ["\\x"], "code"),
    rule("safety.fake_prerequisite.untrusted_host",
         r"https?://(?:\d{1,3}(?:\.\d{1,3}){3}(?!\d)(?<!127\.0\.0\.1)|(?:bit\.ly|tinyurl\.com|t\.co|is\.gd|rentry\.co|"
         r"pastebin\.com|glot\.io|transfer\.sh|paste\.ee|hastebin\.com)/)\S*",
         ["http"]),
    rule("safety.fake_prerequisite.binary_download",
         # an address with a placeholder in it ({owner}, <repo>) is a template for the reader's own release
         r"\b(?:download|install|run)\b[^\n]{0,80}https?://[^\s{}<>]+\.(?:exe|msi|dmg|pkg|scr|bat|apk)\b",
         [".exe", ".msi", ".dmg", ".pkg", ".scr", ".bat", ".apk"]),
    rule("safety.fake_prerequisite.archive_password",
         r"\b(?:password|passcode|pass)\s*(?:is\b|[:=])\s*[`'\"]?\w+[`'\"]?[^\n]{0,60}\b(?:zip|archive|extract|unzip|7z|rar)\b|"
         # the archive's password is given ("password: x", "password is x"), not a document's protection named
         r"\b(?:zip|archive|extract|unzip|7z|rar)\b[^\n]{0,60}\bpassword\b\s*(?:is\b|[:=])\s*[`'\"]?\w+",
         ["password", "passcode", "pass:", "pass="]),
    # AWS's own documented example key ends in EXAMPLE
    rule("safety.secret.aws_key", r"\b(?:AKIA|ASIA)(?![0-9A-Z]{9}EXAMPLE\b)[0-9A-Z]{16}\b", ["akia", "asia"], "all", 0),
    rule("safety.secret.private_key", r"-----BEGIN (?:RSA |EC |DSA |OPENSSH |PGP )?PRIVATE KEY(?: BLOCK)?-----",
         ["private key"], "all", 0),
    rule("safety.secret.github_token", r"\b(?:ghp|gho|ghu|ghs|ghr)_[A-Za-z0-9]{36}\b|\bgithub_pat_[A-Za-z0-9_]{60,}",
         ["ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_"], "all", 0),
    rule("safety.secret.api_token", r"\bsk-(?:proj-|ant-)?[A-Za-z0-9_-]{32,}|\bxox[abprs]-[A-Za-z0-9-]{20,}|"
         r"\bAIza[0-9A-Za-z_-]{35}\b|\bglpat-[A-Za-z0-9_-]{20}\b", ["sk-", "xox", "aiza", "glpat-"], "all", 0),
    rule("safety.secret.assignment", r"(?i:\b(?:api[_-]?key|secret|password|passwd|token)\b)\s*[:=]\s*['\"]"
         # words joined by hyphens ('plain-text-password') name a value in an example, they are no secret
         r"(?!(?i:your|xxx|<|\$|\{|example|changeme|placeholder|test|dummy|none|null|\*))(?![a-z]+(?:[-_][a-z]+)+['\"])"
         r"[A-Za-z0-9_\-+/=]{16,}['\"]",
         ["key", "secret", "password", "passwd", "token"], "code", 0),
]
_BLOB_EXEMPT_SUFFIXES = frozenset({".json", ".svg", ".ipynb", ".css", ".html", ".htm", ".xml"})
# The published one-line installers of widely used tools, each at its vendor's own address: piping
# one of these into a shell is how the vendor says to install it, not a planted payload. Anything
# else piped into a shell (another host, a user's repository, an address by IP) stays a finding.
OFFICIAL_INSTALLERS = re.compile(
    r"https://(?:get\.docker\.com|ollama\.com/install\.sh|sh\.rustup\.rs|astral\.sh/(?:uv|ruff)/|bun\.sh/install|"
    r"deno\.land/install\.sh|get\.helm\.sh/|raw\.githubusercontent\.com/helm/helm/main/scripts/get-helm-3|"
    r"raw\.githubusercontent\.com/Homebrew/install/HEAD/install\.sh|install\.python-poetry\.org|"
    r"deb\.nodesource\.com/setup_|get\.pnpm\.io/install\.sh|pyenv\.run|get\.k3s\.io|"
    r"raw\.githubusercontent\.com/nvm-sh/nvm/v[\d.]+/install\.sh|cli\.github\.com/|sdk\.cloud\.google\.com|"
    r"claude\.ai/install\.sh|install\.determinate\.systems/nix|nixos\.org/nix/install|"
    r"raw\.githubusercontent\.com/kubernetes-sigs/kind/|fnm\.vercel\.app/install|tailscale\.com/install\.sh|"
    r"code-server\.dev/install\.sh)"
)
_URL = re.compile(r"https?://[^\s|'\"`)]+")
# an address at a shortener or paste site is a prerequisite when the line asks to fetch or run it
_PREREQUISITE_VERB = re.compile(r"\b(?:download|install|run|execute|get|fetch|curl|wget|visit|open|go to|grab|"
                                r"save|paste|copy)\b", re.IGNORECASE)


def _official_installer(hit: Hit) -> bool:
    """A pipe into a shell whose every address is a vendor's published installer."""
    urls = _URL.findall(hit.excerpt)
    return bool(urls) and all(OFFICIAL_INSTALLERS.match(url) for url in urls)


def _encrypted_zip(data: bytes) -> bool:
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as archive:
            return any(info.flag_bits & 0x1 for info in archive.infolist())
    except (zipfile.BadZipFile, ValueError, OSError, EOFError):
        return False


SAFETY_RULESET = RuleSet(SAFETY_RULES)


def screen(content: SkillContent, runtime: dict[str, Annotation], hits: list[Hit] | None = None) -> list[Evidence]:
    """``hits`` may come from a combined scan; only ``safety.*`` hits are read."""
    if hits is None:
        hits = SAFETY_RULESET.scan(content)
    findings: list[Evidence] = []
    suffixes = {f.path: f.suffix for f in content.text_files}
    for hit in (h for h in hits if h.rule.startswith("safety.")):
        if hit.rule == "safety.encoded_payload.blob" and suffixes.get(hit.file, ".md") in _BLOB_EXEMPT_SUFFIXES:
            continue  # data URIs and lock files legitimately carry long base64 runs
        if hit.rule == "safety.download_execute.pipe_shell" and _official_installer(hit):
            continue
        if hit.rule == "safety.fake_prerequisite.untrusted_host" and not _PREREQUISITE_VERB.search(hit.excerpt):
            continue  # a shortened link in sample data or a log is not something to fetch
        findings.append(hit.evidence())
    for binary in content.binary_files:
        if binary.data is not None and binary.data[:4] == b"PK\x03\x04" and _encrypted_zip(binary.data):
            findings.append(Evidence(rule="safety.password_archive.encrypted_zip", file=binary.path))
        elif binary.path.lower().endswith((".7z", ".rar")) and re.search(
            r"password", content.body, re.IGNORECASE
        ):
            findings.append(Evidence(rule="safety.password_archive.with_password_hint", file=binary.path))
    destructive = runtime.get("destructive_writes")
    if destructive is not None and destructive.value.get("outside_workdir"):
        findings.extend(
            Evidence(rule="safety.destructive" + e.rule.removeprefix("runtime.destructive"), file=e.file,
                     line=e.line, excerpt=e.excerpt)
            for e in destructive.evidence
        )
    return findings


def is_unsafe(findings: list[Evidence]) -> bool:
    """Unsafe beyond destructive writes, which have their own filter reason."""
    return any(not e.rule.startswith("safety.destructive") for e in findings)
