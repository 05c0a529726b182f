"""science/bioinformatics: a sequencing run (FASTQ) and its contigs (FASTA) generated per seed
with planted low-quality, malformed and duplicated reads, soft-masked contigs, restriction sites
and ORFs on both strands that only the right codon table reads in full. The agent writes a JSON
summary and an ORF table; the verifier recomputes everything with Biopython. The skill's quality
threshold, minimum ORF length and translation table, where it states them, come only from it."""

from __future__ import annotations

import json
import random
from functools import lru_cache
from typing import Any

from skillgym_builder.families import knobs as knob_rules
from skillgym_builder.families.base import Fit, SkillClaim, load_family_spec
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
from skillgym_builder.families.sequence_data import ENZYMES, contig, fasta, reads
from skillgym_builder.families.skillfacts import Fact, body_lines
from skillgym_builder.skillcard import SkillCard
from skillgym_builder.templates.base import TemplateOutput

FAMILY_ID = "sequence-stats"
READS, CONTIGS = "data/run/reads.fastq", "data/run/contigs.fasta"
ENZYME_FILE = "data/run/enzymes.txt"
DEFAULTS = {"quality": 20, "min_orf_aa": 50, "table": 11}


@lru_cache(maxsize=1)
def _readers() -> dict[str, Any]:
    """The skill readers the reference solutions use (``seqfacts.py``), so both sides agree."""
    return load_helper(FAMILY_ID, "seqfacts.py")


def _fact(card: SkillCard, parser: str) -> Fact | None:
    found = _readers()[parser](body_lines(card.skill_md))
    return Fact(found[0], found[1]) if found else None


def skill_facts(card: SkillCard) -> dict[str, Fact]:
    """The QC rules the skill states: quality threshold, minimum ORF length, translation table."""
    facts = {"quality": _fact(card, "parse_quality"), "min_orf_aa": _fact(card, "parse_min_orf"),
             "table": _fact(card, "parse_table")}
    return {name: fact for name, fact in facts.items() if fact is not None}


class SequenceStatsFamily:
    def __init__(self) -> None:
        self.spec = load_family_spec(FAMILY_ID)

    def suitability(self, card: SkillCard) -> Fit:
        return assess(self.spec, SkillEvidence.of(card))

    def instantiate(self, card: SkillCard, seed: int, knobs: dict[str, float]) -> TemplateOutput:
        values = knob_rules.validate(self.spec, knobs)
        rng = random.Random(f"{FAMILY_ID}:{card.record.skill_id}:{seed}")
        facts = skill_facts(card)
        rules = {name: int(facts[name].value) if name in facts else default  # type: ignore[call-overload]
                 for name, default in DEFAULTS.items()}
        enzymes = sorted(rng.sample(sorted(ENZYMES), int(values["multi_step"])))
        run_name = f"M{rng.randint(10000, 99999)}:{rng.randint(20, 400)}:000000000-{rng.choice('ABCDEFGH')}{rng.randint(100, 999)}"
        contigs = [contig(rng, f"contig_{i + 1}", rules["table"], rules["min_orf_aa"], enzymes,
                          float(values["noise_level"])) for i in range(int(values["long_horizon"]))]
        run = reads(rng, contigs, int(values["record_count"]), float(values["noise_level"]), rules["quality"],
                    int(values["error_recovery"]), run_name)
        workspace = {READS: run.text.encode(), CONTIGS: fasta([(c.id, c.seq) for c in contigs]).encode(),
                     ENZYME_FILE: "".join(f"{name}\t{ENZYMES[name]}\n" for name in enzymes).encode()}
        if values["distractor_files"]:
            old = reads(rng, contigs, 12, 0.2, rules["quality"], 0, "M00001:7:000000000-A001")
            workspace["data/previous_run/reads.fastq"] = old.text.encode()
            workspace["data/adapters.fasta"] = fasta([("TruSeq_adapter", "AGATCGGAAGAGCACACGTCTGAACTCCAGTCA"),
                                                      ("Nextera_adapter", "CTGTCTCTTATACACATCTCCGAGCCCACGAGAC")]).encode()
        claim = SkillClaim(
            claimed=bool(facts), facts={name: fact.source() for name, fact in facts.items()},
            reason="the read quality threshold, minimum ORF length and translation table come from the skill" if facts
            else "the skill fixes none of the QC rules; the instruction does and the task needs Biopython")
        expected = {"rules": rules, "enzymes": {name: ENZYMES[name] for name in enzymes},
                    "planted": {"malformed": run.malformed, "duplicates": run.duplicates, "low_quality": run.low_quality,
                                "orfs": {c.id: [o for o in c.orfs if o["aa"] >= rules["min_orf_aa"]] for c in contigs}}}
        task = {"reads": READS, "contigs": CONTIGS, "enzymes": ENZYME_FILE,
                "from_skill": sorted(facts), "rules": rules}
        argument = json.dumps(task)
        helpers = skill_helpers(FAMILY_ID, "seqfacts.py")
        solve = agent_solution(card, inspect=["ls -R data", f"head -8 {READS}"], helpers=helpers,
                               script=source(FAMILY_ID, "solve_biopython.py"), name="summarise.py",
                               run=f"python3 /tmp/work/summarise.py '{argument}'")
        alternative = agent_solution(card, inspect=["ls data/run"], helpers=helpers,
                                     script=source(FAMILY_ID, "solve_stdlib.py"), name="summarise.py",
                                     run=f"python3 /tmp/work/summarise.py '{argument}'")
        items = rubric(self.spec, [item.name for item in self.spec.rubric])
        reqs, skipped = requirements(self.spec, card)
        return TemplateOutput(
            instruction=_instruction(card, facts, rules, bool(values["distractor_files"])),
            workspace=workspace,
            protected=sorted(workspace),
            tests=verifier_files(self.spec, expected, items),
            solution_steps=[],
            solve_script=solve,
            alternative_scripts={"standard-library": alternative},
            blueprint=self.spec.blueprint,
            params={"reads": len(run.ids), "contigs": len(contigs), "enzymes": len(enzymes),
                    "malformed": len(run.malformed), "low_quality": len(run.low_quality),
                    "soft_masked": any(c.seq != c.seq.upper() for c in contigs)},
            requirements=reqs,
            equivalences={k: list(v) for k, v in self.spec.equivalences.items()},
            metadata={"skill_claim": claim.model_dump(), "skill_dependencies_skipped": skipped,
                      "rubric": [i.model_dump() for i in items]},
        )


def _instruction(card: SkillCard, facts: dict[str, Fact], rules: dict[str, int], decoys: bool) -> str:
    skill = f"the `{card.name}` skill in your skills directory"
    quality = (f"whose mean Phred quality is below the threshold {skill} sets" if "quality" in facts
               else f"whose mean Phred quality is below {rules['quality']}")
    table = (f"the translation table {skill} prescribes" if "table" in facts
             else f"NCBI translation table {rules['table']}")
    length = (f"at least the minimum length {skill} sets" if "min_orf_aa" in facts
              else f"at least {rules['min_orf_aa']} amino acids")
    other = ("\nOther files under `/app/data/` (an earlier run, adapter sequences) are not part of this run; "
             "leave them out.\n" if decoys else "")
    return f"""# Summarise a sequencing run

The run's reads are in `/app/{READS}` (Phred+33) and its assembled contigs in `/app/{CONTIGS}`;
`/app/{ENZYME_FILE}` lists the restriction enzymes to map (name and recognition site).
{other}
Reads, in file order:
1. A record whose quality string is not as long as its sequence, or whose sequence has characters other
   than A, C, G, T and N, is malformed.
2. A record whose id (the header up to the first space) was already seen is a duplicate; the first one counts.
3. A read {quality} is low quality; the others are kept.

Contigs (treat lower case as upper case):
- `length`, `gc` (G+C over all bases, as a fraction) and `sites`: for each enzyme, the 1-based start
  positions of its recognition site on the forward strand.
- ORFs in all six frames: from an ATG to the first in-frame stop codon of {table}, with a protein of
  {length} (stop not counted). In a stretch between two stops only the first ATG starts an ORF;
  a stretch with no stop before the contig ends has no ORF.

Write `/app/out/summary.json` as `{{"reads": {{"total": <records>, "malformed": [<ids>], "duplicates": [<ids>],
"low_quality": [<ids>], "kept": <count>, "kept_gc": <G+C fraction over the kept reads>}}, "contigs": {{"<id>":
{{"length", "gc", "sites": {{"<enzyme>": [<positions>]}}}}}}}}` (fractions to at least 4 decimals), and
`/app/out/orfs.tsv` with the header `contig	strand	start	end	aa_length	protein`: one row per ORF, `strand`
`+` or `-`, `start` < `end` 1-based on the forward strand including the stop codon, `protein` without the stop.

Do not modify anything under `/app/data/`.
"""
