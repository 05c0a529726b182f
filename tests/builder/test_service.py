from __future__ import annotations

from pathlib import Path

from skillgym_builder import BuilderService
from skillgym_builder.service import skill_build_report_key
from skillgym_builder.settings import BuilderSettings
from skillgym_core.conformance import check_task
from skillgym_core.contracts.events import EnvBuilt
from skillgym_core.store.base import get_json
from skillgym_core.taskrun import TaskRunner

from tests.builder.skills import FIXTURES, make_context, put_skill, wrap


def test_skill_becomes_a_conforming_task_that_solves_and_fails_untouched(tmp_path: Path) -> None:
    ctx = make_context(tmp_path)
    event = put_skill(ctx.store, FIXTURES / "csv-cleanup")
    outputs = BuilderService(ctx, BuilderSettings(preferred_templates=["section-trace"])).handle(wrap(event))
    assert len(outputs) == 1 and isinstance(outputs[0], EnvBuilt)
    built = outputs[0]
    assert built.builder == "template" and built.revision == 0
    with ctx.task_checkout(built.package_key) as task:
        assert check_task(task.root) == []
        config = task.config()
        assert config.metadata.task_id == built.task_id
        assert config.metadata.skill_id == event.skill_id
        assert (task.skills / "csv-cleanup" / "SKILL.md").is_file()
        queries = (task.workspace / "queries.jsonl").read_text()
        # the quotes are real lines of the skill
        assert "Trim surrounding whitespace from every cell" in queries or "Normalise headers" in queries or (
            sum(1 for line in queries.splitlines() if line) >= 4
        )
        runner = TaskRunner(ctx.sandbox)
        assert not runner.verify(task, runner.fresh_workspace(task, tmp_path)).passed
        solved = runner.fresh_workspace(task, tmp_path)
        assert runner.run_solution(task, solved).ok
        outcome = runner.verify(task, solved)
        assert outcome.passed, outcome.to_dict()
        assert set(outcome.rewards) == {"reward", "locations", "summary", "order"}


def test_build_is_deterministic(tmp_path: Path) -> None:
    ctx = make_context(tmp_path)
    event = put_skill(ctx.store, FIXTURES / "csv-cleanup")
    first = BuilderService(ctx).handle(wrap(event))[0]
    second = BuilderService(ctx).handle(wrap(event))[0]
    assert first == second
    assert ctx.store.get_bytes(first.package_key)


def test_skill_without_enough_content_is_skipped_with_a_reason(tmp_path: Path) -> None:
    skill = tmp_path / "tiny"
    skill.mkdir()
    (skill / "SKILL.md").write_text("---\nname: tiny\ndescription: too small\n---\n\n# Tiny\n\nShort.\n")
    ctx = make_context(tmp_path)
    event = put_skill(ctx.store, skill)
    assert BuilderService(ctx).handle(wrap(event)) == []
    report = get_json(ctx.store, skill_build_report_key(event.skill_id))
    assert report["reason"] == "unsuitable"
    assert "section-trace" in report["templates"]


def test_a_corpus_spreads_over_every_reasoning_profile(tmp_path: Path) -> None:
    import shutil

    from skillgym_builder.templates.registry import registry

    ctx = make_context(tmp_path)
    profiles = set()
    for index in range(12):
        fixture = tmp_path / "corpus" / f"csv-cleanup-{index}"
        shutil.copytree(FIXTURES / "csv-cleanup", fixture)
        (fixture / "SKILL.md").write_text((fixture / "SKILL.md").read_text() + f"\nVariant {index}.\n")
        event = put_skill(ctx.store, fixture)
        with BuilderService(ctx)._card(event.skill_id) as card:
            first = registry().candidates(card)[0]
        profiles.add(first.spec.profile)
    assert len(profiles) >= 2, profiles
