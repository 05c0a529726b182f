"""sequence-stats: a generated sequencing run (FASTQ reads with malformed, duplicated and
low-quality records; soft-masked contigs with planted ORFs and restriction sites); the agent
writes a JSON summary and an ORF table, the verifier recomputes everything with Biopython."""

from __future__ import annotations

import csv
import io
from pathlib import Path
from typing import Any

import pytest
from skillgym_builder.families.seeds import seed_card
from skillgym_builder.families.sequence_stats import SequenceStatsFamily, skill_facts
from skillgym_core.conformance import check_task
from skillgym_core.envbuild import LocalVenvProvider, lint_environment

from tests.builder.family_support import (
    BuiltTask,
    assert_reviewer_approves,
    assert_weakened_verifier_rejected,
    build,
    card_for,
    read_json,
    rewrite_json,
    write_json,
)

KNOBS = {"record_count": 120, "noise_level": 0.25, "multi_step": 4, "error_recovery": 3, "distractor_files": 1,
         "long_horizon": 2}
SUMMARY, ORFS = "out/summary.json", "out/orfs.tsv"


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory, env_provider: LocalVenvProvider) -> BuiltTask:
    card = seed_card(SequenceStatsFamily().spec)
    return build(SequenceStatsFamily(), card, KNOBS, tmp_path_factory.mktemp("sequences"), env_provider)


@pytest.fixture(scope="module")
def solved(built: BuiltTask) -> Path:
    ok, workspace = built.solve()
    assert ok
    return workspace


def test_bioinformatics_skills_fit_and_a_writing_skill_does_not() -> None:
    family = SequenceStatsFamily()
    assert family.suitability(card_for("biopython-sequences", "bioinformatics")).code == "subcategory"
    by_terms = family.suitability(card_for("biopython-sequences", None, category="science"))
    assert by_terms.fits and by_terms.code == "terms"
    unrelated = family.suitability(card_for("csv-cleanup", "editing-proofreading", category="writing"))
    assert not unrelated.fits and unrelated.code == "subcategory_not_served"


def test_skill_facts_are_read_from_the_skill() -> None:
    fixture = {k: f.value for k, f in skill_facts(card_for("biopython-sequences", "bioinformatics")).items()}
    assert fixture == {"quality": 24, "min_orf_aa": 100, "table": 11}
    seed = {k: f.value for k, f in skill_facts(seed_card(SequenceStatsFamily().spec)).items()}
    assert seed == {"quality": 28, "min_orf_aa": 80, "table": 4}


def test_without_skill_facts_the_instruction_states_the_rules(tmp_path: Path) -> None:
    text = (card_for("biopython-sequences", None).root / "SKILL.md").read_text()
    plain = tmp_path / "plain-bio"
    plain.mkdir()
    kept = [line for line in text.splitlines() if not any(w in line for w in ("below 24", "table", "100 codons"))]
    (plain / "SKILL.md").write_text("\n".join(kept))
    output = SequenceStatsFamily().instantiate(card_for("plain-bio", "bioinformatics", folder=plain), 0, {})
    assert not output.metadata["skill_claim"]["claimed"]
    assert "below 20" in output.instruction and "NCBI translation table 11" in output.instruction
    assert "at least 50 amino acids" in output.instruction


def test_knobs_change_the_instance() -> None:
    family, card = SequenceStatsFamily(), seed_card(SequenceStatsFamily().spec)
    easy, hard = family.instantiate(card, 0, {}), family.instantiate(card, 0, KNOBS)
    assert easy.params["reads"] < 45 < 120 <= hard.params["reads"]
    assert (easy.params["contigs"], hard.params["contigs"]) == (1, 2)
    assert (easy.params["enzymes"], hard.params["enzymes"]) == (2, 4)
    assert (easy.params["malformed"], hard.params["malformed"]) == (1, 3)
    assert "data/previous_run/reads.fastq" in hard.workspace and "data/previous_run/reads.fastq" not in easy.workspace
    assert hard.params["low_quality"] / hard.params["reads"] > easy.params["low_quality"] / easy.params["reads"]


def test_run_files_carry_the_planted_traps(built: BuiltTask) -> None:
    reads = (built.task.workspace / "data/run/reads.fastq").read_text().splitlines()
    records = [reads[i : i + 4] for i in range(0, len(reads), 4)]
    assert any(len(r[1]) != len(r[3]) for r in records) and any("." in r[1] for r in records)
    ids = [r[0].split()[0] for r in records]
    assert len(set(ids)) < len(ids)
    contigs = (built.task.workspace / "data/run/contigs.fasta").read_text()
    assert any(c.islower() for c in contigs) and contigs.count(">") == 2


def test_task_conforms_and_the_untouched_workspace_fails(built: BuiltTask) -> None:
    assert check_task(built.task.root) == []
    assert lint_environment(built.task) == []
    assert not built.untouched().passed
    assert {p.path for p in built.metadata.protected_inputs} >= {"data/run/reads.fastq", "data/run/contigs.fasta"}


def test_reference_and_alternative_pass(built: BuiltTask, solved: Path) -> None:
    assert built.verify(solved).passed
    ok, alternative = built.solve("alternatives/standard-library.sh")
    assert ok and built.verify(alternative).passed


def test_skill_is_needed_and_the_hidden_skill_run_fails(built: BuiltTask) -> None:
    dependence = built.extra("skill_dependence")
    assert dependence["claimed"] and dependence["holds"], dependence
    assert set(dependence["facts"]) == {"quality", "min_orf_aa", "table"}
    ok, workspace = built.solve(with_skill=False)
    assert not ok and not built.verify(workspace).passed


def _rows(workspace: Path) -> list[dict[str, str]]:
    return list(csv.DictReader(io.StringIO((workspace / ORFS).read_text()), delimiter="\t"))


def _write_rows(workspace: Path, rows: list[dict[str, str]]) -> None:
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=["contig", "strand", "start", "end", "aa_length", "protein"],
                            delimiter="\t", lineterminator="\n")
    writer.writeheader()
    writer.writerows(rows)
    (workspace / ORFS).write_text(buffer.getvalue())


def _standard_table(workspace: Path) -> None:
    """TGA read as a stop: every ORF that reads through it is cut at its first TGA."""
    rows = [r for r in _rows(workspace) if "W" not in r["protein"]]
    _write_rows(workspace, rows)


def _zero_based_starts(workspace: Path) -> None:
    rows = _rows(workspace)
    for row in rows:
        row["start"] = str(int(row["start"]) - 1)
    _write_rows(workspace, rows)


def _reverse_strand_coordinates_unflipped(workspace: Path) -> None:
    rows = _rows(workspace)
    row = next(r for r in rows if r["strand"] == "-")
    row["start"], row["end"] = row["end"], row["start"]
    _write_rows(workspace, rows)


def _stop_in_protein(workspace: Path) -> None:
    rows = _rows(workspace)
    rows[0]["protein"] += "*"
    rows[0]["aa_length"] = str(len(rows[0]["protein"]))
    _write_rows(workspace, rows)


def _case_sensitive_sites(value: dict[str, Any]) -> None:
    for contig in value["contigs"].values():
        for positions in contig["sites"].values():
            if positions:
                positions.pop()
                return


def _duplicates_kept(value: dict[str, Any]) -> None:
    reads = value["reads"]
    reads["kept"] += len(reads["duplicates"])
    reads["duplicates"] = []


def _threshold_read_dropped(value: dict[str, Any]) -> None:
    value["reads"]["low_quality"].append("extra-read")
    value["reads"]["kept"] -= 1


@pytest.mark.parametrize(("name", "edit"), [
    ("the standard codon table instead of the skill's", _standard_table),
    ("0-based ORF starts", _zero_based_starts),
    ("reverse-strand ORF given end first", _reverse_strand_coordinates_unflipped),
    ("the stop codon left in the protein", _stop_in_protein),
    ("a site in a lower-case stretch missed", rewrite_json(SUMMARY, _case_sensitive_sites)),
    ("duplicate records kept", rewrite_json(SUMMARY, _duplicates_kept)),
    ("a malformed record left out", rewrite_json(SUMMARY, lambda v: v["reads"]["malformed"].pop())),
    ("a read at the threshold dropped", rewrite_json(SUMMARY, _threshold_read_dropped)),
    ("GC as a percentage", rewrite_json(SUMMARY, lambda v: v["reads"].update(kept_gc=v["reads"]["kept_gc"] * 100))),
])
def test_wrong_but_plausible_outputs_are_rejected(built: BuiltTask, solved: Path, name: str, edit: Any) -> None:
    assert not built.verify_edited(solved, edit).passed, name


def test_reordered_outputs_are_accepted(built: BuiltTask, solved: Path) -> None:
    def reorder(workspace: Path) -> None:
        value = read_json(workspace, SUMMARY)
        value["reads"]["low_quality"].reverse()
        write_json(workspace, SUMMARY, value)
        _write_rows(workspace, list(reversed(_rows(workspace))))

    assert built.verify_edited(solved, reorder).passed


def test_a_changed_run_is_tampering(built: BuiltTask, solved: Path) -> None:
    def tamper(workspace: Path) -> None:
        path = workspace / "data/run/reads.fastq"
        path.write_text(path.read_text() + "\n")

    outcome = built.verify_edited(solved, tamper)
    assert not outcome.passed and outcome.failure_type == "tampered_inputs"


@pytest.mark.slow
def test_the_reviewer_approves_the_task_built_for_the_seed_skill(tmp_path: Path, env_provider: LocalVenvProvider) -> None:
    assert_reviewer_approves(tmp_path, env_provider, "sequence-stats")


@pytest.mark.slow
def test_a_weakened_verifier_is_rejected_by_the_reviewer(tmp_path: Path, env_provider: LocalVenvProvider) -> None:
    assert_weakened_verifier_rejected(tmp_path, env_provider, "sequence-stats")
