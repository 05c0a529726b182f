"""The mutation gates. ``mutation``: the verifier must reject wrong-but-plausible results made
from the reference solution (mutated outputs, skipped steps, stale outputs on changed inputs,
model-written wrong solutions); below the thresholds the task is ``too_lax``, naming the
surviving mutants and the rubric items that never failed. ``equivalence_probes``: the verifier
must accept the reference outputs rewritten under every equivalence that applies (``too_strict``)."""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from pathlib import Path

from skillgym_core.contracts.task import TaskDir
from skillgym_core.taskrun import TaskRunner, VerifierOutcome

from skillgym_reviewer.gates.mutation.borrowed import borrowed_text_mutants, prose_lines, text_sources
from skillgym_reviewer.gates.mutation.equivalence import EquivalenceError, Equivalences
from skillgym_reviewer.gates.mutation.exactness import case_asked, decisive_near_misses, order_asked, unchecked_orders
from skillgym_reviewer.gates.mutation.generate import file_kind, output_mutants
from skillgym_reviewer.gates.mutation.lettercase import case_mutants
from skillgym_reviewer.gates.mutation.llm import WrongSolutionWriter, wrong_solution_trial
from skillgym_reviewer.gates.mutation.model import Mutant, TrialResult
from skillgym_reviewer.gates.mutation.runs import ScriptRunner, solution_steps
from skillgym_reviewer.gates.mutation.score import MutationScore, rubric_items
from skillgym_reviewer.gates.mutation.structured import every_key_renamed
from skillgym_reviewer.gates.mutation.text import every_item_reworded, every_line_dropped, every_line_run_on
from skillgym_reviewer.gates.mutation.trials import (
    Trial,
    TrialContext,
    excuse_open_answers,
    output_trial,
    perturbation,
    run_trials,
    skipped_step_trial,
    stale_outputs_trial,
)
from skillgym_reviewer.gates.mutation.variation import OpenAnswers
from skillgym_reviewer.gates.probes import Probe, Prober, set_file
from skillgym_reviewer.gates.validity import Evidence, workspace_files
from skillgym_reviewer.metrics import MUTATION_SCORE
from skillgym_reviewer.report import GateResult
from skillgym_reviewer.settings import ReviewerSettings

GATE = "mutation"
SECOND_LOOK_LINES = 60  # lines dropped per text output when an item has not failed yet
SECOND_LOOK_REWORDED = 20  # items reworded, and lines run on, per text output in the last round
EQUIVALENCE_GATE = "equivalence_probes"
MAX_INPUT_BYTES = 1024 * 1024
Alternatives = Callable[[], Sequence[Mapping[str, bytes]]]


def judged_outputs(prober: Prober) -> dict[str, bytes]:
    """The solution's outputs the instruction names (all of them if it names none): scratch
    files the solution leaves behind are not the verifier's business."""
    outputs = prober.evidence.outputs()
    named = {rel: data for rel, data in outputs.items() if rel in prober.instruction or Path(rel).name in prober.instruction}
    return named or outputs


def rewrite_trial(prober: Prober, name: str, rel: str, data: bytes) -> Trial:
    probe = Probe(name, set_file(rel, data))

    def finish(outcome: VerifierOutcome) -> TrialResult:
        return TrialResult(name, "equivalent_rewrite", "survived" if outcome.passed else "killed", outcome.reward)

    return Trial(name, "equivalent_rewrite", lambda: finish(prober.verify(probe)), probe, finish)


def all_items_failed(ctx: TrialContext, results: Sequence[TrialResult]) -> bool:
    failed = {item for r in results if r.verdict == "killed" for item in r.failed_items}
    return all(item in failed for item in ctx.items)


def second_look(ctx: TrialContext, mutants: Mapping[str, Mutant], editable: Mapping[str, bytes],
                sources: Mapping[str, str], seed: int) -> list[list[Mutant]]:
    """When a rubric item (or a check inside one) has not failed on any mutant drawn, more
    unscored coverage mutants are tried, in rounds until every item has failed:

    1. every line of the text outputs dropped in turn, and a key renamed at every key path of
       the JSON and YAML outputs;
    2. lines of the skill's files and the task's text inputs pasted in (see ``borrowed``), and
       the files the instruction names that the agent may change but the reference left as they
       were mutated too (a service unit a fix need not touch this time);
    3. each list item without its first word, and each line run on with the others' text.

    A few drawn sites can miss the one line or field an item reads, a check against copying
    meets no edit of the reference, a check of a file the reference kept meets no mutant of the
    outputs, and a check of wording or of a limit within one part meets no dropped line."""
    texts = [(rel, data.decode("utf-8")) for rel, data in sorted(ctx.reference.items())
             if file_kind(rel, data) in ("text", "markdown")]
    skip = set(mutants)
    dropped = [m for rel, text in texts for m in every_line_dropped(rel, text, skip, SECOND_LOOK_LINES)]
    dropped += [m for rel, data in sorted(ctx.reference.items()) if (kind := file_kind(rel, data)) in ("json", "yaml")
                for m in every_key_renamed(rel, data.decode("utf-8"), kind, skip, SECOND_LOOK_LINES)]
    borrowed = [m for rel, text in texts for m in borrowed_text_mutants(rel, text, sources, skip)]
    borrowed += [replace(m, cover=True) for m in output_mutants(editable, seed, SECOND_LOOK_LINES) if m.name not in skip]
    reworded = [m for rel, text in texts for m in [*every_item_reworded(rel, text, skip, SECOND_LOOK_REWORDED),
                                                    *every_line_run_on(rel, text, skip, SECOND_LOOK_REWORDED,
                                                                       prose_lines(sources))]]
    return [group for group in (dropped, borrowed, reworded) if group]


def editable_named_files(ctx: TrialContext, initial: Mapping[str, bytes], protected: set[str]) -> dict[str, bytes]:
    """Workspace files the instruction names that the reference solution left unchanged and the
    task does not protect: an agent may rewrite them, and a check may read them."""
    return {rel: data for rel, data in initial.items()
            if rel not in ctx.reference and rel not in protected and len(data) <= MAX_INPUT_BYTES
            and (rel in ctx.prober.instruction or f"/app/{rel}" in ctx.prober.instruction)}


class MutationGates:
    def __init__(self, runner: TaskRunner, settings: ReviewerSettings, writer: WrongSolutionWriter | None = None) -> None:
        self.runner = runner
        self.settings = settings
        self.writer = writer

    def run(
        self, task: TaskDir, evidence: Evidence, prober: Prober, alternatives: Alternatives | None = None
    ) -> list[GateResult]:
        """Both gates' verdicts. ``alternatives`` gives the outputs of the accepted alternative
        solutions once they are known (it may wait for them): survivors where they differ from
        the reference are not held against the verifier."""
        started = time.monotonic()
        config = self.runner.config(task)
        try:
            equivalences = Equivalences.load(task, config.metadata.review)
        except EquivalenceError as exc:
            return [GateResult.fail(GATE, "checker_error", [str(exc)], error=exc.to_dict())]
        reference = judged_outputs(prober)
        timeout = min(config.agent.timeout_sec, max(30.0, 5 * evidence.solution_run.duration_s))
        ctx = TrialContext(task, self.runner, prober, rubric_items(evidence.solved), reference,
                           ScriptRunner(self.runner, task, prober.workdir, timeout))
        declared: list[TrialResult] = []
        trials: list[Trial] = []
        mutants = output_mutants(reference, self.settings.mutation_seed, self.settings.mutation_max_mutants)
        for mutant in mutants:
            if covered := equivalences.covering(mutant):
                declared.append(TrialResult(mutant.name, "output", "equivalent", note=f"declared equivalent ({covered})"))
            else:
                trials.append(output_trial(ctx, mutant))
        trials += self._solution_run_trials(task, evidence, ctx)
        notes: list[str] = []
        if self.writer is not None and self.settings.mutation_llm_solutions:
            solutions, note = self.writer.write(task, workspace_files(evidence.initial_workspace),
                                                workspace_files(task.solution), reference)
            trials += [wrong_solution_trial(ctx, i, solution) for i, solution in enumerate(solutions)]
            notes += [note] if note else []
        rewrites = [rewrite_trial(prober, name, rel, data)
                    for rel, ref in reference.items() for name, data in equivalences.rewrites(rel, ref)]
        done = run_trials([*trials, *rewrites], prober.workers, prober)
        results, rewritten = declared + done[: len(trials)], done[len(trials) :]
        by_name = {m.name: m for m in mutants}
        # the workspace and the skills are read again only for a task with an item not yet failed
        if self.settings.mutation_every_item and not all_items_failed(ctx, results):
            protected = {item.path for item in config.metadata.protected_inputs}
            initial = workspace_files(evidence.initial_workspace)
            editable = editable_named_files(ctx, initial, protected)
            sources = text_sources(task.skills, {rel: data for rel, data in initial.items() if rel not in reference})
            for group in second_look(ctx, by_name, editable, sources, self.settings.mutation_seed):
                results += run_trials([output_trial(ctx, m) for m in group], prober.workers, prober)
                by_name.update((m.name, m) for m in group)
                if all_items_failed(ctx, results):
                    break
        if self.settings.mutation_near_misses and case_asked(prober.instruction):
            cased = [m for m in case_mutants(reference, self.settings.mutation_seed) if not equivalences.covering(m)]
            results += run_trials([output_trial(ctx, m) for m in cased], prober.workers, prober)
            by_name.update((m.name, m) for m in cased)
        open_answers = OpenAnswers.between(reference, alternatives() if alternatives else [])
        excuse_open_answers(results, by_name, open_answers)
        seconds = round(time.monotonic() - started, 3)
        return [self._mutation_gate(config.metadata.template, ctx, open_answers, results, by_name, notes, seconds),
                self._equivalence_gate(equivalences, rewritten)]

    def _solution_run_trials(self, task: TaskDir, evidence: Evidence, ctx: TrialContext) -> list[Trial]:
        """The wrong trajectories that rerun the solution: each step skipped in turn, and stale
        outputs next to changed inputs (protected inputs are left alone: the verifier already
        refuses any change to them)."""
        script_path = task.solution / "solve.sh"
        script = script_path.read_text(encoding="utf-8", errors="replace") if script_path.is_file() else ""
        trials: list[Trial] = []
        steps = solution_steps(script) if self.settings.mutation_skip_steps else None
        if steps and len(steps) > 1:
            trials += [skipped_step_trial(ctx, script, step) for step in steps]
        protected = {item.path for item in self.runner.config(task).metadata.protected_inputs}
        inputs = {rel: data for rel, data in workspace_files(evidence.initial_workspace).items()
                  if rel not in ctx.reference and rel not in protected and len(data) <= MAX_INPUT_BYTES}
        named = sorted(inputs, key=lambda rel: (rel not in ctx.prober.instruction, rel))
        changed = [m for rel in named if (m := perturbation(rel, inputs[rel], self.settings.mutation_seed))]
        trials += [stale_outputs_trial(ctx, script, m) for m in changed[: self.settings.mutation_stale_inputs]]
        return trials

    def _mutation_gate(self, template: str, ctx: TrialContext, open_answers: OpenAnswers, results: list[TrialResult],
                       mutants: dict[str, Mutant], notes: list[str], seconds: float) -> GateResult:
        score = MutationScore(ctx.items, results, frozenset(name for name, m in mutants.items() if m.cover))
        if score.score is not None:
            MUTATION_SCORE.labels(template or "unknown").observe(score.score)
        details = {
            **score.summary(), "seconds": seconds, "notes": notes,
            "thresholds": {"min_score": self.settings.mutation_min_score, "every_item": self.settings.mutation_every_item},
            "open_answers": open_answers.to_dict(), "trials": [r.to_dict() for r in results],
        }  # fmt: skip
        crashes = [f"verifier crashed on a wrong result: {r.name}: {r.note}" for r in results if r.verdict == "crashed"]
        if crashes:
            return GateResult.fail(GATE, "checker_error", crashes, **details)
        shortfalls = score.shortfalls(self.settings.mutation_min_score, self.settings.mutation_every_item)
        near = decisive_near_misses(results, mutants) if self.settings.mutation_near_misses else []
        if near:
            shortfalls.append(f"the verifier rejects plainly wrong values at these places but accepts near misses of "
                              f"the exact answer: {', '.join(near[:8])}")
        details["near_misses_accepted"] = near
        orders = (unchecked_orders(results, mutants)
                  if self.settings.mutation_near_misses and order_asked(ctx.prober.instruction) else [])
        if orders:
            shortfalls.append(f"the instruction asks for an order the verifier never checks in lists whose contents it "
                              f"does check (declare reorder_lists / reorder_rows if it is free): {', '.join(orders[:8])}")
        details["unchecked_orders"] = orders
        if shortfalls:
            return GateResult.fail(GATE, "too_lax", shortfalls, **details)
        return GateResult.ok(GATE, **details)

    @staticmethod
    def _equivalence_gate(equivalences: Equivalences, rewritten: list[TrialResult]) -> GateResult:
        details = {"declared": {p: sorted(n) for p, n in equivalences.declared.items()},
                   "probes": [{"name": r.name, "accepted": r.verdict == "survived", "reward": r.reward} for r in rewritten]}
        rejected = [f"verifier rejects an equivalent answer: {r.name} (reward {r.reward})"
                    for r in rewritten if r.verdict == "killed"]
        if rejected:
            return GateResult.fail(EQUIVALENCE_GATE, "too_strict", rejected, **details)
        return GateResult.ok(EQUIVALENCE_GATE, **details)
