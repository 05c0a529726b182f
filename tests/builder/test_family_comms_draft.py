"""comms-draft: a team's weekly update written from a tracker export, metrics and meeting notes
in the format the skill's template prescribes; the template's sections, header, limits and
banned terms make the skill necessary."""

from __future__ import annotations

import datetime as dt
import json
import re
from pathlib import Path
from typing import Any

import pytest
from skillgym_builder.families import comms_template
from skillgym_builder.families.comms_draft import CommsDraftFamily
from skillgym_builder.families.seeds import seed_card, seed_skill_dir
from skillgym_core.conformance import check_task
from skillgym_core.envbuild import LocalVenvProvider, lint_environment

from tests.builder.family_support import (
    BuiltTask,
    assert_reviewer_approves,
    assert_weakened_verifier_rejected,
    build,
    card_for,
)

HARD = {"record_count": 18, "noise_level": 0.3, "distractor_files": 1, "multi_step": 1, "error_recovery": 1}
UPDATE = "out/update.md"


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory, env_provider: LocalVenvProvider) -> BuiltTask:
    """The seed skill: heading-style template in templates/, sentence limits, banned terms."""
    family = CommsDraftFamily()
    return build(family, seed_card(family.spec), HARD, tmp_path_factory.mktemp("comms"), env_provider)


@pytest.fixture(scope="module")
def solved(built: BuiltTask) -> Path:
    ok, workspace = built.solve()
    assert ok
    return workspace


@pytest.fixture(scope="module")
def built_lines(tmp_path_factory: pytest.TempPathFactory, env_provider: LocalVenvProvider) -> BuiltTask:
    """The fixture skill: `Label: text` lines with an emoji header, in examples/team-update.md."""
    card = card_for("team-3p-updates", "business-communication", category="writing")
    return build(CommsDraftFamily(), card, {"multi_step": 1}, tmp_path_factory.mktemp("comms-lines"), env_provider)


def expected(built: BuiltTask) -> dict[str, Any]:
    return json.loads((built.task.tests / "expected.json").read_text())


def test_fit_by_subcategory_and_terms_and_a_non_fit_with_its_reason() -> None:
    family = CommsDraftFamily()
    assert family.suitability(card_for("team-3p-updates", "business-communication")).code == "subcategory"
    by_terms = family.suitability(card_for("team-3p-updates", None, category="writing"))
    assert by_terms.fits and by_terms.code == "terms"
    mislabelled = family.suitability(card_for("csv-cleanup", "editing-proofreading", category="writing"))
    assert not mislabelled.fits and "no update" in mislabelled.reason
    unrelated = family.suitability(card_for("eda-report", "data-analysis", category="data-science"))
    assert not unrelated.fits and unrelated.code == "subcategory_not_served"


def test_the_template_is_read_from_the_skills_files() -> None:
    seed = comms_template.read_format(comms_template.skill_files(str(seed_skill_dir("comms-draft"))))
    assert seed is not None and seed["style"] == "headings" and seed["level"] == 2
    assert [s["label"] for s in seed["sections"]] == ["Shipped", "Numbers", "Next up", "Blockers"]
    assert [s["max_sentences"] for s in seed["sections"]] == [2, 1, 2, 2]
    assert "synergy" in seed["banned"] and seed["source"].startswith("templates/")
    lines = comms_template.read_format(comms_template.skill_files(str(card_for("team-3p-updates", None).root)))
    assert lines is not None and lines["style"] == "lines" and lines["header"] == {"team": True, "dates": True, "emoji": True}
    assert [(s["label"], s["kind"]) for s in lines["sections"]] == [("Wins", "progress"), ("Next", "plans"), ("Risks", "problems")]
    assert comms_template.read_format(comms_template.skill_files(str(card_for("csv-cleanup", None).root))) is None


def test_task_conforms_and_the_untouched_workspace_fails(built: BuiltTask) -> None:
    assert check_task(built.task.root) == []
    assert lint_environment(built.task) == []
    assert not built.untouched().passed
    assert built.extra("family") == "comms-draft" and built.extra("knobs") == HARD


def test_reference_and_alternative_pass(built: BuiltTask, solved: Path) -> None:
    assert built.verify(solved).passed
    ok, alternative = built.solve("alternatives/string-template.sh")
    assert ok and built.verify(alternative).passed


def test_line_style_skill_reference_and_alternative_pass(built_lines: BuiltTask) -> None:
    ok, workspace = built_lines.solve()
    assert ok and built_lines.verify(workspace).passed
    first = (workspace / UPDATE).read_text().splitlines()[0]
    assert "📈" in first and expected(built_lines)["team"] in first
    ok, alternative = built_lines.solve("alternatives/string-template.sh")
    assert ok and built_lines.verify(alternative).passed


def test_skill_is_needed_and_the_hidden_skill_run_fails(built: BuiltTask, built_lines: BuiltTask) -> None:
    for task in (built, built_lines):
        dependence = task.extra("skill_dependence")
        assert dependence["claimed"] and dependence["holds"], dependence
        assert "update_format" in dependence["facts"]
        ok, workspace = task.solve(with_skill=False)
        assert not ok and not task.verify(workspace).passed


def test_the_format_comes_from_the_skill_not_the_instruction(built: BuiltTask) -> None:
    instruction = built.task.instruction()
    assert "prescribes" in instruction
    assert not re.search(r"Shipped|Next up|Blockers|synergy|2 sentences", instruction)


def test_knobs_change_the_instance() -> None:
    family = CommsDraftFamily()
    card = seed_card(family.spec)
    base = family.instantiate(card, 0, {})
    files = set(base.workspace)
    assert files == {"sources/tracker.csv", "sources/metrics.json", "sources/meeting-notes.md"}
    assert b"corrections" not in base.workspace["sources/meeting-notes.md"]
    more = family.instantiate(card, 0, {"record_count": 30})
    assert more.workspace["sources/tracker.csv"].count(b"\n") > base.workspace["sources/tracker.csv"].count(b"\n") + 15
    noisy = family.instantiate(card, 0, {"noise_level": 0.3}).workspace["sources/tracker.csv"].decode()
    assert re.search(r"\d{4}/\d\d/\d\d|[A-Z][a-z]{2} \d{1,2}, \d{4}", noisy)
    decoys = family.instantiate(card, 0, {"distractor_files": 1}).workspace
    assert any(p.startswith("sources/archive/") for p in decoys) and len(decoys) == 5
    notes = family.instantiate(card, 0, {"multi_step": 1}).workspace["sources/meeting-notes.md"].decode()
    assert "new target date" in notes and "unblocked" in notes and "corrected value" in notes
    draft = family.instantiate(card, 0, {"error_recovery": 1})
    assert "drafts/update-draft.md" in draft.workspace and "drafts/update-draft.md" in draft.protected
    assert any(term in draft.workspace["drafts/update-draft.md"].decode() for term in ("circle back", "synergy"))


def test_without_a_template_the_instruction_states_the_format() -> None:
    card = card_for("team-3p-updates", None, category="writing", folder=None)
    plain = CommsDraftFamily().instantiate(card_for("csv-cleanup", None), 0, {})
    assert not plain.metadata["skill_claim"]["claimed"]
    assert "`Done: ...`" in plain.instruction and "`Blocked: ...`" in plain.instruction
    assert CommsDraftFamily().instantiate(card, 0, {}).metadata["skill_claim"]["claimed"]


def _edit_text(change: Any) -> Any:
    def edit(workspace: Path) -> None:
        path = workspace / UPDATE
        path.write_text(change(path.read_text(), workspace))

    return edit


def _section_order_swapped(text: str, _: Path) -> str:
    parts = re.split(r"(?m)^(?=## )", text)
    parts[1], parts[2] = parts[2], parts[1]
    return "".join(parts)


def _stale_figure(text: str, workspace: Path) -> str:
    readings = json.loads((workspace / "sources/metrics.json").read_text())["readings"]
    old = next(r for r in readings if r["status"] == "superseded")
    final = next(r for r in readings if r["metric"] == old["metric"] and r["status"] == "final" and r["team"] == old["team"])
    return text.replace(str(final["value"]), str(old["value"])) + f"\n{old['metric']} was {old['value']} earlier.\n"


def _other_teams_item(text: str, workspace: Path) -> str:
    team = text.splitlines()[0].lstrip("# ").split(" weekly")[0]
    rows = (workspace / "sources/tracker.csv").read_text().splitlines()[1:]
    other = next(r.split(",")[0] for r in rows if team.lower() not in r.lower())
    return text.replace("\n## Numbers", f" Also {other}.\n\n## Numbers", 1)


def _blocker_without_owner(text: str, _: Path) -> str:
    return re.sub(r", owner [A-Z][a-z]+ [A-Z][a-z]+", "", text)


def _tracker_dates_ignoring_the_notes(text: str, workspace: Path) -> str:
    notes = (workspace / "sources/meeting-notes.md").read_text()
    new, old = re.search(r"new target date (\S+) \(the tracker still says (\S+)\)", notes).groups()  # type: ignore[union-attr]
    return text.replace(new, old, 1)


def _banned_term(text: str, _: Path) -> str:
    return text.rstrip("\n") + " We will circle back next week.\n"


def _too_many_sentences(text: str, _: Path) -> str:
    return text.replace("\n## Next up", " More soon. Stay tuned. Thanks all.\n\n## Next up", 1)


def _pasted_notes(text: str, workspace: Path) -> str:
    return text + "\n" + (workspace / "sources/meeting-notes.md").read_text()


def _skill_text_copied(text: str, _: Path) -> str:
    return text.replace("\n## Next up", " Leadership reads one short update per team each Friday.\n\n## Next up", 1)


def _placeholder_left(text: str, _: Path) -> str:
    return text.replace("## Blockers\n", "## Blockers\n[at most 2 sentences: blocked items, what blocks them and who owns them]\n")


@pytest.mark.parametrize(("name", "edit"), [
    ("sections swapped", _edit_text(_section_order_swapped)),
    ("a superseded figure", _edit_text(_stale_figure)),
    ("another team's item", _edit_text(_other_teams_item)),
    ("blocker owners left out", _edit_text(_blocker_without_owner)),
    ("the tracker's date the notes moved", _edit_text(_tracker_dates_ignoring_the_notes)),
    ("a banned term", _edit_text(_banned_term)),
    ("over the sentence limit", _edit_text(_too_many_sentences)),
    ("the notes pasted", _edit_text(_pasted_notes)),
    ("the skill's text copied", _edit_text(_skill_text_copied)),
    ("a template placeholder left", _edit_text(_placeholder_left)),
    ("the header dropped", _edit_text(lambda text, _: text.split("\n", 1)[1])),
])
def test_wrong_but_plausible_updates_are_rejected(built: BuiltTask, solved: Path, name: str, edit: Any) -> None:
    outcome = built.verify_edited(solved, edit)
    assert not outcome.passed, name


def test_reworded_and_reformatted_updates_are_accepted(built: BuiltTask, solved: Path) -> None:
    want = expected(built)
    start, end = (dt.date.fromisoformat(want[k]) for k in ("start", "end"))
    assert start.month == end.month

    def reword(text: str, _: Path) -> str:
        text = re.sub(r"(\d{4})-(\d\d)-(\d\d)", lambda m: _spoken(m), text)  # month-name dates
        lines = text.splitlines()
        lines[0] = f"# {want['team']} weekly update, {start.strftime('%B')} {start.day}-{end.day}"  # a range
        return "\n\n".join(line.replace(" ", "  ") for line in lines) + "\n"

    assert built.verify_edited(solved, _edit_text(reword)).passed


def test_a_line_style_header_without_the_emoji_is_rejected(built_lines: BuiltTask) -> None:
    ok, workspace = built_lines.solve()
    assert ok
    outcome = built_lines.verify_edited(workspace, _edit_text(lambda text, _: text.replace("📈 ", "", 1)))
    assert not outcome.passed


def _spoken(match: re.Match[str]) -> str:
    day = dt.date(int(match.group(1)), int(match.group(2)), int(match.group(3)))
    return f"{day.strftime('%B')} {day.day}"


def test_a_changed_source_is_tampering(built: BuiltTask, solved: Path) -> None:
    protected = [item.path for item in built.metadata.protected_inputs]
    assert "sources/tracker.csv" in protected and "drafts/update-draft.md" in protected

    def tamper(workspace: Path) -> None:
        path = workspace / "sources/tracker.csv"
        path.write_text(path.read_text() + "PLAT-1,Extra,x,y,Done,2025-01-01,,\n")

    outcome = built.verify_edited(solved, tamper)
    assert not outcome.passed and outcome.failure_type == "tampered_inputs"


@pytest.mark.slow
def test_the_reviewer_approves_the_task_built_for_the_seed_skill(tmp_path: Path, env_provider: LocalVenvProvider) -> None:
    assert_reviewer_approves(tmp_path, env_provider, "comms-draft")


@pytest.mark.slow
def test_a_weakened_verifier_is_rejected_by_the_reviewer(tmp_path: Path, env_provider: LocalVenvProvider) -> None:
    assert_weakened_verifier_rejected(tmp_path, env_provider, "comms-draft")
