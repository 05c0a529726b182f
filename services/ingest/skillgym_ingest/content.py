"""The text view of a loaded skill that every rule reads: SKILL.md parts and decoded text files."""

from __future__ import annotations

import functools
import hashlib
import os
import re
from dataclasses import dataclass, field

from skillgym_core.contracts.skill import Diagnostic

from skillgym_ingest.frontmatter import ParsedSkillMd, parse_skill_md
from skillgym_ingest.language import prose_only
from skillgym_ingest.loader import LoadedFile, SkillFolder

TEXT_SUFFIXES_WORDS = (
    ".md .txt .py .sh .bash .zsh .js .mjs .cjs .ts .tsx .jsx .json .yaml .yml .toml .ini .cfg .conf .html "
    ".htm .css .xml .csv .tsv .rb .go .rs .java .kt .c .h .cpp .hpp .cs .php .pl .r .sql .ps1 .bat .cmd "
    ".lua .swift .scala .ipynb .env .rst .tex .dockerfile .makefile .mdx .svg "
)
TEXT_SUFFIXES = frozenset(TEXT_SUFFIXES_WORDS.split())
SCRIPT_LANGUAGES = {
    ".py": "python", ".sh": "shell", ".bash": "shell", ".zsh": "shell", ".js": "javascript",
    ".mjs": "javascript", ".cjs": "javascript", ".ts": "typescript", ".tsx": "typescript",
    ".jsx": "javascript", ".rb": "ruby", ".go": "go", ".rs": "rust", ".java": "java", ".kt": "kotlin",
    ".c": "c", ".h": "c", ".cpp": "cpp", ".hpp": "cpp", ".cs": "csharp", ".php": "php", ".pl": "perl",
    ".r": "r", ".sql": "sql", ".ps1": "powershell", ".bat": "batch", ".cmd": "batch", ".lua": "lua",
    ".swift": "swift", ".scala": "scala",
}
_WS = re.compile(r"[ \t]{2,}|\t")  # runs of blanks; a lone space is already normal
_PROSE_WORD = re.compile(r"[^\W\d_]+")
_PROSE_LIMIT = 40000
# ASCII letters kept, every other byte a separator: on ASCII text, splitting the translation
# gives exactly what _PROSE_WORD.findall gives (there it means [A-Za-z]+).
_LETTERS_ONLY = bytes(code if chr(code).isascii() and chr(code).isalpha() else 32 for code in range(256))


def prose_words(text: str) -> list[str]:
    """``_PROSE_WORD.findall(text)``: the runs of letters in ``text``."""
    if text.isascii():
        return text.encode("ascii").translate(_LETTERS_ONLY).decode("ascii").split()
    return _PROSE_WORD.findall(text)


def suffix_of(path: str) -> str:
    name = path.rsplit("/", 1)[-1].lower()
    if name in {"dockerfile", "makefile"}:
        return "." + name
    return os.path.splitext(name)[1]


@dataclass
class TextFile:
    path: str
    text: str
    suffix: str = ""

    def __post_init__(self) -> None:
        self.suffix = suffix_of(self.path)


@dataclass
class SkillContent:
    folder: SkillFolder
    skill_md_path: str | None
    parsed: ParsedSkillMd
    text_files: list[TextFile] = field(default_factory=list)
    binary_files: list[LoadedFile] = field(default_factory=list)
    diagnostics: list[Diagnostic] = field(default_factory=list)

    @property
    def description(self) -> str:
        value = self.parsed.front_matter.get("description")
        return value if isinstance(value, str) else ("" if value is None else str(value))

    @property
    def body(self) -> str:
        return self.parsed.body

    @functools.cached_property
    def body_words(self) -> list[str]:
        """Lower-cased words of the body, shared by the language and quality rules."""
        return prose_words(self.body[:_PROSE_LIMIT].lower())

    @functools.cached_property
    def prose_words(self) -> list[str]:
        return prose_words(self.description.lower()) + self.body_words

    @functools.cached_property
    def language_words(self) -> list[str]:
        """The description's and the body's prose words (no code, commands or paths), for the language."""
        return prose_words(self.description.lower()) + prose_words(prose_only(self.body[:_PROSE_LIMIT]).lower())

    def scripts(self) -> list[TextFile]:
        return [f for f in self.text_files if f.suffix in SCRIPT_LANGUAGES]


def build_content(folder: SkillFolder, max_scan_bytes: int) -> SkillContent:
    skill_md = folder.skill_md()
    if skill_md is None or skill_md.data is None:
        parsed = ParsedSkillMd({}, "", 1, [], False)
        md_path = skill_md.path if skill_md else None
    else:
        parsed = parse_skill_md(skill_md.data[:max_scan_bytes], skill_md.path)
        md_path = skill_md.path
    content = SkillContent(folder, md_path, parsed)
    for loaded in folder.files:
        if loaded.path == md_path:
            continue
        text = _as_text(loaded, max_scan_bytes)
        if text is None:
            content.binary_files.append(loaded)
        else:
            content.text_files.append(TextFile(loaded.path, text))
    return content


def _as_text(loaded: LoadedFile, max_scan_bytes: int) -> str | None:
    if loaded.data is None:
        return None
    head = loaded.data[:max_scan_bytes]
    suffix = suffix_of(loaded.path)
    if b"\x00" in head[:8192]:
        return None
    if suffix not in TEXT_SUFFIXES and suffix:
        try:
            return head.decode("utf-8")
        except UnicodeDecodeError:
            return None
    return head.decode("utf-8", "replace").replace("\r\n", "\n")


def normalized_hash(content: SkillContent) -> str:
    """Hash of the content with formatting noise removed: line ends, trailing and repeated blanks,
    case. Two folders that differ only in such noise are exact duplicates."""
    digest = hashlib.sha256()
    parts: list[tuple[str, bytes]] = []
    md_text = "\n".join(f"{k}:{v}" for k, v in sorted(content.parsed.front_matter.items()) if k != "name")
    parts.append(("SKILL.md", _normalize(md_text + "\n" + content.body)))
    for text_file in content.text_files:
        parts.append((text_file.path, _normalize(text_file.text)))
    for binary in content.binary_files:
        parts.append((binary.path, bytes.fromhex(binary.sha256)))
    for path, data in sorted(parts):
        digest.update(path.lower().encode())
        digest.update(b"\0")
        digest.update(hashlib.sha256(data).digest())
    return digest.hexdigest()


def _normalize(text: str) -> bytes:
    """Lower-case, runs of spaces and tabs as one space, lines stripped, blank lines dropped."""
    lowered = text.lower()
    if "\t" in lowered or "  " in lowered:
        lowered = _WS.sub(" ", lowered)
    return "\n".join(stripped for line in lowered.split("\n") if (stripped := line.strip())).encode()


def tree_hash(files: list[LoadedFile]) -> str:
    """Same construction as :func:`skillgym_core.ids.hash_files`, from precomputed digests."""
    digest = hashlib.sha256()
    for loaded in sorted(files, key=lambda f: f.path):
        digest.update(loaded.path.encode())
        digest.update(b"\0")
        digest.update(bytes.fromhex(loaded.sha256))
    return digest.hexdigest()
