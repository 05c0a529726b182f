"""What a skill's scripts look like once formatting is gone: per-file hashes and a MinHash over
shingles of the code tokens.

Comments (and Python docstrings) are removed and the code is read as a stream of word tokens, so
whitespace, comment and case edits do not change a file's hash, and a rewritten SKILL.md does not
hide that two skills ship the same program. Files below ``script_min_file_tokens`` (an empty
``__init__.py``, a shim) are skipped, identical files are counted once, and a skill whose
remaining code is under ``script_min_tokens`` gets no signature: a small shared helper must not
make two different skills duplicates."""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, field

import numpy as np

from skillgym_ingest.content import SCRIPT_LANGUAGES, SkillContent, TextFile
from skillgym_ingest.minhash import signature_of, token_shingles, word_hashes
from skillgym_ingest.settings import IngestSettings

# Comment markers must follow a line start or a blank, so "#fff", "$#", "a//b" and "https://" survive.
_HASH_COMMENT = re.compile(r"(?:^|(?<=\s))#[^\n]*", re.M)
_SLASH_COMMENT = re.compile(r"/\*.*?\*/|(?:^|(?<=\s))//[^\n]*", re.M | re.S)
_DASH_COMMENT = re.compile(r"(?:^|(?<=\s))--[^\n]*", re.M)
_DOCSTRING = re.compile(r"^[ \t]*[rRuUbB]{0,2}(\"\"\"|''')[\s\S]*?\1", re.M)
# Each pattern with the literals it cannot match without, so most files skip most patterns.
_COMMENTS_BY_LANGUAGE: dict[str, tuple[tuple[re.Pattern[str], tuple[str, ...]], ...]] = {
    "python": ((_DOCSTRING, ('"""', "'''")), (_HASH_COMMENT, ("#",))),
    **dict.fromkeys(("shell", "ruby", "r", "perl", "powershell"), ((_HASH_COMMENT, ("#",)),)),
    **dict.fromkeys(("javascript", "typescript", "go", "rust", "java", "kotlin", "c", "cpp", "csharp", "php", "swift",
                     "scala"), ((_SLASH_COMMENT, ("//", "/*")),)),
    **dict.fromkeys(("sql", "lua"), ((_DASH_COMMENT, ("--",)),)),
}


@dataclass(frozen=True)
class ScriptFingerprint:
    file_hashes: dict[str, str] = field(default_factory=dict)  # path -> hash of its code tokens, kept files only
    tokens: int = 0  # code tokens in the kept files, each distinct file once
    signature: np.ndarray | None = None  # None when the scripts are too small to identify the skill


def strip_comments(text: str, suffix: str) -> str:
    for pattern, needles in _COMMENTS_BY_LANGUAGE.get(SCRIPT_LANGUAGES.get(suffix, ""), ()):
        if any(needle in text for needle in needles):
            text = pattern.sub(" ", text)
    return text


def code_tokens(script: TextFile) -> np.ndarray:
    """64-bit hashes of the script's word tokens, comments removed (case-folded, like prose)."""
    return word_hashes(strip_comments(script.text, script.suffix))


def script_tokens(content: SkillContent) -> list[tuple[str, np.ndarray]]:
    """(path, code tokens) for every script of the skill."""
    return [(script.path, code_tokens(script)) for script in content.scripts()]


def fingerprint(content: SkillContent, settings: IngestSettings) -> ScriptFingerprint:
    return fingerprint_of(script_tokens(content), settings)


def fingerprint_of(scripts: list[tuple[str, np.ndarray]], settings: IngestSettings) -> ScriptFingerprint:
    by_hash: dict[str, np.ndarray] = {}
    file_hashes: dict[str, str] = {}
    for path, tokens in scripts:
        if tokens.size < settings.script_min_file_tokens:
            continue
        digest = hashlib.blake2b(tokens.tobytes(), digest_size=8).hexdigest()
        file_hashes[path] = digest
        by_hash.setdefault(digest, tokens)
    total = sum(tokens.size for tokens in by_hash.values())
    if total < settings.script_min_tokens:
        return ScriptFingerprint(file_hashes, total, None)
    # Shingles stay within a file, so file order and names do not change the signature.
    shingles = np.concatenate([token_shingles(tokens, settings.script_shingle_size) for tokens in by_hash.values()])
    return ScriptFingerprint(file_hashes, total, signature_of(shingles, settings.minhash_perms))


def shared_files(a: ScriptFingerprint, b: ScriptFingerprint) -> list[tuple[str, str]]:
    """(path in a, path in b) for every script file the two skills share after normalisation."""
    by_hash = {digest: path for path, digest in b.file_hashes.items()}
    return sorted((path, by_hash[digest]) for path, digest in a.file_hashes.items() if digest in by_hash)
