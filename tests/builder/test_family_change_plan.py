"""change-plan: a change request planned in the skill's template, naming the files the change
touches (not their look-alikes) and the CI test command; project-management instances schedule
a work breakdown by the critical path method with a missing task and a cycle to report."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from skillgym_builder.families.change_plan import ChangePlanFamily, plan_template
from skillgym_builder.families.seeds import seed_card
from skillgym_core.conformance import check_task
from skillgym_core.envbuild import LocalVenvProvider, lint_environment

from tests.builder.family_support import (
    BuiltTask,
    assert_reviewer_approves,
    assert_weakened_verifier_rejected,
    build,
    card_for,
    rewrite_json,
)

HARD: dict[str, float] = {"record_count": 12, "noise_level": 1, "distractor_files": 2, "multi_step": 2, "error_recovery": 1}
PLAN = "out/plan.md"


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory, env_provider: LocalVenvProvider) -> BuiltTask:
    card = card_for("release-scheduler", "project-management")
    return build(ChangePlanFamily(), card, HARD, tmp_path_factory.mktemp("plan"), env_provider)


@pytest.fixture(scope="module")
def solved(built: BuiltTask) -> Path:
    ok, workspace = built.solve()
    assert ok
    return workspace


def test_planning_skills_fit_and_others_do_not() -> None:
    family = ChangePlanFamily()
    assert family.suitability(card_for("release-scheduler", "project-management")).code == "subcategory"
    by_terms = family.suitability(card_for("release-scheduler", None, category="productivity"))
    assert by_terms.fits and by_terms.code == "terms"
    unrelated = family.suitability(card_for("eda-report", "data-analysis", category="data-science"))
    assert not unrelated.fits and unrelated.code == "subcategory_not_served"
    online = family.suitability(card_for("release-scheduler", "project-management", runtime={"network": {"required": True}}))
    assert (online.fits, online.code) == (False, "needs_network")


def test_the_template_is_read_from_the_skill() -> None:
    fact = plan_template(card_for("release-scheduler", "project-management"))
    assert fact is not None
    assert fact.value["title"] == "Delivery plan" and fact.value["checklist"] == "Work items"  # type: ignore[index]
    assert (fact.value["marker"], fact.value["min_items"], fact.value["max_items"]) == ("[ ]", 4, 8)  # type: ignore[index]
    assert fact.value["labels"] == ["In scope", "Out of scope"] and fact.value["max_questions"] == 2  # type: ignore[index]


def test_task_conforms_and_the_untouched_workspace_fails(built: BuiltTask) -> None:
    assert check_task(built.task.root) == []
    assert lint_environment(built.task) == []
    assert not built.untouched().passed
    protected = {p.path for p in built.metadata.protected_inputs}
    assert {"CHANGE_REQUEST.md", "work/breakdown.csv"} <= protected
    instruction = built.task.instruction()
    assert "release-scheduler" in instruction and "Work items" not in instruction and "Delivery plan" not in instruction


def test_reference_and_alternative_pass(built: BuiltTask, solved: Path) -> None:
    assert built.verify(solved).passed
    ok, alternative = built.solve("alternatives/ast-references.sh")
    assert ok and built.verify(alternative).passed


def test_skill_is_needed_and_the_hidden_skill_run_fails(built: BuiltTask) -> None:
    dependence = built.extra("skill_dependence")
    assert dependence["claimed"] and dependence["holds"], dependence
    ok, workspace = built.solve(with_skill=False)
    assert not ok and not built.verify(workspace).passed


def test_knobs_change_the_instance() -> None:
    family, card = ChangePlanFamily(), seed_card(ChangePlanFamily().spec)
    easy = family.instantiate(card, 0, {})
    for knob, value in [("record_count", 24), ("noise_level", 1), ("distractor_files", 4), ("multi_step", 3),
                        ("error_recovery", 1)]:
        raised = family.instantiate(card, 0, {knob: value})
        assert raised.workspace != easy.workspace or raised.tests != easy.tests, knob
    assert "work/breakdown.csv" not in easy.workspace  # task-planning: no schedule
    noisy = family.instantiate(card, 0, {"error_recovery": 1})
    assert "repo/docs/CHANGELOG.md" in noisy.workspace


def _lines(workspace: Path) -> list[str]:
    return (workspace / PLAN).read_text().split("\n")


def _write(workspace: Path, lines: list[str]) -> None:
    (workspace / PLAN).write_text("\n".join(lines))


def _request_function(workspace: Path) -> str:
    return re.findall(r"`(\w+)`", (workspace / "CHANGE_REQUEST.md").read_text())[0]


def _name_a_lookalike(workspace: Path) -> None:
    legacy = sorted(p.relative_to(workspace / "repo").as_posix() for p in (workspace / "repo/src").rglob("*_legacy.py"))
    lines = _lines(workspace)
    index = next(i for i, line in enumerate(lines) if line.startswith("[ ] Update the call"))
    lines[index] = f"[ ] Update `{legacy[0]}` as well."
    _write(workspace, lines)


def _substring_grep(workspace: Path) -> None:
    function = _request_function(workspace)
    repo = workspace / "repo"
    hits = sorted(p.relative_to(repo).as_posix() for p in repo.rglob("*.py") if function in p.read_text())
    lines = _lines(workspace)
    index = next(i for i, line in enumerate(lines) if line.startswith("[ ] Run "))
    lines.insert(index, "[ ] Update " + ", ".join(f"`{h}`" for h in hits) + ".")
    lines = [line for line in lines if not line.startswith("[ ] Extend")]
    _write(workspace, lines)


def _stale_path(workspace: Path) -> None:
    stale = re.search(r"lives in `([^`]+)`", (workspace / "CHANGE_REQUEST.md").read_text())
    assert stale
    lines = _lines(workspace)
    index = next(i for i, line in enumerate(lines) if line.startswith("[ ] Review"))
    lines[index] = f"[ ] Review `{stale.group(1)}` where the function lives."
    _write(workspace, lines)


def _readme_command(workspace: Path) -> None:
    readme = (workspace / "repo/README.md").read_text()
    command = re.search(r"test suite with `([^`]+)`", readme)
    assert command
    _write(workspace, [re.sub(r"Run `[^`]+`", f"Run `{command.group(1)}`", line) for line in _lines(workspace)])


def _validation_first(workspace: Path) -> None:
    lines = _lines(workspace)
    run = next(i for i, line in enumerate(lines) if line.startswith("[ ] Run "))
    first = next(i for i, line in enumerate(lines) if line.startswith("[ ] "))
    lines.insert(first, lines.pop(run))
    _write(workspace, lines)


def _generic_sections(workspace: Path) -> None:
    _write(workspace, [line.replace("## Work items", "## Steps").replace("[ ] ", "- [ ] ") for line in _lines(workspace)])


def _too_many_items(workspace: Path) -> None:
    lines = _lines(workspace)
    index = next(i for i, line in enumerate(lines) if line.startswith("[ ] Run "))
    lines[index:index] = [f"[ ] Check edge case number {n}." for n in range(1, 5)]
    _write(workspace, lines)


def _not_verb_first(workspace: Path) -> None:
    _write(workspace, [line.replace("[ ] Update the call", "[ ] The call") for line in _lines(workspace)])


def _missing_test_file(workspace: Path) -> None:
    _write(workspace, [line for line in _lines(workspace) if not line.startswith("[ ] Extend `tests/test_fees")
                       and "_flow.py" not in line])


def _too_many_questions(workspace: Path) -> None:
    _write(workspace, [*_lines(workspace), "- Who reviews?", "- When do we ship?"])


@pytest.mark.parametrize(("name", "edit"), [
    ("a look-alike legacy module named", _name_a_lookalike),
    ("every substring match of the function named", _substring_grep),
    ("the stale path from the request named", _stale_path),
    ("the README's stale test command", _readme_command),
    ("validation before the code changes", _validation_first),
    ("generic sections and bullets instead of the template", _generic_sections),
    ("more items than the skill allows", _too_many_items),
    ("items that do not start with a verb", _not_verb_first),
    ("a touched test file left out", _missing_test_file),
    ("more open questions than the skill allows", _too_many_questions),
])
def test_wrong_but_plausible_plans_are_rejected(built: BuiltTask, solved: Path, name: str, edit: Any) -> None:
    assert not built.verify_edited(solved, edit).passed, name


def _unreported_missing(value: dict[str, Any]) -> None:
    value["errors"] = [e for e in value["errors"] if e["kind"] != "missing_task"]


def _cycle_scheduled(value: dict[str, Any]) -> None:
    for task in value["unscheduled"]:
        value["tasks"][task] = {"earliest_start": value["total_duration"], "earliest_finish": value["total_duration"] + 1}
    value["unscheduled"] = []


def _slack_off_by_one(value: dict[str, Any]) -> None:
    value["total_duration"] += 1


def _path_reversed(value: dict[str, Any]) -> None:
    value["critical_path"].reverse()


@pytest.mark.parametrize(("name", "change"), [
    ("the missing task not reported", _unreported_missing),
    ("cycle tasks scheduled anyway", _cycle_scheduled),
    ("total one day off", _slack_off_by_one),
    ("critical path reversed", _path_reversed),
])
def test_wrong_schedules_are_rejected(built: BuiltTask, solved: Path, name: str, change: Any) -> None:
    assert not built.verify_edited(solved, rewrite_json("out/schedule.json", change)).passed, name


def test_a_whole_plan_in_a_fence_and_reordered_errors_are_accepted(built: BuiltTask, solved: Path) -> None:
    def fenced(workspace: Path) -> None:
        _write(workspace, ["```markdown", *_lines(workspace), "```"])

    assert built.verify_edited(solved, fenced).passed
    assert built.verify_edited(solved, rewrite_json("out/schedule.json", lambda v: v["errors"].reverse())).passed


def test_a_changed_protected_input_is_tampering(built: BuiltTask, solved: Path) -> None:
    def tamper(workspace: Path) -> None:
        path = workspace / "work/breakdown.csv"
        path.write_text(path.read_text().replace(",9,", ",8,"))

    outcome = built.verify_edited(solved, tamper)
    assert not outcome.passed and outcome.failure_type == "tampered_inputs"


def test_without_a_template_the_instruction_states_the_format(tmp_path: Path) -> None:
    plain = tmp_path / "skill"
    plain.mkdir()
    text = (card_for("release-scheduler", None).root / "SKILL.md").read_text()
    (plain / "SKILL.md").write_text(re.sub(r"~~~markdown.*?~~~", "", text, flags=re.S))
    output = ChangePlanFamily().instantiate(card_for("plain-plans", "task-planning", folder=plain), 0, {})
    assert not output.metadata["skill_claim"]["claimed"]
    assert "`## Steps`" in output.instruction and "4 to 12 checklist items" in output.instruction


@pytest.mark.slow
def test_the_reviewer_approves_the_task_built_for_the_seed_skill(tmp_path: Path, env_provider: LocalVenvProvider) -> None:
    assert_reviewer_approves(tmp_path, env_provider, "change-plan")


@pytest.mark.slow
def test_a_weakened_verifier_is_rejected_by_the_reviewer(tmp_path: Path, env_provider: LocalVenvProvider) -> None:
    assert_weakened_verifier_rejected(tmp_path, env_provider, "change-plan")
