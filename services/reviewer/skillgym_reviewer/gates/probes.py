"""Probes on the solved workspace. Too lax: empty, missing, corrupted and forged answers and
tampered inputs must fail. Too strict: the template's alternative solutions and harmless
re-formattings of the reference answers must pass."""

from __future__ import annotations

import json
import os
import re
import tempfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from skillgym_core.contracts.task import TaskDir
from skillgym_core.envbuild import EnvironmentBuildError
from skillgym_core.sandbox.janitor import remove_tree
from skillgym_core.sandbox.workspace import safe_copy_tree
from skillgym_core.taskrun import TaskRunner, VerifierOutcome, agent_logs_dir

from skillgym_reviewer.gates.forgery import code_files, plant_edit, wrote_the_verdict
from skillgym_reviewer.gates.pool import default_workers, parallel_map
from skillgym_reviewer.gates.validity import Evidence, changed_files, checker_crashed, workspace_files
from skillgym_reviewer.report import GateResult

MAX_PROBE_FILES = 6
# a line that only closes a markup element: HTML parsers close it themselves, so dropping or
# garbling it changes nothing a fair verifier looks at
CLOSING_TAG = re.compile(r"^\s*(?:</[A-Za-z][\w:.-]*\s*>\s*)+$")
FORGED_BY_CODE = "forged-by-code"
# bulk verifier runs side by side: one per core keeps the cores busy without more start-ups
BULK_BATCHES = max(1, min(4, os.cpu_count() or 1))
COPY_MAX_BYTES, COPY_MAX_FILES = 256 * 1024 * 1024, 20000
Edit = Callable[[Path], None]


@dataclass
class Probe:
    name: str
    edit: Edit
    start: str = "solved"  # or "initial"


def set_file(rel: str, data: bytes | None) -> Edit:
    """Write ``data`` to ``rel`` (None: delete it)."""

    def edit(ws: Path) -> None:
        target = ws / rel
        if data is None:
            target.unlink(missing_ok=True)
        else:
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(data)

    return edit


def _first_leaf(value: Any, change: Callable[[Any], Any]) -> tuple[Any, bool]:
    """``value`` with its first scalar leaf changed by ``change``."""
    if isinstance(value, dict):
        for key in value:
            new, done = _first_leaf(value[key], change)
            if done:
                return {**value, key: new}, True
    elif isinstance(value, list):
        for index, item in enumerate(value):
            new, done = _first_leaf(item, change)
            if done:
                return [*value[:index], new, *value[index + 1 :]], True
    else:
        return change(value), True
    return value, False


def _corrupt_scalar(value: Any) -> Any:
    if isinstance(value, bool):
        return not value
    if isinstance(value, int | float):
        return value + 7
    if isinstance(value, str):
        return value[::-1] + " (altered)" if value else "altered"
    return "altered"


def _drop_one(value: Any) -> Any:
    if isinstance(value, dict) and value:
        return {k: v for k, v in list(value.items())[:-1]}
    if isinstance(value, list) and value:
        return value[:-1]
    return None


def _first_number(value: Any, change: Callable[[Any], Any]) -> tuple[Any, bool]:
    """``value`` with its first numeric leaf changed by ``change``."""
    if isinstance(value, dict):
        for key in value:
            new, done = _first_number(value[key], change)
            if done:
                return {**value, key: new}, True
    elif isinstance(value, list):
        for index, item in enumerate(value):
            new, done = _first_number(item, change)
            if done:
                return [*value[:index], new, *value[index + 1 :]], True
    elif isinstance(value, int | float) and not isinstance(value, bool):
        return change(value), True
    return value, False


def changed_inputs(rel: str, data: bytes) -> list[bytes]:
    """Forged versions of one input file that the reference solution can still read, tried in
    turn until one moves its result: a JSON file's first number changed (a setting, a limit),
    else a record dropped (the last one, then one from the middle, as the last may be one the
    task skips anyway)."""
    try:
        parsed = json.loads(data)
    except (UnicodeDecodeError, json.JSONDecodeError):
        parsed = None
    if isinstance(parsed, dict | list):
        changed, done = _first_number(parsed, _corrupt_scalar)
        if done:
            return [(json.dumps(changed, indent=2) + "\n").encode()]
        variants = dict(mutations(rel, data))
        return [v for v in [variants.get("drop-entry")] if v is not None and v != data]
    lines = data.decode("utf-8", "replace").splitlines(keepends=True)
    content = [i for i, line in enumerate(lines) if line.strip()]
    drops = list(dict.fromkeys(content[-1:] + content[len(content) // 2 : len(content) // 2 + 1]))
    return ["".join(line for i, line in enumerate(lines) if i != drop).encode() for drop in drops]


def mutations(rel: str, data: bytes) -> list[tuple[str, bytes]]:
    """Deliberately wrong versions of one answer file."""
    try:
        parsed = json.loads(data)
    except (UnicodeDecodeError, json.JSONDecodeError):
        lines = data.decode("utf-8", "replace").splitlines()
        content = [i for i, line in enumerate(lines) if line.strip() and not CLOSING_TAG.match(line)]
        if not content:
            return []
        corrupted = list(lines)
        # "@@" breaks the line's syntax in code too: a garbled line that still parses (a
        # JavaScript expression statement after hoisted functions) can leave a program whole
        corrupted[content[-1]] = corrupted[content[-1]][::-1] + " @@ altered"
        dropped = [line for i, line in enumerate(lines) if i != content[-1]]
        return [("corrupt-line", "\n".join(corrupted).encode() + b"\n"), ("drop-line", "\n".join(dropped).encode() + b"\n")]
    changed, _ = _first_leaf(parsed, _corrupt_scalar)
    return [("corrupt-value", json.dumps(changed).encode()), ("drop-entry", json.dumps(_drop_one(parsed)).encode())]


def reformattings(rel: str, data: bytes) -> list[tuple[str, bytes]]:
    """Equivalent versions of one answer file that a fair verifier must accept."""
    try:
        parsed = json.loads(data)
    except (UnicodeDecodeError, json.JSONDecodeError):
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError:  # an image, an archive: a newline is not formatting there
            return []
        toggled = text.rstrip("\n") if text.endswith("\n") else text + "\n"
        return [("toggle-final-newline", toggled.encode())]
    return [
        ("json-compact", json.dumps(parsed, separators=(",", ":"), ensure_ascii=False).encode()),
        ("json-indented", (json.dumps(parsed, indent=4, ensure_ascii=True) + "\n").encode()),
    ]


class Prober:
    def __init__(
        self, task: TaskDir, runner: TaskRunner, evidence: Evidence, workdir: Path, workers: int | None = None,
        *, bulk: bool = True,
    ) -> None:
        self.task = task
        self.bulk = bulk
        self.workers = workers or default_workers()
        self.runner = runner
        self.evidence = evidence
        self.workdir = workdir
        self.instruction = task.instruction()
        self.alternative_outputs: dict[str, dict[str, bytes]] = {}  # accepted alternative -> what it produced

    def _copy(self, start: str) -> Path:
        source = self.evidence.solved_workspace if start == "solved" else self.evidence.initial_workspace
        target = Path(tempfile.mkdtemp(prefix="probe-", dir=self.workdir))
        target.rmdir()
        safe_copy_tree(source, target, max_bytes=COPY_MAX_BYTES, max_files=COPY_MAX_FILES)
        return target

    def discard(self, workspace: Path) -> None:
        remove_tree(workspace)
        remove_tree(agent_logs_dir(workspace))

    def verify(self, probe: Probe) -> VerifierOutcome:
        workspace = self._copy(probe.start)
        try:
            probe.edit(workspace)
            return self.runner.verify(self.task, workspace)
        finally:
            remove_tree(workspace)

    def verify_all(self, probes: Sequence[Probe]) -> list[VerifierOutcome]:
        """:meth:`verify` of each probe, in order. Probes whose files are data (every probe but
        the planted code of ``forging_probes``) are judged in bulk, a batch per core; a planted
        payload the verifier ran would share its run with the others, so each of those runs alone."""
        bulk = [i for i, probe in enumerate(probes) if self.bulk and not probe.name.startswith(FORGED_BY_CODE)]
        alone = sorted(set(range(len(probes))) - set(bulk))
        batches = [bulk[k::BULK_BATCHES] for k in range(BULK_BATCHES) if bulk[k::BULK_BATCHES]]
        outcomes: dict[int, VerifierOutcome] = {}
        for batch, judged in zip(batches, parallel_map(lambda b: self._verify_batch([probes[i] for i in b]), batches,
                                                       self.workers), strict=True):
            outcomes.update(zip(batch, judged, strict=True))
        outcomes.update(zip(alone, parallel_map(self.verify, [probes[i] for i in alone], self.workers), strict=True))
        return [outcomes[i] for i in range(len(probes))]

    def _verify_batch(self, probes: Sequence[Probe]) -> list[VerifierOutcome]:
        workspaces: list[Path] = []
        try:
            for probe in probes:
                workspaces.append(self._copy(probe.start))
                probe.edit(workspaces[-1])
            return self.runner.verify_many(self.task, workspaces)
        finally:
            for workspace in workspaces:
                remove_tree(workspace)

    def declared_outputs(self) -> dict[str, bytes]:
        """Answer files the instruction names (auxiliary files the solution left are not judged)."""
        outputs = self.evidence.outputs()
        named = {rel: data for rel, data in outputs.items() if rel in self.instruction or Path(rel).name in self.instruction}
        return dict(list((named or outputs).items())[:MAX_PROBE_FILES])

    def lax_probes(self) -> list[Probe]:
        outputs = self.declared_outputs()
        probes = [Probe(f"empty:{rel}", set_file(rel, b"")) for rel in outputs]
        if len(outputs) > 1:
            probes += [Probe(f"missing:{rel}", set_file(rel, None)) for rel in outputs]
        for rel, data in outputs.items():
            probes += [Probe(f"{name}:{rel}", set_file(rel, wrong)) for name, wrong in mutations(rel, data)]
        probes += [
            Probe("forged-reward:reward.txt", set_file("reward.txt", b"1\n"), start="initial"),
            Probe("forged-reward:reward.json", set_file("reward.json", b'{"reward": 1.0}'), start="initial"),
        ]
        return probes + self.forging_probes()

    def forging_probes(self) -> list[Probe]:
        """The agent's code files with a payload that writes the verdict (see ``forgery``)."""
        protected = {item.path for item in self.task.config().metadata.protected_inputs}
        files = code_files(self.evidence.outputs(), workspace_files(self.evidence.solved_workspace), protected,
                           MAX_PROBE_FILES)
        return [Probe(f"{FORGED_BY_CODE}:{rel}", plant_edit(rel, data)) for rel, data in files.items()]

    def tamper_probes(self) -> list[Probe]:
        protected = self.task.config().metadata.protected_inputs
        return [Probe(f"tampered-input:{item.path}", _append(item.path)) for item in protected]

    def strict_probes(self) -> list[Probe]:
        probes = []
        for rel, data in self.declared_outputs().items():
            probes += [Probe(f"{name}:{rel}", set_file(rel, same)) for name, same in reformattings(rel, data)]
        return probes

    def tampered_inputs(self) -> dict[str, list[bytes]]:
        """Input files to tamper with: left unchanged by the solution, protected or named in the
        instruction, each with a changed version (a record dropped)."""
        outputs = self.evidence.outputs()
        protected = {item.path for item in self.task.config().metadata.protected_inputs}
        chosen: dict[str, list[bytes]] = {}
        for rel, data in workspace_files(self.evidence.initial_workspace).items():
            if rel in outputs or not (rel in protected or rel in self.instruction):
                continue
            changed = changed_inputs(rel, data)
            if changed:
                chosen[rel] = changed
        return dict(list(chosen.items())[:MAX_PROBE_FILES])

    def resolve_on_tampered(self, rel: str, variants: list[bytes]) -> VerifierOutcome | None:
        """Change an input, rerun the reference solution, and judge it: a verifier that trusts the
        agent's copy of the inputs accepts a result computed from forged data. A change that
        leaves the reference result as it was says nothing: the next variant is tried."""
        reference = self.evidence.outputs()
        for data in variants:
            workspace = self.runner.fresh_workspace(self.task, self.workdir)
            try:
                (workspace / rel).write_bytes(data)
                if not self.runner.run_solution(self.task, workspace).ok:
                    continue
                produced = workspace_files(workspace)
                if all(produced.get(out) == content for out, content in reference.items()):
                    continue
                return self.runner.verify(self.task, workspace)
            finally:
                remove_tree(workspace)
        return None

    def run_alternative(self, script: Path) -> tuple[bool, str]:
        rel = script.relative_to(self.task.solution).as_posix()
        workspace = self.runner.fresh_workspace(self.task, self.workdir)
        try:
            try:  # as the reference solution runs: its environment, workdir, limits and time
                result = self.runner.run_solution(self.task, workspace, script=rel)
            except EnvironmentBuildError as exc:
                return False, f"alternative {rel} did not run: environment build failed ({exc.reason})"
            if not result.ok:
                return False, f"alternative {rel} did not run ({result.outcome.value}, exit {result.exit_code})"
            outcome = self.runner.verify(self.task, workspace)
            if outcome.passed:
                self.alternative_outputs[rel] = changed_files(self.evidence.initial_workspace, workspace)
            return outcome.passed, f"valid alternative {rel} rejected (reward {outcome.reward})"
        finally:
            remove_tree(workspace)


def _append(rel: str) -> Edit:
    def edit(ws: Path) -> None:
        path = ws / rel
        path.write_bytes((path.read_bytes() if path.is_file() else b"") + b"\n")

    return edit


def lax_gate(prober: Prober) -> GateResult:
    passed_wrong, crashes = [], []
    probes = prober.lax_probes() + prober.tamper_probes()
    tampered = prober.tampered_inputs()
    outcomes = prober.verify_all(probes)
    resolved = parallel_map(lambda item: prober.resolve_on_tampered(*item), list(tampered.items()), prober.workers)
    for probe, outcome in zip(probes, outcomes, strict=True):
        if probe.name.startswith(FORGED_BY_CODE):
            if outcome.passed and wrote_the_verdict(outcome.rewards):
                passed_wrong.append(f"{probe.name} (agent code the verifier runs with its own rights wrote the verdict)")
            continue  # a pass on a file the verifier never ran is a right answer; a broken run fails only itself
        elif outcome.passed:
            passed_wrong.append(probe.name)
        elif crash := checker_crashed(outcome):
            crashes.append(f"{probe.name}: {crash}")
    for rel, rerun in zip(tampered, resolved, strict=True):
        if rerun is not None and rerun.passed:
            passed_wrong.append(f"tampered-input-resolved:{rel} (the verifier trusts the agent's copy of {rel})")
    if crashes:
        return GateResult.fail("too_lax_probes", "checker_error", [f"verifier crashed on a wrong answer: {c}" for c in crashes])
    if passed_wrong:
        return GateResult.fail(
            "too_lax_probes", "too_lax", [f"verifier accepts a wrong or forged result: {name}" for name in passed_wrong],
            probes=len(probes),
        )
    return GateResult.ok(
        "too_lax_probes", probes=[p.name for p in probes] + [f"tampered-input-resolved:{rel}" for rel in tampered]
    )


def strict_gate(prober: Prober) -> GateResult:
    probes = prober.strict_probes()
    alternatives = sorted((prober.task.solution / "alternatives").glob("*.sh")) if prober.task.solution.is_dir() else []
    outcomes = prober.verify_all(probes)
    rejected = [f"verifier rejects an equivalent answer: {probe.name}"
                for probe, outcome in zip(probes, outcomes, strict=True) if not outcome.passed]
    rejected += [reason for ok, reason in parallel_map(prober.run_alternative, alternatives, prober.workers) if not ok]
    if rejected:
        return GateResult.fail("too_strict_probes", "too_strict", rejected)
    return GateResult.ok("too_strict_probes", probes=[p.name for p in probes], alternatives=[s.name for s in alternatives])
