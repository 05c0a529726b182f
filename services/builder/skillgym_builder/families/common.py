"""Pieces every family generator uses: the trusted verifier files, the task's requirements
(the family's own plus the skill's accepted ones), and reference solutions written the way an
agent works (read the skill, inspect the inputs, write a script, run it)."""

from __future__ import annotations

import builtins
import json
import re
import types
from collections.abc import Iterable
from typing import Any

from packaging.requirements import InvalidRequirement, Requirement
from packaging.utils import canonicalize_name
from skillgym_core.builtin_verifier import runner_text

from skillgym_builder.families.base import FamilySpec, family_text
from skillgym_builder.families.evidence import SkillEvidence
from skillgym_builder.skillcard import SkillCard
from skillgym_builder.templates.base import RubricItem

SCRIPT_DIR = "/tmp/work"


def rubric(spec: FamilySpec, names: Iterable[str]) -> list[RubricItem]:
    """The spec's rubric items named in ``names``, in spec order, their weights rescaled to sum to 1
    (an instance may leave an item out, e.g. the report when the skill prescribes none)."""
    wanted = set(names)
    items = [item for item in spec.rubric if item.name in wanted]
    total = sum(item.weight for item in items)
    scaled = [round(item.weight / total, 6) for item in items]
    scaled[-1] = round(1 - sum(scaled[:-1]), 6)
    return [item.model_copy(update={"weight": weight}) for item, weight in zip(items, scaled, strict=True)]


def verifier_files(
    spec: FamilySpec, expected: dict[str, Any], items: list[RubricItem], extra: dict[str, bytes] | None = None
) -> dict[str, bytes]:
    """tests/: the shared runner and entry point, the family's checks, hidden expectations."""
    return {
        "test.sh": runner_text("test.sh").encode(),
        "checks.py": runner_text("checks.py").encode(),
        "verify.py": family_text(spec.id, "verify.py").encode(),
        "expected.json": (json.dumps(expected, indent=2, sort_keys=True) + "\n").encode(),
        "rubric.json": (json.dumps([item.model_dump() for item in items], indent=2) + "\n").encode(),
        **(extra or {}),
    }


def requirements(
    spec: FamilySpec, card: SkillCard, extra: Iterable[str] = ()
) -> tuple[list[str], dict[str, str]]:
    """(requirements.txt lines, skill dependencies left out with the reason). The skill's own
    packages go in when the family accepts them; everything else it declares is reported."""
    lines: dict[str, str] = {}
    for line in [*spec.dependencies.python, *extra]:
        lines[canonicalize_name(Requirement(line).name)] = line
    accepted = {canonicalize_name(Requirement(p).name): p for p in spec.dependencies.skill_extras}
    skipped: dict[str, str] = {}
    for package in sorted(SkillEvidence.of(card).packages):
        try:
            name = canonicalize_name(Requirement(package).name)
        except InvalidRequirement:
            skipped[package] = "not a package name"
            continue
        if name in lines:
            continue
        if name in accepted:
            lines[name] = accepted[name]
        else:
            skipped[package] = f"not among the packages {spec.id} installs"
    return sorted(lines.values()), skipped


def agent_solution(
    card: SkillCard, *, inspect: list[str], script: str, run: str, name: str = "solve.py",
    helpers: dict[str, str] | None = None,
) -> str:
    """A solve.sh that works like an agent: look at the skill and the inputs, write a script (and
    the helper modules it imports), run it. The skill is read only if present, so an instance that
    does not need it still solves without it; a script that needs a skill fact fails when the
    skill is hidden."""
    skill = f"/skills/{card.dir_name}/SKILL.md"
    lines = [
        "#!/usr/bin/env bash",
        "# Reference solution: read the skill, inspect the inputs, write a script and run it.",
        "set -euo pipefail",
        "cd /app",
        f"if [ -f {skill} ]; then sed -n '1,40p' {skill}; fi",
        *inspect,
        f"mkdir -p {SCRIPT_DIR}",
    ]
    for filename, text in [*(helpers or {}).items(), (name, script)]:
        if re.search(r"^PY$", text, re.M):
            raise ValueError(f"{filename} must not contain a line reading PY")
        lines += [f"cat > {SCRIPT_DIR}/{filename} <<'PY'", text.rstrip("\n"), "PY"]
    lines.append(run)
    return "\n".join(lines) + "\n"


SKILL_TEXT = "skill_text.py"


def skill_helpers(family_id: str, *names: str) -> dict[str, str]:
    """Helper modules of ``family_id`` that reference solutions import, with the SKILL.md reader
    (``common/skill_text.py``) they build on."""
    return {SKILL_TEXT: family_text("common", SKILL_TEXT), **{name: family_text(family_id, name) for name in names}}


def skill_reader() -> dict[str, str]:
    """The helper module reference solutions import to read facts from the installed skill."""
    return skill_helpers("common", "skillfacts.py")


def load_helper(family_id: str, name: str) -> dict[str, Any]:
    """The namespace of helper module ``name`` as a reference solution imports it (its import of
    the SKILL.md reader resolved to the shipped reader), so the builder and the tests read a skill
    exactly as the solutions do."""
    reader = types.ModuleType(SKILL_TEXT.removesuffix(".py"))
    exec(compile(family_text("common", SKILL_TEXT), SKILL_TEXT, "exec"), reader.__dict__)

    def importer(module: str, *args: Any, **kwargs: Any) -> Any:
        return reader if module == reader.__name__ else builtins.__import__(module, *args, **kwargs)

    namespace: dict[str, Any] = {"__builtins__": {**vars(builtins), "__import__": importer}}
    exec(compile(family_text(family_id, name), name, "exec"), namespace)
    return namespace


def source(family_id: str, name: str) -> str:
    """A solution source file shipped under ``data/families/<id>/`` (``common`` for shared helpers)."""
    return family_text(family_id, name)
