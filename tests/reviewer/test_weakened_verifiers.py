"""Each builder template's task passes review, and every verifier weakened by making one rubric
item's check always pass (``lambda: True`` in its ``run([...])`` list) is rejected as too lax,
the mutation gate naming that item as one that never failed."""

from __future__ import annotations

from pathlib import Path

import pytest
from skillgym_builder import BuilderService, BuilderSettings
from skillgym_builder.templates import registry
from skillgym_builder.templates.base import data_text
from skillgym_core.contracts.events import EnvBuilt
from skillgym_core.sandbox.workspace import safe_copy_tree
from skillgym_reviewer import review_task_dir

from tests.builder.skills import FIXTURES, make_context, put_skill, wrap
from tests.reviewer import weaken
from tests.reviewer.weaken import rubric_checks, weaken_task

TEMPLATES = registry().ids()
CASES = [(template_id, None) for template_id in TEMPLATES] + [
    (template_id, item) for template_id in TEMPLATES for item in rubric_checks(data_text("templates", template_id, "verify.py"))
]


def _copy(source: Path, target: Path) -> Path:
    safe_copy_tree(source, target, max_bytes=64 * 1024 * 1024, max_files=5000)
    return target


@pytest.fixture(scope="module")
def template_tasks(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("template-tasks")
    ctx = make_context(root)
    event = put_skill(ctx.store, FIXTURES / "csv-cleanup")
    tasks = {}
    for template_id in TEMPLATES:
        built = BuilderService(ctx, BuilderSettings(preferred_templates=[template_id])).handle(wrap(event))[0]
        assert isinstance(built, EnvBuilt) and built.template == template_id
        with ctx.task_checkout(built.package_key) as task:
            tasks[template_id] = _copy(task.root, root / template_id)
    return tasks


def test_weakening_rewrites_exactly_one_check() -> None:
    source = data_text("templates", "procedure-dag", "verify.py")
    assert rubric_checks(source) == ["plan", "stages"]
    weakened = weaken.weakened(source, "stages")
    assert "('stages', lambda: True)" in weakened and "('plan', plan)" in weakened


@pytest.mark.slow
@pytest.mark.parametrize(("template_id", "item"), CASES, ids=[f"{t}-{i or 'original'}" for t, i in CASES])
def test_every_weakened_verifier_is_rejected_as_too_lax(
    template_tasks: dict[str, Path], tmp_path: Path, template_id: str, item: str | None
) -> None:
    task_root = _copy(template_tasks[template_id], tmp_path / template_id)
    if item is None:
        report = review_task_dir(task_root)
        assert report.passed, report.reasons
        assert report.mutation is not None and report.mutation["score"] >= 0.9 and not report.mutation["unkilled_items"]
        return
    weaken_task(task_root, item)
    report = review_task_dir(task_root)
    gates = {gate.gate: gate for gate in report.gates}
    assert gates["validity"].passed  # the weakened verifier still tells the reference from the untouched workspace
    assert not report.passed and report.failure_type == "too_lax", report.reasons
    mutation = gates["mutation"]
    assert not mutation.passed and mutation.failure_type == "too_lax"
    assert item in mutation.details["unkilled_items"]
    assert any(f"rubric items that never failed on a wrong result: {item}" in reason for reason in report.reasons)
