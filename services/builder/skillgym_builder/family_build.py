"""Turning a family instance into a stored task: render the inputs that need a real library,
write the Harbor package, run the skill-artifact dependence check, and record all of it in
``[metadata]``. Also validates drafts (the LLM builder's ``validate`` tool) by execution."""

from __future__ import annotations

import logging
import random
import shutil
import tempfile
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from skillgym_core.contracts.task import TaskDir
from skillgym_core.envbuild import EnvironmentProvider
from skillgym_core.sandbox.base import Sandbox
from skillgym_core.sandbox.janitor import discard_tree
from skillgym_core.taskrun import TaskRunner

from skillgym_builder.families import knobs as knob_rules
from skillgym_builder.families.base import Family, FamilySpec, Fit, RenderedFamily, SkillClaim
from skillgym_builder.families.dependence import SkillDependenceChecker
from skillgym_builder.families.render import RenderError, SandboxRenderer
from skillgym_builder.families.usage import skill_usage
from skillgym_builder.package import BuildInfo, without_none, write_task
from skillgym_builder.skillcard import SkillCard
from skillgym_builder.templates.base import TemplateOutput, TemplateSpec

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class FamilyPlan:
    """What one family build is asked for: the instance seed, the knob values, the knob changes
    that led here (hardening) and the gate's verdict."""

    seed: int
    knobs: dict[str, float]
    fit: Fit
    knob_changes: tuple[dict[str, object], ...] = ()

    def metadata(self, family: FamilySpec) -> dict[str, Any]:
        return {
            "family": family.id,
            "family_category": family.category,
            "family_seed": self.seed,
            "knobs": self.knobs,
            "knob_changes": list(self.knob_changes),
            "suitability": self.fit.model_dump(),
            "difficulty": knob_rules.difficulty_label(family, self.knobs),
        }


def first_plan(family: Family, fit: Fit, difficulty: str, skill_id: str) -> FamilyPlan:
    rng = random.Random(f"{skill_id}:{family.spec.id}:knobs")
    return FamilyPlan(seed=0, knobs=knob_rules.preset(family.spec, difficulty, rng), fit=fit)


class FamilyMaterialiser:
    def __init__(self, sandbox: Sandbox, environment: EnvironmentProvider | None, scratch: Path,
                 *, check_dependence: bool = True) -> None:
        self.sandbox = sandbox
        self.environment = environment
        self.scratch = scratch
        self.check_dependence = check_dependence
        self.renderer = SandboxRenderer(sandbox, environment, scratch)

    def instance(self, family: Family, card: SkillCard, plan: FamilyPlan) -> TemplateOutput:
        """The instance with its rendered inputs in the workspace and its plan in the metadata."""
        output = family.instantiate(card, plan.seed, plan.knobs)
        rendered: dict[str, bytes] = {}
        for job in output.render_jobs:
            rendered.update(self.renderer.render(job))
        if isinstance(family, RenderedFamily):  # the family decides where its rendered files go
            output = family.after_render(card, output, rendered)
            rendered = {}
        workspace = {**output.workspace, **rendered}
        patterns = knob_rules.patterns(family.spec, plan.knobs)
        blueprint = (output.blueprint or family.spec.blueprint).model_copy(update={"patterns": patterns})
        return replace(output, workspace=workspace, render_jobs=[], blueprint=blueprint,
                       metadata={**output.metadata, **plan.metadata(family.spec),
                                 "skill_usage": skill_usage(card, output, family.spec.fit.binaries)})

    def write(self, dest: Path, card: SkillCard, spec: FamilySpec, output: TemplateOutput,
              info: BuildInfo) -> tuple[str, TaskDir]:
        task_id, task = write_task(dest, card, spec, output, info)
        claim = output.metadata.get("skill_claim")
        if self.check_dependence and claim is not None:
            try:
                result = SkillDependenceChecker(self.sandbox, self.environment, self.scratch).check(
                    task, SkillClaim.model_validate(claim))
            except Exception as exc:  # a failed check is recorded, never fatal to the build
                log.warning("skill dependence check failed", extra={"task_id": task_id, "error": str(exc)})
                result = {"claimed": claim.get("claimed"), "error": f"{type(exc).__name__}: {exc}"[:500]}
            config = task.config()
            config.metadata.skill_dependence = without_none(result)  # type: ignore[attr-defined]
            task.write_config(config)
        return task_id, task


class DraftValidator:
    """Runs a draft the way the reviewer's validity gate will: the untouched workspace must fail,
    the reference solution must pass, and so must every alternative."""

    def __init__(self, sandbox: Sandbox, environment: EnvironmentProvider | None, scratch: Path) -> None:
        self.runner = TaskRunner(sandbox, environment=environment, judge=None)
        self.scratch = scratch

    def __call__(self, card: SkillCard, spec: TemplateSpec, output: TemplateOutput) -> dict[str, Any]:
        self.scratch.mkdir(parents=True, exist_ok=True)
        work = Path(tempfile.mkdtemp(prefix="draft-check-", dir=self.scratch))
        try:
            try:
                _, task = write_task(work / "task", card, spec, output, BuildInfo(builder="llm"))
            except (OSError, ValueError, RenderError) as exc:
                return {"passed": False, "problems": [f"the draft does not make a task: {exc}"]}
            problems = []
            initial = self.runner.verify(task, self.runner.fresh_workspace(task, work))
            if initial.passed:
                problems.append(f"the untouched workspace passes (reward {initial.reward})")
            solved = self.runner.fresh_workspace(task, work)
            run = self.runner.run_solution(task, solved)
            outcome = self.runner.verify(task, solved)
            if not run.ok:
                problems.append(f"solution/solve.sh failed (exit {run.exit_code}): {run.stderr.strip()[-600:]}")
            elif not outcome.passed:
                tail = outcome.result.stdout[-800:] if outcome.result else outcome.detail
                problems.append(f"the verifier rejects the reference solution (reward {outcome.reward}): {tail}")
            return {"passed": not problems, "problems": problems, "initial_reward": initial.reward,
                    "solved_reward": outcome.reward}
        finally:
            discard_tree(work)


def copy_task_parts(task_root: Path, dest: Path) -> None:
    """The editable parts of a task (what a draft holds) copied to ``dest``."""
    for part in ("instruction.md", "environment/workspace", "environment/requirements.txt", "tests", "solution"):
        source = task_root / part
        if source.is_dir():
            shutil.copytree(source, dest / part, dirs_exist_ok=True)
        elif source.is_file():
            (dest / part).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, dest / part)
