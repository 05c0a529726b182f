"""How an instance's reference solution uses the skill, recorded in ``[metadata] skill_usage``:
it runs one of the skill's own scripts, imports (or ``python -m`` runs) the library the skill is
about (a package the skill names that the task installs; for a browser library, one the task ships
and the solution's page loads), runs an external program the skill
uses, reads facts only the skill states, or none of these.

The corpus benchmark counts tasks by this label; it is read from the solution text itself, so
a family cannot claim a use its solution does not make."""

from __future__ import annotations

import re
from collections.abc import Collection
from typing import Any, Literal

from packaging.requirements import InvalidRequirement, Requirement
from packaging.utils import canonicalize_name

from skillgym_builder.families.evidence import SCRIPT_SUFFIXES, SkillEvidence
from skillgym_builder.families.libraries import (
    GENERAL_PURPOSE,
    WEB_PREFIX,
    import_name,
    imported_modules,
    web_libraries,
    web_library,
)
from skillgym_builder.skillcard import SkillCard
from skillgym_builder.templates.base import TemplateOutput

UsageKind = Literal["script", "library", "tool", "skill_facts", "none"]
_MODULE_RUN = re.compile(r"\bpython3?\s+-m\s+([A-Za-z_][\w]*)")
_COMMAND = re.compile(r"^\s*(?:[A-Z_]+=\S+\s+)*([\w.+-]+)", re.M)


def _requirement_names(lines: list[str]) -> set[str]:
    names: set[str] = set()
    for line in lines:
        try:
            names.add(canonicalize_name(Requirement(line).name))
        except InvalidRequirement:
            continue
    return names


def _names(text: str, distribution: str) -> bool:
    """Whether the skill's text names the distribution (``openpyxl``, ``python-pptx``) as a word."""
    return re.search(rf"(?<![\w-]){re.escape(distribution)}(?![\w-])", text, re.I) is not None


def skill_libraries(card: SkillCard) -> set[str]:
    """Import names of the libraries the skill is about: its declared and imported packages, the
    modules its own examples import (standard-library modules are filtered by the caller, which
    only counts what the task installs) and ``js:<name>`` for the browser libraries it loads."""
    evidence = SkillEvidence.of(card)
    names = {import_name(p) for p in evidence.packages}
    names |= set(imported_modules(card.skill_md))
    return names | {WEB_PREFIX + name for name in web_libraries(card.skill_md)}


def skill_usage(card: SkillCard, output: TemplateOutput, family_programs: Collection[str] = ()) -> dict[str, Any]:
    """The strongest use the reference solution makes of the skill, with its evidence. A program
    counts when the skill needs it, or when its procedure shows it being run and it is one of the
    family's own programs (``family_programs``): a shell utility the skill happens to show does
    not make a solution that runs it a use of the skill."""
    solve = output.solve_script or ""
    skill_root = f"/skills/{card.dir_name}/"
    shipped = {f.path for f in card.record.files} | {
        p.relative_to(card.root).as_posix() for p in card.root.rglob("*") if p.is_file()}
    scripts = sorted(p for p in shipped if p.lower().endswith(SCRIPT_SUFFIXES) and f"{skill_root}{p}" in solve)
    distributions = _requirement_names(list(output.requirements))
    installed = {import_name(name) for name in distributions}
    imported = imported_modules(solve) | set(_MODULE_RUN.findall(solve))
    named = skill_libraries(card) | {import_name(d) for d in distributions if _names(card.skill_md, d)}
    # a skill about statsmodels or networkx is not used by a solution that only loads its tables with pandas
    named = (named - GENERAL_PURPOSE) or named
    libraries = sorted(named & installed & imported)
    # a browser library the task ships as an input file counts when the skill loads it and the
    # solution's page does (it names the file's path)
    shipped_web = output.metadata.get("web_libraries") or {}
    libraries += sorted({web_library(package) for path, package in shipped_web.items() if path in solve}
                        & skill_libraries(card))
    evidence = SkillEvidence.of(card)
    programs = evidence.binaries | (evidence.commands & set(family_programs))
    tools = sorted(programs & set(_COMMAND.findall(solve)))
    claim = output.metadata.get("skill_claim") or {}
    kind: UsageKind
    if scripts:
        kind = "script"
    elif libraries:
        kind = "library"
    elif tools:
        kind = "tool"
    elif claim.get("claimed") and skill_root in solve:
        kind = "skill_facts"
    else:
        kind = "none"
    return {"kind": kind, "scripts": scripts, "libraries": libraries, "tools": tools,
            "facts": sorted((claim.get("facts") or {}).keys()) if claim.get("claimed") else []}
