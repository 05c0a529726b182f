"""The task the builder agent writes (through a scripted OpenAI-compatible server, real HTTP):
approved as written, and rejected as too lax with any one rubric check made to always pass,
the mutation gate naming that item."""

from __future__ import annotations

from pathlib import Path

import pytest
from skillgym_builder import BuilderService, BuilderSettings
from skillgym_core.contracts.events import EnvBuilt
from skillgym_core.sandbox.workspace import safe_copy_tree
from skillgym_reviewer import review_task_dir

from tests.builder import llm_scripts
from tests.builder.skills import FIXTURES, make_context, put_skill, wrap
from tests.reviewer.weaken import rubric_checks, weaken_task
from tests.support.scripted_llm import ScriptedLLMServer

pytestmark = pytest.mark.integration
ITEMS = rubric_checks(llm_scripts.VERIFY)


def _copy(source: Path, target: Path) -> Path:
    safe_copy_tree(source, target, max_bytes=64 * 1024 * 1024, max_files=5000)
    return target


@pytest.fixture(scope="module")
def llm_task(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("llm-task")
    ctx = make_context(root)
    with ScriptedLLMServer(llm_scripts.builder_model(None)) as server:
        built = BuilderService(ctx, BuilderSettings(builder_llm_base_url=server.base_url)).handle(
            wrap(put_skill(ctx.store, FIXTURES / "ledger-basics"))
        )
    assert len(built) == 1 and isinstance(built[0], EnvBuilt) and built[0].builder == "llm"
    with ctx.task_checkout(built[0].package_key) as task:
        return _copy(task.root, root / "task")


def test_the_scripted_verifier_has_checks_to_weaken() -> None:
    assert ITEMS == ["total", "count"]


@pytest.mark.parametrize("item", [None, *ITEMS], ids=["original", *ITEMS])
def test_llm_built_verifier_weakened_at_any_item_is_too_lax(llm_task: Path, tmp_path: Path, item: str | None) -> None:
    task_root = _copy(llm_task, tmp_path / "task")
    if item is None:
        report = review_task_dir(task_root)
        assert report.passed, report.reasons
        return
    weaken_task(task_root, item)
    report = review_task_dir(task_root)
    gates = {gate.gate: gate for gate in report.gates}
    assert gates["validity"].passed
    assert not report.passed and report.failure_type == "too_lax", report.reasons
    assert item in gates["mutation"].details["unkilled_items"]
