"""skill-script: a skill's own script, run in the sandbox on generated CSV exports, sets the
expectation; the agent must deliver what the skill's procedure gives (the script is its path)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from skillgym_builder.errors import UnsuitableSkillError
from skillgym_builder.families.script_cli import INPUT, OUTPUT, ScriptUnusable, analyse
from skillgym_builder.families.seeds import seed_skill_dir
from skillgym_builder.families.skill_script import SkillScriptFamily
from skillgym_core.conformance import check_task
from skillgym_core.envbuild import LocalVenvProvider

from tests.builder.family_support import (
    BuiltTask,
    assert_reviewer_approves,
    assert_weakened_verifier_rejected,
    build,
    card_for,
    rewrite_json,
    write_skill,
)

KNOBS = {"record_count": 60, "noise_level": 0.1, "distractor_files": 1, "long_horizon": 2}


SALES_MD = """\
    ---
    name: sales-summary
    description: Totals per region.
    ---
    # Sales summary
    A CSV with the columns `region`, `units` and `unit_price`.
    Run `python scripts/summary.py sales.csv` and keep its output.
"""
SALES_PY = """\
    import csv, json, sys
    totals = {}
    for row in csv.DictReader(open(sys.argv[1])):
        totals[row["region"]] = totals.get(row["region"], 0) + int(row["units"]) * float(row["unit_price"])
    print(json.dumps({"totals": {k: round(v, 2) for k, v in sorted(totals.items())}, "top": sorted(totals, key=totals.get)[::-1]}))
"""


def test_the_command_line_and_columns_are_read_from_thewrite_skill(tmp_path: Path) -> None:
    call = analyse(card_for("sales", "data-analysis", folder=write_skill(tmp_path / "s", SALES_MD, {"scripts/summary.py": SALES_PY})))
    assert call.script == "scripts/summary.py" and call.argv == (INPUT,) and call.origin == "SKILL.md example"
    assert [(c.name, c.kind) for c in call.columns] == [("region", "text"), ("units", "int"), ("unit_price", "float")]
    assert call.output_kind == "json" and not call.writes_file

    seed = analyse(card_for("seed", "data-analysis", folder=seed_skill_dir("skill-script")))
    assert seed.argv == (INPUT, "--cover", "1.5", "--output", OUTPUT) and seed.writes_file
    assert [c.name for c in seed.columns] == ["sku", "warehouse", "on_hand", "reorder_point", "unit_cost"]



def test_conversions_type_a_column_through_empty_cell_defaults_and_cleanup(tmp_path: Path) -> None:
    """``float(row.get("x") or 0)`` and ``int(row["n"].strip())`` read numbers: an optional numeric
    column is not generated as text the script cannot convert."""
    skill_md = SALES_MD.replace("`units` and `unit_price`", "`depth` and `evidence_points`")
    script = SALES_PY.replace('int(row["units"])', 'int(row["depth"].strip().replace(",", ""))').replace(
        'float(row["unit_price"])', 'float(row.get("evidence_points") or 0.0)')
    call = analyse(card_for("sales", "data-analysis", folder=write_skill(tmp_path / "s", skill_md, {"scripts/summary.py": script})))
    assert [(c.name, c.kind) for c in call.columns] == [("region", "text"), ("depth", "int"), ("evidence_points", "float")]


@pytest.mark.parametrize(("scripts", "code"), [
    ({}, "no_script"),
    ({"scripts/tool.py": "import json\nprint(json.dumps({}))\n"}, "script_reads_no_input"),
    ({"scripts/tool.py": "import csv, requests\nfor r in csv.DictReader(open('x')): print(float(r['price']))\n"},
     "script_imports"),
    ({"scripts/tool.py": "import csv, argparse\np = argparse.ArgumentParser()\np.add_argument('a')\np.add_argument('b')\n"
                         "for r in csv.DictReader(open(p.parse_args().a)): print(float(r['price']))\n"}, "script_invocation"),
])
def test_a_script_that_cannot_be_run_on_a_generated_input_says_why(tmp_path: Path, scripts: dict[str, str], code: str) -> None:
    folder = write_skill(tmp_path / "s", "---\nname: x\ndescription: y\n---\n# X\nNo command shown.\n", scripts)
    card = card_for("x", "data-analysis", folder=folder)
    with pytest.raises(ScriptUnusable) as caught:
        analyse(card)
    assert caught.value.code == code
    fit = SkillScriptFamily().suitability(card)
    assert not fit.fits and fit.code == code


def test_the_script_outranks_a_subcategory_family(tmp_path: Path) -> None:
    from skillgym_builder.families import registry

    card = card_for("sales", "accounting", folder=write_skill(tmp_path / "s", SALES_MD, {"scripts/summary.py": SALES_PY}))
    choice = registry().choose(card)
    assert choice.family is not None and choice.family.spec.id == "skill-script"


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory, env_provider: LocalVenvProvider) -> BuiltTask:
    card = card_for("stock-restock", "inventory", folder=seed_skill_dir("skill-script"))
    return build(SkillScriptFamily(), card, KNOBS, tmp_path_factory.mktemp("skill-script"), env_provider, seed=3)


@pytest.fixture(scope="module")
def solved(built: BuiltTask) -> Path:
    ok, workspace = built.solve()
    assert ok
    return workspace


def _outputs(built: BuiltTask) -> list[str]:
    return built.extra("skill_script")["outputs"]


def test_task_conforms_hides_the_script_and_fails_untouched(built: BuiltTask) -> None:
    assert check_task(built.task.root) == []
    instruction = built.task.instruction()
    assert "restock.py" not in instruction and "--cover" not in instruction and "1.5" not in instruction
    assert "Restock list and stock value from an inventory CSV export." in instruction  # the goal, in its author's words
    assert built.extra("skill_usage")["kind"] == "script"
    assert built.extra("skill_usage")["scripts"] == ["scripts/restock.py"]
    expected = json.loads((built.task.tests / "expected.json").read_text())
    assert expected["items"] == ["produced", "structure", "values", "order"]
    assert not built.untouched().passed


def test_reference_and_reformatted_alternative_pass(built: BuiltTask, solved: Path) -> None:
    assert built.verify(solved).passed
    ok, alternative = built.solve("alternatives/reformatted.sh")
    assert ok and built.verify(alternative).passed
    assert (alternative / _outputs(built)[0]).read_text() != (solved / _outputs(built)[0]).read_text()


def test_the_result_needs_thewrite_skill(built: BuiltTask) -> None:
    dependence = built.extra("skill_dependence")
    assert dependence["claimed"] and dependence["holds"], dependence


def _without_cover(value: dict[str, Any]) -> None:
    value["restock"] = value["restock"][1:]  # the safety factor changes which items are reordered
    value["items_below_cover"] -= 1


@pytest.mark.parametrize(("name", "change", "failing"), [
    ("one quantity off", lambda v: v["restock"][0].update(order_qty=v["restock"][0]["order_qty"] + 1), {"values", "order"}),
    ("list reversed", lambda v: v["restock"].reverse(), {"order"}),
    ("item dropped", _without_cover, {"structure", "values", "order"}),
    ("value not rounded", lambda v: v["value_by_warehouse"].update(
        {k: x + 0.004 for k, x in v["value_by_warehouse"].items()}), {"values", "order"}),
])
def test_wrong_but_plausible_results_fail(built: BuiltTask, solved: Path, name: str, change: Any, failing: set[str]) -> None:
    outcome = built.verify_edited(solved, rewrite_json(_outputs(built)[0], change))
    assert not outcome.passed, name
    assert {item for item, score in outcome.rewards.items() if item != "reward" and score < 1} == failing, name


def test_a_script_that_fails_on_the_inputs_makes_the_skill_unusable(tmp_path: Path, env_provider: LocalVenvProvider) -> None:
    broken = SALES_PY.replace("import csv, json, sys", "import csv, json, sys\n    raise SystemExit('no licence key')")
    folder = write_skill(tmp_path / "s", SALES_MD, {"scripts/summary.py": broken})
    with pytest.raises(UnsuitableSkillError) as caught:
        build(SkillScriptFamily(), card_for("sales", "data-analysis", folder=folder), {}, tmp_path / "b", env_provider)
    assert caught.value.details["skip_reason"] == "skill_script_unusable"
    assert "no licence key" in str(caught.value)


@pytest.mark.slow
def test_the_reviewer_approves_the_task_built_for_the_seedwrite_skill(tmp_path: Path, env_provider: LocalVenvProvider) -> None:
    assert_reviewer_approves(tmp_path, env_provider, "skill-script")


@pytest.mark.slow
def test_a_weakened_verifier_is_rejected_by_the_reviewer(tmp_path: Path, env_provider: LocalVenvProvider) -> None:
    assert_weakened_verifier_rejected(tmp_path, env_provider, "skill-script")
