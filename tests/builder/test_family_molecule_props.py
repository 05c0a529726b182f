"""molecule-props: a compound library written with RDKit in the sandbox (invalid SMILES, a broken
SDF block, re-written duplicates, salts, stereo variants); the agent validates, deduplicates,
describes, filters and matches SMARTS; the verifier recomputes everything with RDKit."""

from __future__ import annotations

import csv
import io
from pathlib import Path
from typing import Any

import pytest
from skillgym_builder.families.molecule_library import RO5
from skillgym_builder.families.molecule_props import MoleculePropsFamily, filter_rule, stereo_policy
from skillgym_builder.families.seeds import seed_card
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

KNOBS = {"record_count": 20, "noise_level": 0.5, "multi_step": 4, "error_recovery": 3, "distractor_files": 1,
         "long_horizon": 2}
OUT = "out/compounds.json"


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory, env_provider: LocalVenvProvider) -> BuiltTask:
    card = seed_card(MoleculePropsFamily().spec)
    return build(MoleculePropsFamily(), card, KNOBS, tmp_path_factory.mktemp("molecules"), env_provider)


@pytest.fixture(scope="module")
def solved(built: BuiltTask) -> Path:
    ok, workspace = built.solve()
    assert ok
    return workspace


def test_chemistry_skills_fit_and_a_writing_skill_does_not() -> None:
    family = MoleculePropsFamily()
    assert family.suitability(card_for("rdkit-cheminformatics", "chemistry")).code == "subcategory"
    by_terms = family.suitability(card_for("rdkit-cheminformatics", None, category="science"))
    assert by_terms.fits and by_terms.code == "terms"
    unrelated = family.suitability(card_for("csv-cleanup", "editing-proofreading", category="writing"))
    assert not unrelated.fits and unrelated.code == "subcategory_not_served"


def test_skill_facts_are_read_from_the_skill() -> None:
    fixture = card_for("rdkit-cheminformatics", "chemistry")
    rule, stereo = filter_rule(fixture), stereo_policy(fixture)
    assert rule and rule.value == {"thresholds": {"mw": ["<=", 500.0], "logp": ["<=", 5.0], "hbd": ["<=", 5.0],
                                                  "hba": ["<=", 10.0], "tpsa": ["<=", 140.0],
                                                  "rotatable_bonds": ["<=", 10.0]}, "max_violations": 1}
    assert stereo and stereo.value == "distinct"
    seed = seed_card(MoleculePropsFamily().spec)
    seed_rule, seed_stereo = filter_rule(seed), stereo_policy(seed)
    assert seed_rule and seed_rule.value["thresholds"]["mw"] == ["<=", 400.0]  # type: ignore[index]
    assert seed_stereo and seed_stereo.value == "collapse"


def test_without_skill_facts_the_instruction_states_the_rule(tmp_path: Path) -> None:
    text = (card_for("rdkit-cheminformatics", None).root / "SKILL.md").read_text()
    plain = tmp_path / "plain-rdkit"
    plain.mkdir()
    kept = [line for line in text.splitlines() if "≤" not in line and "stereo" not in line.lower()]
    (plain / "SKILL.md").write_text("\n".join(kept))
    output = MoleculePropsFamily().instantiate(card_for("plain-rdkit", "chemistry", folder=plain), 0, {})
    assert not output.metadata["skill_claim"]["claimed"]
    assert "rule of five" in output.instruction and "Stereoisomers are different compounds" in output.instruction
    assert '"rule_from_skill": false' in (output.solve_script or "")


def test_knobs_change_the_instance() -> None:
    family, card = MoleculePropsFamily(), seed_card(MoleculePropsFamily().spec)
    easy = family.instantiate(card, 0, {})
    hard = family.instantiate(card, 0, KNOBS)
    assert easy.params["parents"] == 10 and hard.params["parents"] == 20
    assert easy.params["files"] == 1 and hard.params["files"] == 2
    assert easy.params["invalid"] == 1 and hard.params["invalid"] == 3
    assert easy.params["queries"] == 2 and hard.params["queries"] == 4
    assert hard.params["records"] - hard.params["parents"] > easy.params["records"] - easy.params["parents"] + 4
    produced = {p for job in hard.render_jobs for p in job.produces}
    assert "library/archive/compounds_2023.csv" in produced and "library/vendor_b.sdf" in produced


def test_library_is_real_and_carries_the_planted_traps(built: BuiltTask) -> None:
    library = built.task.workspace / "library"
    rows = list(csv.DictReader(io.StringIO((library / "compounds.csv").read_text())))
    assert any("." in row["smiles"] for row in rows), "a salt or hydrate"
    assert any("[H]" in row["smiles"] or "=" in row["smiles"] for row in rows)
    sdf = (library / "vendor_b.sdf").read_text()
    assert sdf.count("$$$$") >= 3 and "V2000" in sdf and ">  <COMPOUND_ID>" in sdf


def test_task_conforms_and_the_untouched_workspace_fails(built: BuiltTask) -> None:
    assert check_task(built.task.root) == []
    assert lint_environment(built.task) == []
    assert not built.untouched().passed
    assert {p.path for p in built.metadata.protected_inputs} >= {"library/compounds.csv", "library/vendor_b.sdf",
                                                                 "library/substructures.json"}


def test_reference_and_alternative_pass(built: BuiltTask, solved: Path) -> None:
    assert built.verify(solved).passed
    ok, alternative = built.solve("alternatives/inchikey-rdmoldescriptors.sh")
    assert ok and built.verify(alternative).passed


def test_skill_is_needed_and_the_hidden_skill_run_fails(built: BuiltTask) -> None:
    dependence = built.extra("skill_dependence")
    assert dependence["claimed"] and dependence["holds"], dependence
    assert set(dependence["facts"]) == {"filter_rule", "stereo_policy"}
    ok, workspace = built.solve(with_skill=False)
    assert not ok and not built.verify(workspace).passed


def _salt_kept(value: dict[str, Any]) -> None:
    compound = next(iter(value["compounds"].values()))
    compound["smiles"] += ".Cl"


def _stereoisomer_split(value: dict[str, Any]) -> None:
    compound = next(c for c in value["compounds"].values() if c["duplicates"])
    moved = compound["duplicates"].pop()
    value["compounds"][moved] = {**compound, "duplicates": []}


def _monoisotopic_as_mw(value: dict[str, Any]) -> None:
    for compound in value["compounds"].values():
        compound["mw"] = compound["exact_mass"]


def _rule_of_five_instead(value: dict[str, Any]) -> None:
    for compound in value["compounds"].values():
        thresholds: dict[str, list[Any]] = RO5["thresholds"]
        broken = sum(compound[name] > limit for name, (_, limit) in thresholds.items())
        compound["violations"], compound["passes"] = broken, broken <= 1


def _logp_to_one_decimal(value: dict[str, Any]) -> None:
    for compound in value["compounds"].values():
        compound["logp"] = round(compound["logp"], 1)


def _later_id_registered(value: dict[str, Any]) -> None:
    ident, compound = next((k, c) for k, c in value["compounds"].items() if c["duplicates"])
    later = compound["duplicates"][0]
    value["compounds"][later] = {**compound, "duplicates": [ident, *compound["duplicates"][1:]]}
    del value["compounds"][ident]


def _extra_match(workspace: Path) -> None:
    names = set(read_json(workspace, "library/substructures.json"))
    value = read_json(workspace, OUT)
    compound = next(c for c in value["compounds"].values() if set(c["matches"]) != names)
    compound["matches"].append(sorted(names - set(compound["matches"]))[0])
    write_json(workspace, OUT, value)


def _failing_compound_shortlisted(workspace: Path) -> None:
    compounds = read_json(workspace, OUT)["compounds"]
    ident, compound = next((k, c) for k, c in compounds.items() if not c["passes"])
    with (workspace / "out/shortlist.csv").open("a") as handle:
        handle.write(f"{ident},{compound['smiles']},{compound['mw']},{compound['logp']},{compound['violations']}\n")


@pytest.mark.parametrize(("name", "edit"), [
    ("an invalid record left out of the report", rewrite_json(OUT, lambda v: v["invalid"].pop())),
    ("a salt kept with its counter-ion", rewrite_json(OUT, _salt_kept)),
    ("stereoisomers registered separately", rewrite_json(OUT, _stereoisomer_split)),
    ("monoisotopic mass given as molecular weight", rewrite_json(OUT, _monoisotopic_as_mw)),
    ("the textbook rule of five instead of the skill's profile", rewrite_json(OUT, _rule_of_five_instead)),
    ("logP rounded to one decimal", rewrite_json(OUT, _logp_to_one_decimal)),
    ("a compound registered under a later duplicate's id", rewrite_json(OUT, _later_id_registered)),
    ("a query reported that does not match", _extra_match),
    ("a failing compound on the shortlist", _failing_compound_shortlisted),
])
def test_wrong_but_plausible_outputs_are_rejected(built: BuiltTask, solved: Path, name: str, edit: Any) -> None:
    assert not built.verify_edited(solved, edit).passed, name


def test_reordered_and_reformatted_outputs_are_accepted(built: BuiltTask, solved: Path) -> None:
    def reorder(workspace: Path) -> None:
        value = read_json(workspace, OUT)
        value["invalid"].reverse()
        for compound in value["compounds"].values():
            compound["matches"].reverse()
        write_json(workspace, OUT, value)
        lines = (workspace / "out/shortlist.csv").read_text().splitlines()
        (workspace / "out/shortlist.csv").write_text("\n".join([lines[0], *reversed(lines[1:])]) + "\n")

    assert built.verify_edited(solved, reorder).passed


def test_a_changed_library_is_tampering(built: BuiltTask, solved: Path) -> None:
    def tamper(workspace: Path) -> None:
        path = workspace / "library/compounds.csv"
        path.write_text(path.read_text().replace("\n", "\r\n", 1))

    outcome = built.verify_edited(solved, tamper)
    assert not outcome.passed and outcome.failure_type == "tampered_inputs"


@pytest.mark.slow
def test_the_reviewer_approves_the_task_built_for_the_seed_skill(tmp_path: Path, env_provider: LocalVenvProvider) -> None:
    assert_reviewer_approves(tmp_path, env_provider, "molecule-props")


@pytest.mark.slow
def test_a_weakened_verifier_is_rejected_by_the_reviewer(tmp_path: Path, env_provider: LocalVenvProvider) -> None:
    assert_weakened_verifier_rejected(tmp_path, env_provider, "molecule-props")
