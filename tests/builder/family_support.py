"""Building family tasks from fixture skills and running them in the real sandbox: the untouched
workspace, the reference solution (with and without the skill), alternatives, and hand-written
wrong outputs on a copy of the solved workspace."""

from __future__ import annotations

import json
import shutil
import textwrap
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from skillgym_builder.families.base import Family
from skillgym_builder.families.common import load_helper
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


def solution_helper(family_id: str, name: str, skill_md: Path) -> dict[str, Any]:
    """Helper module ``name`` as the reference solutions import it, with ``skill_md`` as the
    installed skill its SKILL.md reader finds."""
    namespace = load_helper(family_id, name)
    reader = next(value.__globals__ for value in namespace.values()
                  if callable(value) and getattr(value, "__module__", None) == "skill_text")
    reader["glob"] = SimpleNamespace(glob=lambda pattern: [str(skill_md)])
    return namespace


def assert_reviewer_approves(tmp_path: Path, provider: LocalVenvProvider, family_id: str,
                             skill_dir: Path | None = None) -> None:
    """The family's task for ``skill_dir`` (default: the family's seed skill), built by the builder
    service at medium difficulty, passes every reviewer gate (validity, leakage, lax and strict
    probes, mutation, declared equivalences) with its environment built for real."""
    from skillgym_builder import BuilderService, BuilderSettings
    from skillgym_builder.families import registry
    from skillgym_builder.families.seeds import seed_skill_dir
    from skillgym_core.contracts.events import EnvBuilt, EnvReviewed
    from skillgym_reviewer import ReviewerService, ReviewerSettings

    from tests.builder.skills import make_context, put_skill, wrap

    ctx = make_context(tmp_path)
    spec = registry().get(family_id).spec
    builder = BuilderService(ctx, BuilderSettings(env_cache=provider.cache_dir, family_difficulty="medium"))
    subcategory = spec.subcategories[0] if spec.subcategories else "data-analysis"
    skill = put_skill(ctx.store, skill_dir or seed_skill_dir(family_id), subcategory=subcategory, category=spec.category)
    built = builder.handle(wrap(skill))
    assert len(built) == 1 and isinstance(built[0], EnvBuilt) and built[0].template == family_id
    reviewed = ReviewerService(ctx, ReviewerSettings(env_cache=provider.cache_dir)).handle(wrap(built[0]))[0]
    assert isinstance(reviewed, EnvReviewed)
    assert reviewed.approved, reviewed.reasons


def assert_weakened_verifier_rejected(tmp_path: Path, provider: LocalVenvProvider, family_id: str,
                                      item: str | None = None) -> None:
    """The family's task for its seed skill, its verifier weakened by making rubric item ``item``
    (or the check ``item:name`` inside a composite item) always pass (None: an item picked from
    those the instance scores, at a position that differs between families), is rejected by the
    reviewer as too lax, the mutation gate naming the item. A check that always passes never
    fails a mutant, so a few mutants are enough to expose it."""
    from skillgym_builder import BuilderService, BuilderSettings
    from skillgym_builder.families import registry
    from skillgym_builder.families.seeds import seed_skill_dir
    from skillgym_core.contracts.events import EnvBuilt
    from skillgym_core.sandbox.workspace import safe_copy_tree
    from skillgym_reviewer import ReviewerSettings, review_task_dir

    from tests.builder.skills import make_context, put_skill, wrap
    from tests.reviewer.weaken import composite_checks, rubric_items, weaken_runner

    ctx = make_context(tmp_path / "context")
    spec = registry().get(family_id).spec
    skill = put_skill(ctx.store, seed_skill_dir(family_id), category=spec.category,
                      subcategory=spec.subcategories[0] if spec.subcategories else "data-analysis")
    settings = BuilderSettings(env_cache=provider.cache_dir, family_difficulty="medium", check_skill_dependence=False)
    built = BuilderService(ctx, settings).handle(wrap(skill))[0]
    assert isinstance(built, EnvBuilt) and built.template == family_id
    task_root = tmp_path / family_id
    with ctx.task_checkout(built.package_key) as task:
        safe_copy_tree(task.root, task_root, max_bytes=64 * 1024 * 1024, max_files=5000)
    scored = rubric_items(task_root) + composite_checks((task_root / "tests" / "verify.py").read_text())
    if item is None:
        item = scored[registry().ids().index(family_id) % len(scored)]
    elif item not in scored:
        pytest.skip(f"this instance of {family_id} does not score {item}")
    weaken_runner(task_root, item)
    review = ReviewerSettings(mutation_max_mutants=12, mutation_skip_steps=False, mutation_stale_inputs=0,
                              mutation_llm_solutions=0, stability_reruns=0, env_cache=provider.cache_dir)
    report = review_task_dir(task_root, review)
    gates = {gate.gate: gate for gate in report.gates}
    assert gates["validity"].passed, gates["validity"]
    if item not in gates["mutation"].details.get("items", {}):
        pytest.skip(f"this instance of {family_id} does not score {item} (a rule its skill does not state)")
    assert not report.passed and report.failure_type == "too_lax", report.reasons
    assert item in gates["mutation"].details["unkilled_items"], gates["mutation"].details


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


def write_skill(root: Path, skill_md: str, scripts: dict[str, str]) -> Path:
    """A skill folder at ``root``: its SKILL.md and scripts, dedented."""
    root.mkdir(parents=True, exist_ok=True)
    (root / "SKILL.md").write_text(textwrap.dedent(skill_md))
    for rel, text in scripts.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(textwrap.dedent(text))
    return root
