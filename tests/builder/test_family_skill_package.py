"""skill-package: draft agent skills with planted loader defects, a tool manifest and prompt
templates, fixed in place and packaged; the skill's own key list (and, for the seed skill, its
description limit and archive extension) make the skill necessary."""

from __future__ import annotations

import io
import json
import shutil
import zipfile
from pathlib import Path
from typing import Any

import pytest
from skillgym_builder.families import skill_package
from skillgym_builder.families.seeds import seed_card
from skillgym_builder.families.skill_package import SkillPackageFamily
from skillgym_core.conformance import check_task
from skillgym_core.envbuild import LocalVenvProvider, lint_environment

from tests.builder.family_support import (
    BuiltTask,
    assert_reviewer_approves,
    assert_weakened_verifier_rejected,
    build,
    card_for,
    solution_helper,
)

KNOBS = {"record_count": 5, "noise_level": 1.0, "distractor_files": 1, "multi_step": 1, "error_recovery": 1,
         "long_horizon": 1}


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory, env_provider: LocalVenvProvider) -> BuiltTask:
    card = card_for("skill-linting", "skill-authoring")
    return build(SkillPackageFamily(), card, KNOBS, tmp_path_factory.mktemp("skills"), env_provider)


@pytest.fixture(scope="module")
def solved(built: BuiltTask) -> Path:
    ok, workspace = built.solve()
    assert ok
    return workspace


def _with(defect: str, built: BuiltTask) -> str:
    return next(slug for slug, kinds in sorted(built.extra("defects").items()) if defect in kinds)


def test_skill_authoring_and_tooling_skills_fit_and_others_do_not() -> None:
    family = SkillPackageFamily()
    assert family.suitability(card_for("skill-linting", "skill-authoring")).code == "subcategory"
    assert family.suitability(card_for("skill-linting", None, category="ai-agents")).code == "terms"
    unrelated = family.suitability(card_for("csv-cleanup", "data-cleaning", category="data-science"))
    assert not unrelated.fits and unrelated.code == "subcategory_not_served"


def test_task_conforms_and_the_untouched_workspace_fails(built: BuiltTask) -> None:
    assert check_task(built.task.root) == []
    assert lint_environment(built.task) == []
    assert not built.untouched().passed
    protected = {p.path for p in built.metadata.protected_inputs}
    assert "drafts/docs/template/SKILL.md" in protected
    assert not any(path.endswith("/SKILL.md") and not path.startswith("drafts/docs/") for path in protected)


def test_reference_and_stdlib_alternative_pass(built: BuiltTask, solved: Path) -> None:
    assert built.verify(solved).passed
    ok, alternative = built.solve("alternatives/stdlib-fixer.sh")
    assert ok and built.verify(alternative).passed


def test_the_skills_key_list_is_needed_and_the_hidden_skill_run_fails(built: BuiltTask) -> None:
    dependence = built.extra("skill_dependence")
    assert dependence["claimed"] and dependence["holds"], dependence
    assert dependence["facts"] == ["allowed_keys"]
    instruction = built.task.instruction()
    assert "the `skill-linting` skill in your skills directory allows" in instruction and "`license`" not in instruction
    ok, workspace = built.solve(with_skill=False)
    assert not ok and not built.verify(workspace).passed


def test_knobs_change_the_instance() -> None:
    family, card = SkillPackageFamily(), card_for("skill-linting", "skill-authoring")
    easy = family.instantiate(card, 0, {})
    hard = family.instantiate(card, 0, KNOBS)
    skills = {rel.split("/")[1] for rel in easy.workspace if rel.endswith("/SKILL.md")}
    assert len(skills) == 3 and "drafts/docs/README.md" not in easy.workspace
    assert len({rel.split("/")[1] for rel in hard.workspace if rel.endswith("/SKILL.md")} - {"docs"}) == 5
    assert any(rel.endswith(".DS_Store") for rel in hard.workspace) and any(r.startswith("tools/") for r in hard.workspace)
    assert not any(rel.startswith(("tools/", "prompts/")) for rel in easy.workspace)
    assert any("yaml" in kinds for kinds in hard.metadata["defects"].values())
    assert "package" not in easy.instruction and "/app/dist/" in hard.instruction
    noisy = family.instantiate(card, 0, {"noise_level": 1.0})
    assert any(data.startswith(b"\xef\xbb\xbf") or b"\r\n" in data for data in noisy.workspace.values())
    expected = json.loads(hard.tests["expected.json"])
    assert expected["package"] and expected["tools"] and expected["prompts"]


def test_agent_tooling_and_prompt_skills_get_their_artifacts() -> None:
    family, card = SkillPackageFamily(), card_for("skill-linting", "agent-tooling")
    assert any(rel.startswith("tools/") for rel in family.instantiate(card, 0, {}).workspace)
    card = card_for("skill-linting", "prompt-engineering")
    assert any(rel.startswith("prompts/") for rel in family.instantiate(card, 0, {}).workspace)


def _rewrite(rel: str, change: Any) -> Any:
    def edit(workspace: Path) -> None:
        path = workspace / rel
        path.write_text(change(path.read_text()))

    return edit


def _skill(slug: str, change: Any) -> Any:
    return _rewrite(f"drafts/{slug}/SKILL.md", change)


def _first_tool_type(text: str) -> str:
    data = json.loads(text)
    for tool in data["tools"]:
        for prop in tool["input_schema"]["properties"].values():
            if prop["type"] == "integer":
                prop["type"] = "int"
                return json.dumps(data)
    raise AssertionError("no integer property")


def _duplicate_tool(text: str) -> str:
    data = json.loads(text)
    data["tools"].append(data["tools"][0])
    return json.dumps(data)


def _flat_archive(built: BuiltTask) -> Any:
    def edit(workspace: Path) -> None:
        slug = sorted(built.extra("defects"))[0]
        target = workspace / "dist" / f"{slug}.zip"
        with zipfile.ZipFile(target) as archive:
            members = {info.filename: archive.read(info) for info in archive.infolist()}
        buffer = io.BytesIO()
        with zipfile.ZipFile(buffer, "w") as archive:
            for name, data in members.items():
                archive.writestr(name.split("/", 1)[1], data)
        target.write_bytes(buffer.getvalue())

    return edit


def _template_packaged(workspace: Path) -> None:
    shutil.copy(next((workspace / "dist").iterdir()), workspace / "dist" / "docs.zip")


def _deleted_skill(built: BuiltTask) -> Any:
    def edit(workspace: Path) -> None:
        slug = _with("yaml", built)
        shutil.rmtree(workspace / "drafts" / slug)
        (workspace / "dist" / f"{slug}.zip").unlink()

    return edit


def _not_executable(workspace: Path) -> None:
    for script in sorted(workspace.glob("drafts/*/scripts/*.sh")):
        script.chmod(0o644)


def _variables_with_spare(text: str) -> str:
    return text.replace("variables:\n", "variables:\n- signature\n", 1)


def _wrong(built: BuiltTask) -> list[tuple[str, Any]]:
    named, linked = _with("name", built), _with("link", built)
    return [
        ("the name left with underscores", _skill(named, lambda t: t.replace(f"name: {named}", f"name: {named.replace('-', '_')}", 1))),
        ("a broken link deleted instead of fixed", _skill(linked, lambda t: t.replace("](references/", "](", 1))),
        ("a body line dropped", _skill(linked, lambda t: t.replace("## When to use\n", "", 1))),
        ("an unknown key kept at the top", _skill(_with("unknown_key", built), lambda t: t.replace("---\n", "---\nowner: someone\n", 1))),
        ("a byte-order mark left in", _skill(named, lambda t: "\ufeff" + t)),
        ("a type alias left in the manifest", lambda ws: _rewrite(next(p.relative_to(ws).as_posix() for p in (ws / "tools").iterdir()), _first_tool_type)(ws)),
        ("a duplicate tool kept", lambda ws: _rewrite(next(p.relative_to(ws).as_posix() for p in (ws / "tools").iterdir()), _duplicate_tool)(ws)),
        ("an unused variable declared", lambda ws: _rewrite(next(p.relative_to(ws).as_posix() for p in (ws / "prompts").iterdir()), _variables_with_spare)(ws)),
        ("archive entries without the skill folder", _flat_archive(built)),
        ("the docs folder packaged as a skill", _template_packaged),
        ("the failing skill deleted", _deleted_skill(built)),
        ("scripts left without the executable bit", _not_executable),
    ]


def test_wrong_but_plausible_results_are_rejected(built: BuiltTask, solved: Path) -> None:
    for name, edit in _wrong(built):
        assert not built.verify_edited(solved, edit).passed, name


def test_reformatted_manifest_and_trailing_spaces_are_accepted(built: BuiltTask, solved: Path) -> None:
    def reformat(workspace: Path) -> None:
        for path in (workspace / "tools").iterdir():
            data = json.loads(path.read_text())
            data["tools"].reverse()
            path.write_text(json.dumps(data, indent=3))
        for path in workspace.glob("drafts/*/SKILL.md"):
            path.write_text("".join(line.rstrip("\n") + " \n" for line in path.read_text().splitlines(keepends=True)))

    assert built.verify_edited(solved, reformat).passed


def test_a_changed_reference_file_is_tampering(built: BuiltTask, solved: Path) -> None:
    protected = next(p.path for p in built.metadata.protected_inputs if "/references/" in p.path)

    def tamper(workspace: Path) -> None:
        (workspace / protected).write_text("rewritten\n")

    outcome = built.verify_edited(solved, tamper)
    assert not outcome.passed and outcome.failure_type == "tampered_inputs"


def test_seed_skill_rules_come_from_the_skill() -> None:
    family = SkillPackageFamily()
    output = family.instantiate(seed_card(family.spec), 0, {"multi_step": 1})
    claim = output.metadata["skill_claim"]
    assert claim["claimed"] and set(claim["facts"]) == {"description_max", "allowed_keys", "archive_ext"}
    rules = json.loads(output.tests["expected.json"])["rules"]
    assert rules["description_max"] == 300 and rules["archive_ext"] == ".skill" and "version" in rules["allowed_keys"]
    assert "300" not in output.instruction and ".skill" not in output.instruction


def test_without_the_skill_facts_the_instruction_states_the_rules() -> None:
    output = SkillPackageFamily().instantiate(card_for("csv-cleanup", None), 0, {"multi_step": 1})
    assert not output.metadata["skill_claim"]["claimed"]
    assert "at most 1024 characters" in output.instruction and "`<skill-name>.zip`" in output.instruction
    assert "`allowed-tools`" in output.instruction


@pytest.mark.parametrize("fixture", ["skill-linting", "seed", "csv-cleanup"])
def test_solution_side_rule_readers_agree_with_the_builder(fixture: str) -> None:
    family = SkillPackageFamily()
    card = seed_card(family.spec) if fixture == "seed" else card_for(fixture, None)
    namespace = solution_helper("skill-package", "skill_rules.py", card.root / "SKILL.md")  # as solutions import it
    for reader, builder in [("description_max", skill_package.description_max), ("allowed_keys", skill_package.allowed_keys),
                            ("archive_extension", skill_package.archive_extension)]:
        fact = builder(card)
        assert namespace[reader]() == (fact.value if fact else None), reader


@pytest.mark.slow
def test_the_reviewer_approves_the_task_built_for_the_seed_skill(tmp_path: Path, env_provider: LocalVenvProvider) -> None:
    assert_reviewer_approves(tmp_path, env_provider, "skill-package")


@pytest.mark.slow
def test_a_weakened_verifier_is_rejected_by_the_reviewer(tmp_path: Path, env_provider: LocalVenvProvider) -> None:
    assert_weakened_verifier_rejected(tmp_path, env_provider, "skill-package")
