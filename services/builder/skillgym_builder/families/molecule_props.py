"""science/chemistry: a compound library (CSV, plus a vendor SDF when longer) written with RDKit
in the sandbox from real drug-like molecules, with invalid SMILES, duplicates written another
way, salts and hydrates to strip to the largest fragment, and stereo variants. The agent
computes descriptors, applies a drug-likeness rule, matches SMARTS queries and writes JSON and
CSV; the verifier recomputes everything with RDKit. The skill's filter thresholds and stereo
policy, where it states them, are facts only the skill gives."""

from __future__ import annotations

import json
import random
from functools import lru_cache
from typing import Any

from skillgym_builder.families import knobs as knob_rules
from skillgym_builder.families.base import Fit, SkillClaim, family_text, load_family_spec
from skillgym_builder.families.common import (
    agent_solution,
    load_helper,
    requirements,
    rubric,
    skill_helpers,
    source,
    verifier_files,
)
from skillgym_builder.families.evidence import SkillEvidence, assess
from skillgym_builder.families.molecule_library import RO5, SUPPLIERS, Entry, Library, plan_library
from skillgym_builder.families.render import RenderJob
from skillgym_builder.families.skillfacts import Fact, body_lines
from skillgym_builder.skillcard import SkillCard
from skillgym_builder.templates.base import TemplateOutput

FAMILY_ID = "molecule-props"
CSV_FILE, SDF_FILE, QUERY_FILE = "library/compounds.csv", "library/vendor_b.sdf", "library/substructures.json"
ARCHIVE_FILE = "library/archive/compounds_2023.csv"


@lru_cache(maxsize=1)
def _readers() -> dict[str, Any]:
    """The skill readers the reference solutions use (``molfacts.py``), so both sides agree."""
    return load_helper(FAMILY_ID, "molfacts.py")


def filter_rule(card: SkillCard) -> Fact | None:
    """The drug-likeness thresholds the skill prescribes and the violations it tolerates."""
    found = _readers()["parse_filter_rule"](body_lines(card.skill_md))
    return Fact(found[0], found[1]) if found else None


def stereo_policy(card: SkillCard) -> Fact | None:
    """Whether the skill counts stereoisomers as one compound (collapse) or as distinct ones."""
    found = _readers()["parse_stereo_policy"](body_lines(card.skill_md))
    return Fact(found[0], found[1]) if found else None


def _record(entry: Entry, rng: random.Random) -> dict[str, Any]:
    return {"id": entry.id, "smiles": entry.smiles, "writing": entry.writing, "seed": entry.seed,
            "supplier": rng.choice(SUPPLIERS), "batch": f"B{rng.randint(1, 60):03d}"}


def render_job(library: Library, rng: random.Random, requirements: tuple[str, ...]) -> RenderJob:
    files: list[dict[str, Any]] = []
    for path, fmt in ((CSV_FILE, "csv"), (SDF_FILE, "sdf")):
        records = [_record(e, rng) for e in library.entries if e.file == path]
        if records:
            files.append({"path": path, "format": fmt, "records": records})
    if library.archive:
        files.append({"path": ARCHIVE_FILE, "format": "csv", "records": [_record(e, rng) for e in library.archive]})
    checks = [{"id": e.id, "parent": e.parent, "stereo": e.stereo} for e in library.entries]
    return RenderJob(script=family_text(FAMILY_ID, "render.py"), params={"files": files, "checks": checks},
                     requirements=requirements, produces=tuple(f["path"] for f in files), timeout_s=180)


class MoleculePropsFamily:
    def __init__(self) -> None:
        self.spec = load_family_spec(FAMILY_ID)

    def suitability(self, card: SkillCard) -> Fit:
        return assess(self.spec, SkillEvidence.of(card))

    def instantiate(self, card: SkillCard, seed: int, knobs: dict[str, float]) -> TemplateOutput:
        values = knob_rules.validate(self.spec, knobs)
        rng = random.Random(f"{FAMILY_ID}:{card.record.skill_id}:{seed}")
        rule_fact, stereo_fact = filter_rule(card), stereo_policy(card)
        rule: dict[str, Any] = rule_fact.value if rule_fact and isinstance(rule_fact.value, dict) else RO5
        policy = str(stereo_fact.value) if stereo_fact else "distinct"
        library = plan_library(rng, values, rule)
        files = [[path, path.rsplit(".", 1)[1]] for path in (CSV_FILE, SDF_FILE)
                 if any(e.file == path for e in library.entries)]
        workspace = {QUERY_FILE: (json.dumps(library.queries, indent=2) + "\n").encode()}
        job = render_job(library, rng, tuple(self.spec.dependencies.build_python))
        facts = {name: fact.source() for name, fact in (("filter_rule", rule_fact), ("stereo_policy", stereo_fact))
                 if fact is not None}
        claim = SkillClaim(
            claimed=bool(facts), facts=facts,
            reason="the filter thresholds and whether stereoisomers are one compound come from the skill" if facts
            else "the skill fixes neither the filter nor the stereo policy; the instruction does and the task needs RDKit")
        expected = {"files": files, "queries": library.queries, "rule": rule, "stereo": policy,
                    "planted": {"invalid": library.invalid(), "groups": library.groups(policy)}}
        task = {"files": [f[0] for f in files], "queries": QUERY_FILE, "rule_from_skill": rule_fact is not None,
                "stereo_from_skill": stereo_fact is not None, "rule": rule, "stereo": policy}
        argument = json.dumps(task)
        helpers = skill_helpers(FAMILY_ID, "molfacts.py")
        solve = agent_solution(card, inspect=["ls -R library", f"head -5 {CSV_FILE}"], helpers=helpers,
                               script=source(FAMILY_ID, "solve_rdkit.py"), name="triage.py",
                               run=f"python3 /tmp/work/triage.py '{argument}'")
        alternative = agent_solution(card, inspect=["ls library"], helpers=helpers,
                                     script=source(FAMILY_ID, "solve_inchikey.py"), name="triage.py",
                                     run=f"python3 /tmp/work/triage.py '{argument}'")
        items = rubric(self.spec, [item.name for item in self.spec.rubric])
        reqs, skipped = requirements(self.spec, card)
        return TemplateOutput(
            instruction=_instruction(card, [f[0] for f in files], rule_fact is None, stereo_fact is None,
                                     bool(library.archive)),
            workspace=workspace,
            protected=sorted([QUERY_FILE, *job.produces]),
            tests=verifier_files(self.spec, expected, items),
            solution_steps=[],
            solve_script=solve,
            alternative_scripts={"inchikey-rdmoldescriptors": alternative},
            blueprint=self.spec.blueprint,
            params={"parents": len(library.parents), "records": len(library.entries), "files": len(files),
                    "queries": len(library.queries), "invalid": len(library.invalid())},
            requirements=reqs,
            equivalences={k: list(v) for k, v in self.spec.equivalences.items()},
            metadata={"skill_claim": claim.model_dump(), "skill_dependencies_skipped": skipped,
                      "rubric": [i.model_dump() for i in items], "render_jobs": 1},
            render_jobs=[job],
        )


def _rule_text(card: SkillCard, stated: bool) -> str:
    if not stated:
        return (f"Apply the drug-likeness filter the `{card.name}` skill in your skills directory prescribes: its "
                "thresholds, and how many of them a compound may break and still pass.")
    limits = ", ".join(f"`{name}` {op} {limit}" for name, (op, limit) in RO5["thresholds"].items())
    return (f"Apply Lipinski's rule of five: {limits}; a compound passes with at most "
            f"{RO5['max_violations']} violation.")


def _instruction(card: SkillCard, files: list[str], rule_stated: bool, stereo_stated: bool, archive: bool) -> str:
    listed = "\n".join(f"- `/app/{path}`" for path in files)
    stereo = ("Stereoisomers are different compounds: compare isomeric canonical SMILES." if stereo_stated else
              f"Whether stereoisomers count as the same compound follows the `{card.name}` skill in your skills "
              "directory; where they do, compare canonical SMILES without stereo.")
    old = f"\n`/app/{ARCHIVE_FILE}` is last year's library, already registered; leave it out." if archive else ""
    return f"""# Triage the compound library

A new batch of screening compounds arrived. Register it, in this order:

{listed}
{old}
1. A record whose structure RDKit cannot parse or sanitise is invalid: list its id, do not register it.
2. Salts, hydrates and mixtures: keep only the largest fragment (the parent); everything below is about parents.
3. Duplicates: records whose parents are the same molecule (the same canonical SMILES) are one compound,
   registered under the id of its first record in the order above; the other ids are its duplicates.
   {stereo}
4. For each compound, as RDKit computes them: `formula` (`CalcMolFormula`), `mw` (average, `Descriptors.MolWt`),
   `exact_mass` (`Descriptors.ExactMolWt`), `logp` (Crippen), `tpsa` (`CalcTPSA`, N and O only), `hbd` and `hba`
   (`CalcNumHBD`, `CalcNumHBA`), `rotatable_bonds` (`CalcNumRotatableBonds`, default strictness) and `rings`
   (`CalcNumRings`). Give numbers to at least 3 decimals.
5. {_rule_text(card, rule_stated)} `violations` is the number of thresholds broken; `passes` a boolean.
6. `matches`: the names of the SMARTS queries in `/app/{QUERY_FILE}` the parent matches.

Write `/app/out/compounds.json` as `{{"invalid": [<ids>], "compounds": {{"<id>": {{"smiles": <canonical SMILES
of the parent>, "formula", "mw", "exact_mass", "logp", "tpsa", "hbd", "hba", "rotatable_bonds", "rings",
"violations", "passes", "duplicates": [<ids>], "matches": [<query names>]}}}}}}`, and `/app/out/shortlist.csv`
with the header `id,smiles,mw,logp,violations` and one row per compound that passes.

Do not modify anything under `/app/library/`.
"""
