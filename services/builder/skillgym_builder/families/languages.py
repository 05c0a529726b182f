"""The programming languages a skill's code is written in: its fenced examples' info strings, its
files' suffixes, and the languages or test frameworks its name and description name (many skills
about, say, xUnit show no code at all). Shell, markup and data formats are not counted: they show
how a tool is run or what a file holds, not the language the skill teaches."""

from __future__ import annotations

import re
from collections.abc import Iterable

_FENCE_INFO = re.compile(r"^[ \t]*(?:```|~~~)[ \t]*\{?\.?([\w#+.-]+)", re.M)
_ALIASES = {
    "python": ("python", "py", "python3", "ipython", "pycon", "pytest"),
    "javascript": ("javascript", "js", "jsx", "mjs", "cjs", "node", "nodejs"),
    "typescript": ("typescript", "ts", "tsx"),
    "java": ("java",),
    "csharp": ("csharp", "cs", "c#", "dotnet"),
    "go": ("go", "golang"),
    "rust": ("rust", "rs"),
    "ruby": ("ruby", "rb"),
    "php": ("php",),
    "kotlin": ("kotlin", "kt", "kts"),
    "swift": ("swift",),
    "scala": ("scala",),
    "c": ("c", "h"),
    "cpp": ("cpp", "c++", "cxx", "cc", "hpp"),
    "r": ("r",),
    "julia": ("julia", "jl"),
    "elixir": ("elixir", "ex", "exs"),
    "dart": ("dart",),
    "powershell": ("powershell", "ps1", "pwsh"),
    "apex": ("apex", "cls"),
}
# words in a skill's name or description that tie it to one language: the language itself or a
# test framework or toolchain that belongs to it alone
_NAMED = {
    "python": r"python|pytest|pyproject|unittest",
    "java": r"java|junit|spring[- ]?boot|maven|gradle",
    "csharp": r"c#|csharp|\.net|dotnet|nunit|xunit|tunit|mstest",
    "javascript": r"javascript|node\.?js|jest|mocha|vitest|cypress",
    "typescript": r"typescript",
    "go": r"golang",
    "rust": r"rust|cargo",
    "ruby": r"ruby|rspec|rails",
    "php": r"php|phpunit",
    "kotlin": r"kotlin",
    "swift": r"swift|xctest",
    "powershell": r"powershell|pester",
    "apex": r"apex|salesforce",
}
_NAMED_RE = {language: re.compile(rf"(?<![\w#.])(?:{words})(?![\w#])", re.I) for language, words in _NAMED.items()}
_BY_NAME = {alias: language for language, aliases in _ALIASES.items() for alias in aliases}


def named_languages(*texts: str) -> frozenset[str]:
    """Languages a skill's name or description names (``java-junit``, "xUnit tests for .NET")."""
    joined = " ".join(t.replace("-", " ").replace("_", " ") for t in texts)
    return frozenset(language for language, pattern in _NAMED_RE.items() if pattern.search(joined))


def code_languages(text: str, files: Iterable[str] = ()) -> frozenset[str]:
    """Languages of the skill's fenced code blocks (by info string) and of its files (by suffix)."""
    found = {_BY_NAME[info.lower()] for info in _FENCE_INFO.findall(text) if info.lower() in _BY_NAME}
    for path in files:
        name = path.rsplit("/", 1)[-1]
        suffix = name.rpartition(".")[2].lower() if "." in name else ""
        if suffix in _BY_NAME:
            found.add(_BY_NAME[suffix])
    return frozenset(found)
