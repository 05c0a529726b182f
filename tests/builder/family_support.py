"""Building family tasks from fixture skills and running them in the real sandbox: the untouched
workspace, the reference solution (with and without the skill), alternatives, and hand-written
wrong outputs on a copy of the solved workspace."""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from skillgym_builder.families.base import Family
from skillgym_builder.families.render import RenderError
from skillgym_builder.family_build import FamilyMaterialiser, FamilyPlan
from skillgym_builder.package import BuildInfo
from skillgym_builder.skillcard import SkillCard
from skillgym_core.contracts.skill import Annotation, SkillRecord
from skillgym_core.contracts.task import AGENT_WORKDIR, TaskDir
from skillgym_core.envbuild import EnvironmentBuildError, LocalVenvProvider, declared_requirements
from skillgym_core.ids import hash_tree
from skillgym_core.sandbox.base import Limits, Mount
from skillgym_core.sandbox.local import LocalSandbox
from skillgym_core.taskrun import SKILLS_MOUNT, TaskRunner, VerifierOutcome

from tests.builder.skills import FIXTURES

Edit = Callable[[Path], None]


def card_for(name: str, subcategory: str | None, *, category: str | None = None,
             runtime: dict[str, Any] | None = None, folder: Path | None = None) -> SkillCard:
    """The card of fixture skill ``name`` (or of ``folder``) as ingestion would classify it."""
    from skillgym_builder.skillcard import card_from_folder

    folder = folder or FIXTURES / name
    record = SkillRecord(
        skill_id=f"skill-{name}", name=name, description=f"fixture skill {name}", source=str(folder),
        content_hash=hash_tree(folder), category=category, subcategory=subcategory, accepted=True,
        runtime={k: Annotation(value=v) for k, v in (runtime or {}).items()},
    )
    return card_from_folder(record, folder)


@dataclass
class BuiltTask:
    task: TaskDir
    runner: TaskRunner
    scratch: Path

    @property
    def metadata(self) -> Any:
        return self.task.config().metadata

    def extra(self, key: str) -> Any:
        return (self.metadata.model_extra or {}).get(key)

    def workspace(self) -> Path:
        return self.runner.fresh_workspace(self.task, self.scratch)

    def untouched(self) -> VerifierOutcome:
        return self.runner.verify(self.task, self.workspace())

    def solve(self, script: str = "solve.sh", *, with_skill: bool = True) -> tuple[bool, Path]:
        workspace = self.workspace()
        mounts, env = self.runner.environment_extras(self.task)
        result = self.runner.sandbox.run(
            ["bash", f"/solution/{script}"],
            mounts=[Mount(workspace, AGENT_WORKDIR, writable=True), Mount(self.task.solution, "/solution"),
                    *([Mount(self.task.skills, SKILLS_MOUNT)] if with_skill else []), *mounts],
            workdir=AGENT_WORKDIR, env=env, limits=Limits(wall_s=self.runner.config(self.task).agent.timeout_sec),
        )
        return result.ok, workspace

    def verify(self, workspace: Path) -> VerifierOutcome:
        return self.runner.verify(self.task, workspace)

    def verify_edited(self, solved: Path, edit: Edit) -> VerifierOutcome:
        copy = self.scratch / f"edited-{len(list(self.scratch.glob('edited-*')))}"
        shutil.copytree(solved, copy, symlinks=True)
        edit(copy)
        return self.runner.verify(self.task, copy)


def environment_provider(cache: Path) -> LocalVenvProvider:
    return LocalVenvProvider(cache)


def build(family: Family, card: Any, knobs: dict[str, float], dest: Path, provider: LocalVenvProvider,
          *, seed: int = 0) -> BuiltTask:
    """The family's task for ``card``, written under ``dest`` with its dependence check run; skips
    the test when the task's environment cannot be built here (no package index reachable)."""
    sandbox = LocalSandbox()
    scratch = dest / "scratch"
    scratch.mkdir(parents=True, exist_ok=True)
    materialiser = FamilyMaterialiser(sandbox, provider, scratch)
    fit = family.suitability(card)
    assert fit.fits, fit
    plan = FamilyPlan(seed=seed, knobs=knobs, fit=fit)
    try:
        output = materialiser.instance(family, card, plan)
        _, task = materialiser.write(dest / "task", card, family.spec, output, BuildInfo(builder="family"))
        if declared_requirements(task) is not None:
            provider.prepare(task)
    except (EnvironmentBuildError, RenderError) as exc:
        if isinstance(exc, RenderError) and exc.reason != "render_environment":
            raise
        pytest.skip(f"task environment cannot be built here: {exc}")
    return BuiltTask(task, TaskRunner(sandbox, environment=provider, judge=None), scratch)


def read_json(workspace: Path, rel: str) -> Any:
    return json.loads((workspace / rel).read_text())


def write_json(workspace: Path, rel: str, value: Any) -> None:
    (workspace / rel).write_text(json.dumps(value, indent=2))


def rewrite_json(rel: str, change: Callable[[Any], None]) -> Edit:
    def edit(workspace: Path) -> None:
        value = read_json(workspace, rel)
        change(value)
        write_json(workspace, rel, value)

    return edit
