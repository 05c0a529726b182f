"""The reviewer judges mutated outputs in bulk (one sandbox run for many, see
``skillgym_core.bulkverify``); for every family, on its example task, every kind of mutant and
every data probe gets the verdict — pass, reward, per-item scores, failure type — that a
verifier run of its own gives."""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import pytest
from skillgym_builder.families import knobs as knob_rules
from skillgym_builder.families import registry
from skillgym_builder.families.seeds import seed_card
from skillgym_builder.family_build import FamilyMaterialiser, FamilyPlan
from skillgym_builder.package import BuildInfo
from skillgym_core.builtin_verifier import uses_builtin_runner
from skillgym_core.envbuild import LocalVenvProvider
from skillgym_core.sandbox.local import LocalSandbox
from skillgym_core.sandbox.workspace import safe_copy_tree
from skillgym_core.taskrun import TaskRunner, VerifierOutcome
from skillgym_reviewer import ReviewerSettings, review_task_dir
from skillgym_reviewer.gates.mutation.generate import file_mutants
from skillgym_reviewer.gates.validity import workspace_files

pytestmark = pytest.mark.slow

# families whose every verifier run takes seconds (image comparisons, a training run) get fewer
PER_FAMILY = {"image-compose": 3, "model-training": 4, "test-repair": 4, "git-forensics": 6}
DEFAULT_CAP = 10


def _verdict(outcome: VerifierOutcome) -> tuple[Any, ...]:
    return outcome.passed, outcome.reward, outcome.rewards, outcome.failure_type, outcome.tampered


def _wrong_outputs(outputs: dict[str, bytes], cap: int) -> list[tuple[str, bytes]]:
    """Each output emptied (up to half the cap), then one mutant of each operator that applies."""
    seen: dict[str, tuple[str, bytes]] = {}
    for rel, data in sorted(outputs.items()):
        for operator, mutants in sorted(file_mutants(rel, data, 0).items()):
            changed = [m for m in mutants if m.content != data]
            if changed and operator not in seen:
                seen[operator] = (rel, changed[0].content)
    emptied = [(rel, b"") for rel in sorted(outputs)][: max(1, cap // 2)]
    return [*emptied, *list(seen.values())][:cap]


@pytest.mark.parametrize("family_id", registry().ids())
def test_bulk_verdicts_equal_one_run_each(family_id: str, tmp_path: Path, env_provider: LocalVenvProvider) -> None:
    family = registry().get(family_id)
    card = seed_card(family.spec)
    knobs = knob_rules.preset(family.spec, "medium", random.Random(0))
    materialiser = FamilyMaterialiser(LocalSandbox(), env_provider, tmp_path / "scratch", check_dependence=False)
    output = materialiser.instance(family, card, FamilyPlan(seed=0, knobs=knobs, fit=family.suitability(card)))
    task = materialiser.write(tmp_path / "task", card, family.spec, output, BuildInfo(builder="family"))[1]
    assert uses_builtin_runner(task.tests)

    runner = TaskRunner(LocalSandbox(), environment=env_provider)
    initial = workspace_files(runner.fresh_workspace(task, tmp_path))
    solved = runner.fresh_workspace(task, tmp_path)
    assert runner.run_solution(task, solved).ok
    outputs = {rel: data for rel, data in workspace_files(solved).items() if initial.get(rel) != data}
    spaces = [solved]
    for rel, content in _wrong_outputs(outputs, PER_FAMILY.get(family_id, DEFAULT_CAP)):
        workspace = tmp_path / f"wrong-{len(spaces)}"
        safe_copy_tree(solved, workspace, max_bytes=1 << 28, max_files=20_000)
        (workspace / rel).write_bytes(content)
        spaces.append(workspace)

    alone = [_verdict(runner.verify(task, workspace)) for workspace in spaces]
    together = [_verdict(outcome) for outcome in runner.verify_many(task, spaces)]
    assert together == alone
    assert alone[0][0] and not all(verdict[0] for verdict in alone[1:])


def _gates(report: Any) -> dict[str, Any]:
    return {gate.gate: (gate.passed, gate.failure_type) for gate in report.gates}


@pytest.mark.parametrize("weaken", [None, "counts"])
def test_a_review_with_bulk_judging_reaches_the_verdicts_of_one_run_each(
        weaken: str | None, tmp_path: Path, env_provider: LocalVenvProvider) -> None:
    family = registry().get("tabular-profile")
    card = seed_card(family.spec)
    knobs = knob_rules.preset(family.spec, "medium", random.Random(0))
    materialiser = FamilyMaterialiser(LocalSandbox(), env_provider, tmp_path / "scratch", check_dependence=False)
    output = materialiser.instance(family, card, FamilyPlan(seed=0, knobs=knobs, fit=family.suitability(card)))
    task = materialiser.write(tmp_path / "task", card, family.spec, output, BuildInfo(builder="family"))[1]
    if weaken:
        verify = task.tests / "verify.py"
        verify.write_text(verify.read_text().replace(f"def {weaken}():\n", f"def {weaken}():\n    return True\n"))
    reports = [review_task_dir(task.root, ReviewerSettings(mutation_llm_solutions=0, env_cache=env_provider.cache_dir,
                                                           bulk_judging=bulk)) for bulk in (True, False)]
    assert _gates(reports[0]) == _gates(reports[1])
    assert reports[0].passed is (weaken is None)
    mutation = [{k: v for k, v in (r.mutation or {}).items() if k in ("killed", "tried", "score", "unkilled_items")}
                for r in reports]
    assert mutation[0] == mutation[1]
