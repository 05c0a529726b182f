"""Harbor task conformance (task.toml tables and fields, reward paths, tests/solution kept apart),
checked on hand-broken packages and on every task the builder's templates emit."""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest
import tomli_w
from skillgym_builder import BuilderService, BuilderSettings
from skillgym_builder.templates import registry
from skillgym_core.conformance import check_task

from tests.builder.skills import FIXTURES, make_context, put_skill, wrap
from tests.reviewer import handmade


def _codes(root: Path) -> set[str]:
    return {issue.code for issue in check_task(root)}


def test_good_handmade_task_conforms(tmp_path: Path) -> None:
    assert check_task(handmade.write_task(tmp_path / "good").root) == []


def _edit_toml(root: Path, change) -> None:  # type: ignore[no-untyped-def]
    data = tomllib.loads((root / "task.toml").read_text())
    change(data)
    (root / "task.toml").write_text(tomli_w.dumps(data))


@pytest.mark.parametrize(
    ("change", "code"),
    [
        (lambda d: d["task"].update(name="no-org"), "config_contract"),
        (lambda d: d["verifier"].update(timeout_sec=0), "timeout"),
        (lambda d: d["environment"].update(allow_internet=True), "network"),
        (lambda d: d["environment"].update(gpus=1), "gpu"),
        (lambda d: d["metadata"].pop("task_id"), "config_contract"),
        (lambda d: d["environment"].update(workdir="/srv"), "dockerfile_workdir"),
        (lambda d: d["environment"].pop("skills_dir"), "skills_dir"),
    ],
)
def test_task_toml_defects(tmp_path: Path, change, code: str) -> None:  # type: ignore[no-untyped-def]
    root = handmade.write_task(tmp_path / "t").root
    _edit_toml(root, change)
    assert code in _codes(root)


def test_layout_and_separation_defects(tmp_path: Path) -> None:
    root = handmade.write_task(tmp_path / "t").root
    (root / "tests" / "test.sh").unlink()
    (root / "solution" / "solve.sh").unlink()
    (root / "environment" / "Dockerfile").write_text("FROM python:3.11-slim\nWORKDIR /app\nCOPY workspace/ /app/\n"
                                                     "COPY skills/ /skills/\nCOPY ../solution /solution\n")
    (root / "environment" / "workspace" / "leak.py").write_text(handmade.GOOD_VERIFY)
    (root / "environment" / "workspace" / "link").symlink_to("/etc/passwd")
    codes = _codes(root)
    assert {"missing_file", "dockerfile_copies_hidden", "hidden_file_copied", "symlink"} <= codes


def test_reward_file_and_protected_inputs(tmp_path: Path) -> None:
    root = handmade.write_task(tmp_path / "t", handmade.no_reward_file).root
    (root / "environment" / "workspace" / "data.csv").write_text("changed\n")
    codes = _codes(root)
    assert {"reward_path", "protected_hash"} <= codes


@pytest.mark.parametrize("template_id", registry().ids())
@pytest.mark.parametrize("skill", ["csv-cleanup"])
def test_every_template_emits_conforming_tasks(tmp_path: Path, template_id: str, skill: str) -> None:
    ctx = make_context(tmp_path)
    builder = BuilderService(ctx, BuilderSettings(preferred_templates=[template_id]))
    built = builder.handle(wrap(put_skill(ctx.store, FIXTURES / skill)))
    assert built and built[0].template == template_id  # type: ignore[union-attr]
    with ctx.task_checkout(built[0].package_key) as task:  # type: ignore[union-attr]
        assert check_task(task.root) == []
        config = task.config()
        assert config.schema_version and config.task.name.startswith("skillgym/")
        assert config.environment.allow_internet is False
        assert not any(p.name.startswith("solve") for p in task.workspace.rglob("*"))


def test_rubric_weights_must_sum_to_one(tmp_path: Path) -> None:
    root = handmade.write_task(tmp_path / "t").root
    (root / "tests" / "rubric.json").write_text('[{"name": "a", "weight": 0.6}, {"name": "b", "weight": 0.6}]')
    assert "rubric" in _codes(root)
