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


def skill_libraries(packages: Iterable[str], skill_md: str) -> set[str]:
    """Import names of every third-party library the skill declares, imports or shows imported."""
    names = {import_name(p) for p in packages} | imported_modules(skill_md)
    return {n for n in names if n not in sys.stdlib_module_names and not n.startswith("_")}


def skill_main_libraries(packages: Iterable[str], skill_md: str) -> set[str]:
    """What the skill teaches (see the module docstring); empty for a skill that names no
    specific library."""
    return skill_libraries(packages, skill_md) - GENERAL_PURPOSE


def family_libraries(fit_packages: Iterable[str], installed: Iterable[str], extras: Iterable[str]) -> set[str]:
    """What a family's tasks are built on: the packages its fit names and installs, and the
    extras it installs for a skill that asks, less the general-purpose ones."""
    core = {import_name(p) for p in (*fit_packages, *installed)}
    return core | ({import_name(p) for p in extras} - GENERAL_PURPOSE)
