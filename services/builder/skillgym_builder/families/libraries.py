"""The libraries a skill is about, by import name: its declared and imported packages and the
modules its own examples import, less the standard library and the general-purpose packages
nearly every data skill touches. A family whose tasks use none of a skill's libraries would teach
some other library's work under the skill's name."""

from __future__ import annotations

import re
import sys
from collections.abc import Iterable

from packaging.utils import canonicalize_name

# Distribution names whose import name differs; everything else imports as its canonical name.
IMPORT_NAMES = {
    "pillow": "PIL", "python-docx": "docx", "python-pptx": "pptx", "pyyaml": "yaml", "scikit-learn": "sklearn",
    "beautifulsoup4": "bs4", "opencv-python": "cv2", "opencv-python-headless": "cv2", "pymupdf": "fitz",
    "python-dateutil": "dateutil", "biopython": "Bio", "rdkit": "rdkit", "faster-whisper": "faster_whisper",
    "pytorch-lightning": "pytorch_lightning", "python-frontmatter": "frontmatter",
}
# ``import x[.y][ as z][, w]`` or ``from x[.y] import z``: a prose line that starts with "from" or
# "import" ("import the rows first") is not one
IMPORT_LINE = re.compile(r"^\s*(?:import\s+([A-Za-z_]\w*)(?=\s*(?:$|as\b|[.,;#]))"
                         r"|from\s+([A-Za-z_]\w*)(?:\.\w+)*\s+import\b)", re.M)
WEB_PREFIX = "js:"
# <script src> addresses of the public CDNs: cdnjs names the library's folder, jsDelivr and unpkg
# its npm package
CDN_URL = re.compile(
    r"(?:cdnjs\.cloudflare\.com/ajax/libs/(?P<cdnjs>[\w.-]+)/(?P<v1>\d+\.\d+\.\d+)"
    r"|(?:cdn\.jsdelivr\.net/npm/|unpkg\.com/)(?P<npm>[a-z0-9][\w.-]*)@(?P<v2>\d+\.\d+\.\d+))")
WEB_MENTION = re.compile(r"(?<![\w.-])(p5\.js|three\.js|d3\.js|chart\.js|paper\.js|pixi\.js)(?![\w-])", re.I)
WEB_NAMES = {"p5.js": "p5", "three.js": "three", "d3.js": "d3", "chart.js": "chart.js", "paper.js": "paper",
             "pixi.js": "pixi.js"}
# Used alongside almost any library; naming one of them says nothing about what a skill teaches.
GENERAL_PURPOSE = frozenset({
    "numpy", "pandas", "matplotlib", "scipy", "seaborn", "requests", "yaml", "tqdm", "dateutil", "pytz",
    "typing_extensions", "rich", "click", "dotenv", "IPython", "jupyter", "setuptools", "pip",
})


def import_name(distribution: str) -> str:
    name = canonicalize_name(distribution)
    return IMPORT_NAMES.get(name, name.replace("-", "_"))


def imported_modules(text: str) -> set[str]:
    """Top-level modules that ``text``'s import statements name."""
    return {first or second for first, second in IMPORT_LINE.findall(text)}


def web_libraries(text: str) -> dict[str, str | None]:
    """Browser libraries ``text`` loads from a CDN (cdnjs, jsDelivr, unpkg) or names as
    ``<name>.js`` among the well-known ones: npm name -> version (None where none is given)."""
    found: dict[str, str | None] = {}
    for match in CDN_URL.finditer(text):
        name = canonical_web_name(match.group("cdnjs") or match.group("npm"))
        found[name] = found.get(name) or match.group("v1") or match.group("v2")
    for match in WEB_MENTION.finditer(text):
        found.setdefault(canonical_web_name(match.group(1)), None)
    return found


def canonical_web_name(name: str) -> str:
    name = name.lower()
    return WEB_NAMES.get(name, name.removesuffix(".js"))


def web_library(package: str) -> str:
    """The library key of an npm package (``p5@1.7.0`` -> ``js:p5``), beside Python import names."""
    return WEB_PREFIX + canonical_web_name(package.rsplit("@", 1)[0] if package.rfind("@") > 0 else package)


def skill_libraries(packages: Iterable[str], skill_md: str) -> set[str]:
    """Import names of every third-party library the skill declares, imports or shows imported,
    and ``js:<name>`` for each browser library it loads."""
    names = {import_name(p) for p in packages} | imported_modules(skill_md)
    python = {n for n in names if n not in sys.stdlib_module_names and not n.startswith("_")}
    return python | {WEB_PREFIX + name for name in web_libraries(skill_md)}


def skill_main_libraries(packages: Iterable[str], skill_md: str) -> set[str]:
    """What the skill teaches (see the module docstring); empty for a skill that names no
    specific library."""
    return skill_libraries(packages, skill_md) - GENERAL_PURPOSE


def family_libraries(fit_packages: Iterable[str], installed: Iterable[str], extras: Iterable[str],
                     web: Iterable[str] = ()) -> set[str]:
    """What a family's tasks are built on: the packages its fit names and installs, the extras
    it installs for a skill that asks (less the general-purpose ones) and its browser libraries."""
    core = {import_name(p) for p in (*fit_packages, *installed)}
    return core | ({import_name(p) for p in extras} - GENERAL_PURPOSE) | {web_library(p) for p in web}
