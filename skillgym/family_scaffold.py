"""``skillgym families new NAME``: a task family as a package of its own, registered under the
``skillgym.families`` entry-point group, working as written (a word-tally family with its spec,
generator, checker, reference solution and example skill) so it can be built and reviewed at
once and then changed into the family its author wants."""

from __future__ import annotations

import re
from dataclasses import dataclass
from importlib import resources
from importlib.resources.abc import Traversable
from pathlib import Path

FAMILY_NAME = re.compile(r"^[a-z][a-z0-9]*(?:-[a-z0-9]+)*$")
SUFFIX = ".in"


class ScaffoldError(Exception):
    """Why no family was written: a typed reason and the path or name concerned."""

    def __init__(self, reason: str, message: str, *, subject: str) -> None:
        super().__init__(message)
        self.reason = reason
        self.subject = subject


@dataclass(frozen=True)
class Scaffold:
    family_id: str
    root: Path  # the package's project folder (its pyproject.toml)
    package: str  # the importable package holding family.json


def names(family_id: str) -> dict[str, str]:
    module = family_id.replace("-", "_")
    return {"__FAMILY_ID__": family_id, "__PACKAGE__": f"skillgym_family_{module}",
            "__DISTRIBUTION__": f"skillgym-family-{family_id}",
            "__CLASS__": "".join(part.capitalize() for part in family_id.split("-")) + "Family"}


def scaffold(family_id: str, dest: Path, *, shipped: frozenset[str] = frozenset()) -> Scaffold:
    """Write the family's package under ``dest/<distribution>``; refuses a bad or taken name and an
    existing folder, and writes nothing then."""
    if len(family_id) > 40 or not FAMILY_NAME.match(family_id):
        raise ScaffoldError("bad_name", f"{family_id!r} is not a family id: lowercase words joined by hyphens",
                            subject=family_id)
    if family_id in shipped:
        raise ScaffoldError("name_taken", f"a shipped family is called {family_id!r}", subject=family_id)
    values = names(family_id)
    root = dest / values["__DISTRIBUTION__"]
    if root.exists():
        raise ScaffoldError("exists", f"{root} exists; nothing was written", subject=str(root))
    template = resources.files("skillgym").joinpath("data", "family_scaffold")
    for rel, text in _files(template, ""):
        target = root / rel.replace("package", values["__PACKAGE__"], 1).removesuffix(SUFFIX)
        for placeholder, value in values.items():
            text = text.replace(placeholder, value)
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text, encoding="utf-8")
    return Scaffold(family_id, root, values["__PACKAGE__"])


def _files(folder: Traversable, prefix: str) -> list[tuple[str, str]]:
    found: list[tuple[str, str]] = []
    for entry in sorted(folder.iterdir(), key=lambda e: e.name):
        rel = f"{prefix}{entry.name}"
        if entry.is_dir():
            found += _files(entry, f"{rel}/")
        elif entry.name.endswith(SUFFIX):
            found.append((rel, entry.read_text(encoding="utf-8")))
    return found
