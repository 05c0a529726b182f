"""What a task family is: a data spec (``family.json``: category, the subcategories it serves,
dependency sets, difficulty knobs, checker, limits) plus a small generator that turns a skill
card, a seed and knob values into task files whose inputs carry planted, checkable properties.

A family's home is a folder holding its ``family.json``, its in-sandbox checker (``verify.py``),
its solution sources and its example skill (``seed_skill/``): ``data/families/<id>/`` for the
families shipped here, or the top folder of any installed package registered under the
``skillgym.families`` entry-point group (``<id> = "<package>"``), so a user's own package adds
families without touching this one (``skillgym families new`` scaffolds one)."""

from __future__ import annotations

import json
import logging
from functools import lru_cache
from importlib import resources
from importlib.metadata import entry_points
from importlib.resources.abc import Traversable
from typing import Any, Literal, Protocol, runtime_checkable

from pydantic import BaseModel, ConfigDict, Field

from skillgym_builder.skillcard import SkillCard
from skillgym_builder.templates.base import TemplateOutput, TemplateSpec

log = logging.getLogger(__name__)
ENTRY_POINT_GROUP = "skillgym.families"
KnobName = Literal["record_count", "noise_level", "distractor_files", "multi_step", "error_recovery", "long_horizon"]
KNOB_NAMES: tuple[str, ...] = KnobName.__args__  # type: ignore[attr-defined]
# Meaning-preserving transformations of an output file a fair verifier accepts, in the reviewer's
# vocabulary (tests/equivalences.json): it rewrites the reference output under each and expects a pass.
Equivalence = Literal[
    "reformat_json", "trailing_whitespace", "whitespace", "reorder_lists", "reorder_lines", "reorder_rows",
    "reorder_columns", "case", "number_format",
]


class KnobSpec(BaseModel):
    """A real parameter of the generator: ``levels`` go from the easiest (the default) to the hardest."""

    model_config = ConfigDict(extra="forbid")
    name: KnobName
    description: str
    levels: list[float] = Field(min_length=1)
    pattern: str = Field(description="the difficulty pattern a raised value realises")


class DependencySet(BaseModel):
    model_config = ConfigDict(extra="forbid")
    python: list[str] = Field(default_factory=list, description="always installed into the task environment")
    skill_extras: list[str] = Field(
        default_factory=list, description="packages a skill may declare that the family installs too"
    )
    build_python: list[str] = Field(default_factory=list, description="needed to render the inputs")
    binaries: list[str] = Field(default_factory=list, description="system programs the task cannot do without")
    optional_binaries: list[str] = Field(default_factory=list, description="used when present")
    web: list[str] = Field(
        default_factory=list,
        description="browser libraries (npm name@version) shipped as input files to skills written for them",
    )


class FitRules(BaseModel):
    """Evidence besides the classified subcategory that makes a skill fit."""

    model_config = ConfigDict(extra="forbid")
    packages: list[str] = Field(default_factory=list, description="a declared or imported dependency among these")
    binaries: list[str] = Field(default_factory=list, description="a detected external program among these")
    terms: list[str] = Field(default_factory=list, description="regexes; enough of them must occur in SKILL.md")
    min_terms: int = 2
    term_categories: list[str] = Field(
        default_factory=list, description="categories/subcategories where terms alone suffice; [] = any"
    )
    languages: list[str] = Field(
        default_factory=list,
        description="the programming languages the tasks are written in; a skill whose code is all in others "
        "does not fit ([] = any)",
    )


class FamilySpec(TemplateSpec):
    """``family.json``: the template shape plus what a family adds."""

    category: str
    generator: str = Field(
        pattern=r"^[\w.]+:\w+$", description="``module:Class`` of the generator implementing :class:`Family`"
    )
    dependencies: DependencySet = Field(default_factory=DependencySet)
    fit: FitRules = Field(default_factory=FitRules)
    knobs: list[KnobSpec] = Field(default_factory=list)
    equivalences: dict[str, list[Equivalence]] = Field(default_factory=dict)
    outputs: list[str] = Field(default_factory=list, description="files the agent writes, relative to /app")

    def knob(self, name: str) -> KnobSpec | None:
        return next((k for k in self.knobs if k.name == name), None)


class Fit(BaseModel):
    """The suitability verdict of one family for one skill, with its evidence."""

    model_config = ConfigDict(extra="forbid")
    family: str
    fits: bool
    code: str = Field(description="machine-readable: subcategory, evidence, or why not (needs_network, ...)")
    reason: str
    strength: int = Field(0, description="2 = served subcategory, 1 = other evidence, 0 = no fit")
    evidence: list[str] = Field(default_factory=list)


class SkillClaim(BaseModel):
    """Whether the instance claims the skill is needed, and what only the skill provides."""

    model_config = ConfigDict(extra="forbid")
    claimed: bool
    reason: str
    facts: dict[str, Any] = Field(default_factory=dict)


class Family(Protocol):
    spec: FamilySpec

    def suitability(self, card: SkillCard) -> Fit:
        """Whether the family can build a task that exercises this skill, and why (not)."""
        ...

    def instantiate(self, card: SkillCard, seed: int, knobs: dict[str, float]) -> TemplateOutput:
        """Task files for one instance: inputs generated from ``seed`` at the difficulty ``knobs``
        set. Raises :class:`~skillgym_builder.errors.UnsuitableSkillError` when the skill lacks
        what the instance needs."""
        ...


@runtime_checkable
class RenderedFamily(Protocol):
    """A family whose instance is finished only after its render jobs ran in the sandbox (the
    result of running a skill's own script decides the expectations and the rubric)."""

    def after_render(self, card: SkillCard, output: TemplateOutput, rendered: dict[str, bytes]) -> TemplateOutput:
        """The finished instance; raises :class:`~skillgym_builder.errors.UnsuitableSkillError`
        when what was rendered shows the skill cannot support it."""
        ...


def _shipped() -> Traversable:
    return resources.files("skillgym_builder").joinpath("data", "families")


def _shipped_ids() -> list[str]:
    return sorted(entry.name for entry in _shipped().iterdir() if entry.joinpath("family.json").is_file())


@lru_cache(maxsize=1)
def external_homes() -> dict[str, Traversable]:
    """Families installed packages register under ``skillgym.families``: id -> the package's folder.
    An entry that does not import, has no ``family.json`` or reuses a shipped id is left out, with a warning."""
    shipped = set(_shipped_ids())
    homes: dict[str, Traversable] = {}
    for entry in entry_points(group=ENTRY_POINT_GROUP):
        try:
            home = resources.files(entry.value.partition(":")[0])
        except (ImportError, TypeError, ValueError) as exc:
            log.warning("family %s from %s does not import: %s", entry.name, entry.value, exc)
            continue
        if not home.joinpath("family.json").is_file():
            log.warning("family %s: %s holds no family.json", entry.name, entry.value)
        elif entry.name in shipped or entry.name == "common":
            log.warning("family %s from %s is left out: a shipped family has that id", entry.name, entry.value)
        else:
            homes[entry.name] = home
    return homes


def family_home(family_id: str) -> Traversable:
    """The folder of a family's spec, checker, solution sources and example skill."""
    return external_homes().get(family_id) or _shipped().joinpath(family_id)


def family_text(family_id: str, *parts: str) -> str:
    return family_home(family_id).joinpath(*parts).read_text(encoding="utf-8")


def family_ids() -> list[str]:
    """Every family shipped under ``data/families/`` (a folder with a ``family.json``), then the installed ones."""
    return [*_shipped_ids(), *sorted(external_homes())]


def load_family_spec(family_id: str) -> FamilySpec:
    return FamilySpec.model_validate(json.loads(family_text(family_id, "family.json")))
