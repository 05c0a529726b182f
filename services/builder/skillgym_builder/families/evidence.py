"""What ingestion found out about a skill, read for the suitability gate: its classified
(sub)category, detected dependencies, scripts and external programs, and network/GPU needs."""

from __future__ import annotations

import re
import shutil
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from skillgym_builder.families.base import FamilySpec, Fit
from skillgym_builder.families.languages import code_languages, named_languages
from skillgym_builder.families.libraries import family_libraries, skill_main_libraries
from skillgym_builder.skillcard import SkillCard

SCRIPT_SUFFIXES = (".py", ".sh", ".js", ".ts", ".rb", ".pl")


def _norm(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name.strip().lower())


def _annotation(record_part: dict[str, Any], key: str) -> Any:
    annotation = record_part.get(key)
    return getattr(annotation, "value", None)


_CODE_SPAN = re.compile(r"(?<!`)`([^`\n]+)`(?!`)")
_FENCE = re.compile(r"^```[ \t]*(?:bash|sh|shell|console|zsh)?[ \t]*\n(.*?)^```", re.M | re.S)
_PROGRAM = re.compile(r"^(?:\$\s+)?(?:sudo\s+)?([a-z][\w.+-]*)(?=\s|$)")


def shown_commands(text: str) -> frozenset[str]:
    """Programs the skill's text shows being run: the first word of each inline code span that
    has arguments and of each line of its shell blocks (``nginx -t`` shows ``nginx``; a bare
    ``nginx`` names it). Ingest's external programs are what a skill cannot run without; these
    are what its procedure runs, needed or not."""
    candidates = [span for span in _CODE_SPAN.findall(text) if " " in span.strip()]
    for block in _FENCE.findall(text):
        candidates += block.splitlines()
    return frozenset(m.group(1) for c in candidates if (m := _PROGRAM.match(c.strip())))


@dataclass(frozen=True)
class SkillEvidence:
    category: str | None
    subcategory: str | None
    packages: frozenset[str]
    binaries: frozenset[str]
    scripts: tuple[str, ...]
    network_required: bool
    gpu_required: bool
    text: str = field(repr=False)
    commands: frozenset[str] = frozenset()  # programs its text shows being run (shown_commands)
    languages: frozenset[str] = frozenset()  # of its code, files, name and description (languages.py)

    @classmethod
    def of(cls, card: SkillCard) -> SkillEvidence:
        runtime = card.record.runtime
        deps = _annotation(runtime, "dependencies") or {}
        packages = {_norm(p) for key in ("declared", "imported") for p in deps.get(key, []) if isinstance(p, str)}
        binaries = {str(b) for b in (_annotation(runtime, "external_binaries") or []) if isinstance(b, str)}
        network = _annotation(runtime, "network") or {}
        gpu = _annotation(runtime, "gpu") or {}
        scripts = tuple(f.path for f in card.record.files if f.path.lower().endswith(SCRIPT_SUFFIXES))
        return cls(
            category=card.record.category,
            subcategory=card.record.subcategory,
            packages=frozenset(packages),
            binaries=frozenset(binaries),
            scripts=scripts,
            network_required=bool(network.get("required")) if isinstance(network, dict) else False,
            gpu_required=bool(gpu.get("required")) if isinstance(gpu, dict) else False,
            text=card.skill_md,
            commands=shown_commands(card.skill_md),
            languages=code_languages(card.skill_md, (f.path for f in card.record.files))
            | named_languages(card.record.name, card.record.description),
        )

    def runs(self, program: str) -> bool:
        """Whether the skill needs ``program`` or its procedure shows it being run."""
        return program in self.binaries or program in self.commands


def assess(
    spec: FamilySpec,
    evidence: SkillEvidence,
    *,
    have_binary: Callable[[str], bool] = lambda name: shutil.which(name) is not None,
) -> Fit:
    """The generic gate every family starts from: hard needs first (network, GPU, programs this
    builder lacks), then the served subcategory, then the family's other evidence."""

    def no(code: str, reason: str, found: list[str] | None = None) -> Fit:
        return Fit(family=spec.id, fits=False, code=code, reason=reason, evidence=found or [])

    if evidence.network_required:
        return no("needs_network", "the skill needs network access; tasks run offline")
    if evidence.gpu_required:
        return no("needs_gpu", "the skill needs a GPU; tasks run on CPU")
    missing = [b for b in spec.dependencies.binaries if not have_binary(b)]
    if missing:
        return no("missing_binaries", f"{spec.id} needs {', '.join(missing)}, which this builder lacks")
    own = skill_main_libraries(evidence.packages, evidence.text)
    built_on = family_libraries(spec.fit.packages, spec.dependencies.python, spec.dependencies.skill_extras,
                                spec.dependencies.web)
    if own and not own & built_on:
        libraries = ", ".join(sorted(own)[:5])
        return no("skill_library_elsewhere", f"the skill is about {libraries}, none of which {spec.id}'s tasks "
                  f"use (they are built on {', '.join(sorted(built_on)[:5]) or 'the standard library'})",
                  [f"library:{name}" for name in sorted(own)])
    rules = spec.fit
    if rules.languages and evidence.languages and not evidence.languages & set(rules.languages):
        shown = sorted(evidence.languages)
        return no("skill_language_elsewhere", f"the skill's code is in {', '.join(shown)}; {spec.id}'s tasks are "
                  f"written in {', '.join(rules.languages)}", [f"language:{name}" for name in shown])
    packages = sorted(evidence.packages & {_norm(p) for p in rules.packages})
    binaries = sorted(evidence.binaries & set(rules.binaries))
    terms = [t for t in rules.terms if re.search(t, evidence.text, re.I)]
    if evidence.subcategory and evidence.subcategory in spec.subcategories:
        # the family's own evidence, kept beside the subcategory: it tells a skill about the family's
        # work from one that was merely classified there
        shown = [*(f"package:{p}" for p in packages), *(f"binary:{b}" for b in binaries),
                 *(f"term:{t}" for t in terms if len(terms) >= rules.min_terms)]
        return Fit(family=spec.id, fits=True, code="subcategory", strength=2,
                   reason=f"serves subcategory {evidence.subcategory}",
                   evidence=[f"subcategory:{evidence.subcategory}", *shown])
    if packages:
        return Fit(family=spec.id, fits=True, code="dependencies", strength=1,
                   reason=f"the skill uses {', '.join(packages)}", evidence=[f"package:{p}" for p in packages])
    if binaries:
        return Fit(family=spec.id, fits=True, code="binaries", strength=1,
                   reason=f"the skill runs {', '.join(binaries)}", evidence=[f"binary:{b}" for b in binaries])
    where = {evidence.category, evidence.subcategory} - {None}
    in_scope = not rules.term_categories or bool(where & set(rules.term_categories))
    if rules.terms and len(terms) >= rules.min_terms and in_scope:
        return Fit(family=spec.id, fits=True, code="terms", strength=1,
                   reason=f"SKILL.md describes the family's work ({len(terms)} of its terms)",
                   evidence=[f"term:{t}" for t in terms])
    served = ", ".join(spec.subcategories) or "none"
    return no(
        "subcategory_not_served",
        f"subcategory {evidence.subcategory or 'unclassified'} is not served (serves {served}) and the skill "
        f"shows none of the family's dependencies, programs or terms",
    )
