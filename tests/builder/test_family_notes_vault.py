"""notes-vault: a generated Markdown vault indexed into JSON (backlinks, orphans, broken links,
duplicate titles, tags, overdue tasks) and an index page in the skill's layout; the verifier
recomputes from the protected vault."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from skillgym_builder.families.notes_vault import NotesVaultFamily, index_sections
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
)

HARD: dict[str, float] = {"record_count": 30, "noise_level": 1, "distractor_files": 1, "multi_step": 1,
                          "error_recovery": 1}
INDEX, PAGE = "out/vault_index.json", "out/index.md"


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory, env_provider: LocalVenvProvider) -> BuiltTask:
    card = card_for("zettel-gardener", "knowledge-management")
    return build(NotesVaultFamily(), card, HARD, tmp_path_factory.mktemp("vault"), env_provider)


@pytest.fixture(scope="module")
def solved(built: BuiltTask) -> Path:
    ok, workspace = built.solve()
    assert ok
    return workspace


def test_vault_skills_fit_and_others_do_not() -> None:
    family = NotesVaultFamily()
    assert family.suitability(card_for("zettel-gardener", "knowledge-management")).code == "subcategory"
    assert family.suitability(card_for("zettel-gardener", None, category="productivity")).code == "terms"
    unrelated = family.suitability(card_for("config-layers", "cloud-infrastructure", category="devops"))
    assert not unrelated.fits and unrelated.code == "subcategory_not_served"
    online = family.suitability(card_for("zettel-gardener", "note-taking", runtime={"network": {"required": True}}))
    assert (online.fits, online.code) == (False, "needs_network")


def test_the_page_layout_is_read_from_the_skill() -> None:
    fact = index_sections(card_for("zettel-gardener", "knowledge-management"))
    assert fact is not None and fact.value == ["Needs attention", "Unlinked notes", "Missing notes", "Tags"]


def test_task_conforms_and_the_untouched_workspace_fails(built: BuiltTask) -> None:
    assert check_task(built.task.root) == []
    assert lint_environment(built.task) == []
    assert not built.untouched().passed
    instruction = built.task.instruction()
    assert "zettel-gardener" in instruction and "Unlinked notes" not in instruction
    assert (built.task.workspace / "vault/.trash/Scratch.md").is_file()


def test_pyyaml_reference_and_stdlib_alternative_pass(built: BuiltTask, solved: Path) -> None:
    assert built.verify(solved).passed
    ok, alternative = built.solve("alternatives/stdlib-parser.sh")
    assert ok and built.verify(alternative).passed


def test_skill_is_needed_and_the_hidden_skill_run_fails(built: BuiltTask) -> None:
    dependence = built.extra("skill_dependence")
    assert dependence["claimed"] and dependence["holds"], dependence
    ok, workspace = built.solve(with_skill=False)
    assert not ok and not built.verify(workspace).passed


def test_knobs_change_the_instance() -> None:
    family = NotesVaultFamily()
    card = seed_card(family.spec)
    easy = family.instantiate(card, 0, {})
    for knob, value in [("record_count", 80), ("noise_level", 1), ("distractor_files", 1), ("multi_step", 1),
                        ("error_recovery", 1)]:
        raised = family.instantiate(card, 0, {knob: value})
        assert raised.workspace != easy.workspace, knob
    assert len(family.instantiate(card, 0, {"record_count": 80}).workspace) > len(easy.workspace)


def _orphan_linked_from_trash(value: dict[str, Any]) -> None:
    """Counting the trash folder: its link makes an orphan look linked."""
    victim = sorted(value["orphans"])[0]
    value["orphans"].remove(victim)
    value["backlinks"][victim] = [".trash/Scratch.md"]


def _code_block_link_counted(value: dict[str, Any]) -> None:
    value["broken_links"].append({"source": sorted(value["backlinks"])[0], "target": "Not a link"})


def _case_sensitive_links(value: dict[str, Any]) -> None:
    note, sources = next(iter(value["backlinks"].items()))
    value["broken_links"].append({"source": sources[0], "target": Path(note).stem.lower()})
    value["backlinks"][note] = sources[1:]


def _tag_occurrences(value: dict[str, Any]) -> None:
    tag = max(value["tags"], key=value["tags"].get)
    value["tags"][tag] += 1


def _hash_kept_in_tags(value: dict[str, Any]) -> None:
    value["tags"] = {f"#{t}": n for t, n in value["tags"].items()}


def _done_task_overdue(value: dict[str, Any]) -> None:
    value["overdue_tasks"].append({"note": value["orphans"][0], "task": "Book the venue", "due": "2020-01-01"})


def _invalid_note_dropped(value: dict[str, Any]) -> None:
    value["invalid_front_matter"] = []
    value["notes"] -= 1


def _titles_by_file_name(value: dict[str, Any]) -> None:
    value["duplicate_titles"] = []


@pytest.mark.parametrize(("name", "change"), [
    ("the trash folder's links counted", _orphan_linked_from_trash),
    ("a link inside a code block counted", _code_block_link_counted),
    ("links matched with case", _case_sensitive_links),
    ("tags counted per occurrence", _tag_occurrences),
    ("tags kept with their #", _hash_kept_in_tags),
    ("a task outside the open ones reported overdue", _done_task_overdue),
    ("the note with broken front matter dropped", _invalid_note_dropped),
    ("duplicate titles judged by file name", _titles_by_file_name),
])
def test_wrong_but_plausible_indexes_are_rejected(built: BuiltTask, solved: Path, name: str, change: Any) -> None:
    assert not built.verify_edited(solved, rewrite_json(INDEX, change)).passed, name


def _edit_page(change: Any) -> Any:
    def edit(workspace: Path) -> None:
        path = workspace / PAGE
        path.write_text(change(path.read_text(), read_json(workspace, INDEX)))

    return edit


@pytest.mark.parametrize(("name", "change"), [
    ("generic section names", lambda text, _: text.replace("## Unlinked notes", "## Orphans")),
    ("sections out of order", lambda text, _: re.sub(r"## Needs attention(.*?)(## Unlinked notes)",
                                                     lambda m: "## Tags\n\n" + m.group(2), text, flags=re.S)),
    ("an orphan left off the page", lambda text, index: text.replace(f"[[{index['orphans'][0][:-3]}]]", "")),
    ("a broken target left off the page", lambda text, index: text.replace(
        f"[[{index['broken_links'][0]['target']}]]", index["broken_links"][0]["target"])),
])
def test_wrong_index_pages_are_rejected(built: BuiltTask, solved: Path, name: str, change: Any) -> None:
    assert not built.verify_edited(solved, _edit_page(change)).passed, name


def test_reordered_lists_are_accepted(built: BuiltTask, solved: Path) -> None:
    def reverse(value: dict[str, Any]) -> None:
        for key in ("orphans", "broken_links", "overdue_tasks", "duplicate_titles"):
            value[key].reverse()

    assert built.verify_edited(solved, rewrite_json(INDEX, reverse)).passed


def test_a_changed_note_is_tampering(built: BuiltTask, solved: Path) -> None:
    protected = built.metadata.protected_inputs[0].path

    def tamper(workspace: Path) -> None:
        (workspace / protected).write_text((workspace / protected).read_text() + "\n[[Brand new]]\n")

    outcome = built.verify_edited(solved, tamper)
    assert not outcome.passed and outcome.failure_type == "tampered_inputs"


def test_without_a_layout_the_instruction_states_the_sections(tmp_path: Path) -> None:
    plain = tmp_path / "skill"
    plain.mkdir()
    text = (card_for("zettel-gardener", None).root / "SKILL.md").read_text()
    (plain / "SKILL.md").write_text(text.split("## Hub note structure")[0])
    output = NotesVaultFamily().instantiate(card_for("plain-notes", "note-taking", folder=plain), 0, {})
    assert not output.metadata["skill_claim"]["claimed"]
    assert "`Orphans`, `Broken links`, `Overdue tasks`" in output.instruction


@pytest.mark.slow
def test_the_reviewer_approves_the_task_built_for_the_seed_skill(tmp_path: Path, env_provider: LocalVenvProvider) -> None:
    assert_reviewer_approves(tmp_path, env_provider, "notes-vault")


@pytest.mark.slow
def test_a_weakened_verifier_is_rejected_by_the_reviewer(tmp_path: Path, env_provider: LocalVenvProvider) -> None:
    assert_weakened_verifier_rejected(tmp_path, env_provider, "notes-vault")
