"""Each wrong trajectory as a trial the verifier judges: a mutated output on a copy of the
solved workspace, the solution with a step skipped, stale outputs on changed inputs."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from skillgym_core.clock import same_but_clock
from skillgym_core.contracts.task import TaskDir
from skillgym_core.taskrun import TaskRunner, VerifierOutcome

from skillgym_reviewer.gates.mutation.generate import file_kind, file_mutants
from skillgym_reviewer.gates.mutation.model import Mutant, TrialKind, TrialResult
from skillgym_reviewer.gates.mutation.runs import ScriptRunner, Step, step_label, stopped, without_step
from skillgym_reviewer.gates.mutation.score import judge
from skillgym_reviewer.gates.mutation.variation import OpenAnswers
from skillgym_reviewer.gates.pool import parallel_map
from skillgym_reviewer.gates.probes import Probe, Prober, set_file
from skillgym_reviewer.gates.validity import workspace_files

PERTURBABLE = ("json", "jsonl", "yaml", "table", "text", "markdown")


@dataclass(frozen=True)
class Trial:
    name: str
    kind: TrialKind
    run: Callable[[], TrialResult]
    # a trial that only judges data (a mutated output on the solved workspace): its probe is
    # judged in bulk with the others' and ``finish`` reads the verdict
    probe: Probe | None = None
    finish: Callable[[VerifierOutcome], TrialResult] | None = None


@dataclass
class TrialContext:
    task: TaskDir
    runner: TaskRunner
    prober: Prober
    items: list[str]
    reference: Mapping[str, bytes]  # the reference solution's outputs
    scripts: ScriptRunner

    def same_outputs(self, workspace: Path) -> bool:
        """Whether the run left the reference's outputs, but for the moment each was made."""
        files = workspace_files(workspace)
        return all(same_but_clock(files.get(rel), data) for rel, data in self.reference.items())

    def judged(self, name: str, kind: TrialKind, workspace: Path) -> TrialResult:
        outcome = self.runner.verify(self.task, workspace)
        verdict, failed, note = judge(outcome, self.items)
        return TrialResult(name, kind, verdict, outcome.reward, failed, note)


def output_trial(ctx: TrialContext, mutant: Mutant) -> Trial:
    probe = Probe(mutant.name, set_file(mutant.file, mutant.content))

    def finish(outcome: VerifierOutcome) -> TrialResult:
        verdict, failed, note = judge(outcome, ctx.items)
        return TrialResult(mutant.name, "output", verdict, outcome.reward, failed, note)

    return Trial(mutant.name, "output", lambda: finish(ctx.prober.verify(probe)), probe, finish)


def skipped_step_trial(ctx: TrialContext, script: str, step: Step) -> Trial:
    name = f"solve.sh:skip_step:{step_label(step)}"

    def trial() -> TrialResult:
        workspace = ctx.runner.fresh_workspace(ctx.task, ctx.prober.workdir)
        try:
            run = ctx.scripts.run(without_step(script, step), workspace)
            if ctx.same_outputs(workspace):
                return TrialResult(name, "partial_solution", "equivalent", note="the step changes no output")
            result = ctx.judged(name, "partial_solution", workspace)
            if not run.ok:
                result.note = f"the shortened solution stopped: {stopped(run)}"
            return result
        finally:
            ctx.prober.discard(workspace)

    return Trial(name, "partial_solution", trial)


def perturbation(rel: str, data: bytes, seed: int) -> Mutant | None:
    """One value-changing mutant of an input file (a number or label moved), the first drawn."""
    if file_kind(rel, data) not in PERTURBABLE:
        return None
    grouped = file_mutants(rel, data, seed)
    for operator in ("perturb_cell", "leaf_nudge", "change_number", "change_cell", "change_identifier"):
        if grouped.get(operator):
            return grouped[operator][0]
    return None


def stale_outputs_trial(ctx: TrialContext, script: str, changed: Mutant) -> Trial:
    """The reference outputs next to a changed input. Meaningful only where the verifier judges
    outputs against the inputs in the workspace: there, the solution rerun on the changed input
    passes, and the stale outputs must fail. A verifier with a fixed answer key is not asked."""
    name = f"{changed.file}:stale_outputs:{changed.operator}:{changed.location}"

    def trial() -> TrialResult:
        workspace = ctx.runner.fresh_workspace(ctx.task, ctx.prober.workdir)
        try:
            (workspace / changed.file).write_bytes(changed.content)
            if not ctx.scripts.run(script, workspace).ok:
                return TrialResult(name, "perturbed_input", "not_run", note="the solution fails on the changed input")
            if ctx.same_outputs(workspace):
                return TrialResult(name, "perturbed_input", "not_run", note="the change does not move any output")
            if not ctx.runner.verify(ctx.task, workspace).passed:
                return TrialResult(name, "perturbed_input", "not_run", note="the verifier judges against a fixed key")
        finally:
            ctx.prober.discard(workspace)
        outcome = ctx.prober.verify(Probe(name, set_file(changed.file, changed.content)))
        verdict, failed, note = judge(outcome, ctx.items)
        return TrialResult(name, "perturbed_input", verdict, outcome.reward, failed, note)

    return Trial(name, "perturbed_input", trial)


def excuse_open_answers(results: list[TrialResult], mutants: Mapping[str, Mutant], open_answers: OpenAnswers) -> None:
    """Survivors where the task's valid solutions differ count as equivalent (see :mod:`.variation`)."""
    for result in results:
        mutant = mutants.get(result.name)
        if result.verdict == "survived" and mutant is not None and (why := open_answers.excuse(mutant)):
            result.verdict, result.note = "equivalent", why


def run_trials(trials: Sequence[Trial], workers: int, prober: Prober | None = None) -> list[TrialResult]:
    """Every trial's result, in order; one that raises is recorded as not run. With ``prober``,
    the trials that only judge data are judged in bulk (see :meth:`Prober.verify_all`)."""

    def guarded(trial: Trial) -> TrialResult:
        try:
            return trial.run()
        except Exception as exc:  # one trial's failure must not cost the review
            return TrialResult(trial.name, trial.kind, "not_run", note=f"{type(exc).__name__}: {str(exc)[:200]}")

    data_only = [(i, t.probe, t.finish) for i, t in enumerate(trials) if t.probe is not None and t.finish is not None]
    results: dict[int, TrialResult] = {}
    if prober is not None and data_only:
        try:
            outcomes = prober.verify_all([probe for _, probe, _ in data_only])
            results.update((i, finish(outcome)) for (i, _, finish), outcome in zip(data_only, outcomes, strict=True))
        except Exception:  # a batch that could not be laid out: each trial on its own says what failed
            results.clear()
    rest = [i for i in range(len(trials)) if i not in results]
    results.update(zip(rest, parallel_map(guarded, [trials[i] for i in rest], workers), strict=True))
    return [results[i] for i in range(len(trials))]
