"""Many workspaces judged by a task's built-in checker in one sandbox run.

Reviewing a task means judging dozens of wrong outputs (mutants, probes) that are data the
reviewer made, not code an agent wrote. Judged one sandbox each, most of the cost is starting
the sandbox, the interpreter and the checker's imports again; :func:`verify_batch` pays that once
and judges each workspace in a fresh fork (see :mod:`.driver`), laid out at the same path with
the same environment, logs and limits as :meth:`TaskRunner.verify` would give it. Each verdict
goes through the same reading, rubric and failure typing as a single run's.

Only a task whose ``tests/`` is the built-in runner (its ``test.sh``, ``checks.py`` and a
``verify.py``) on the local sandbox is judged in bulk; any other, or a batch the bulk run could
not finish, is judged one run at a time. Work that runs agent-written code never comes here."""

from __future__ import annotations

import json
import logging
import os
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from skillgym_core.builtin_verifier import uses_builtin_runner
from skillgym_core.contracts.task import AGENT_WORKDIR, TaskDir
from skillgym_core.envbuild.provider import EnvironmentBuildError
from skillgym_core.reward import read_verdict
from skillgym_core.sandbox.base import Mount, Outcome, SandboxResult
from skillgym_core.sandbox.janitor import discard_tree
from skillgym_core.sandbox.owned_dirs import owned_dir
from skillgym_core.sandbox.workspace import WorkspaceError
from skillgym_core.taskrun import TaskRunner, VerifierOutcome

LOG = logging.getLogger(__name__)
DRIVER_DIR = Path(__file__).resolve().parent
DRIVER_MOUNT = "/opt/skillgym-bulk"
BULK_MOUNT = "/bulk"
LOGS_MOUNT = "/logs"
MAX_OUTPUT_BYTES = 64 * 1024
RUN_SLACK_S = 30.0
KILLED_EXIT = 128 + 9
BULK_BACKENDS = frozenset({"local"})


@dataclass
class _Item:
    index: int
    tampered: list[str]
    skipped: list[str]
    dropped: list[dict[str, str]]


def verify_batch(runner: TaskRunner, task: TaskDir, workspaces: Sequence[Path],
                 timeout_s: float | None = None) -> list[VerifierOutcome]:
    """:meth:`TaskRunner.verify` of each workspace, in order: in one sandbox run where the task
    allows it, else one run each."""
    def one_by_one(chosen: Sequence[Path]) -> list[VerifierOutcome]:
        return [runner.verify(task, workspace, timeout_s=timeout_s) for workspace in chosen]

    config = runner.config(task)
    if (len(workspaces) < 2 or runner.sandbox.name not in BULK_BACKENDS or runner.workdir(task) != AGENT_WORKDIR
            or not uses_builtin_runner(task.tests)):
        return one_by_one(workspaces)
    try:
        extra_mounts, env = runner.environment_extras(task, runner.verifier_env(config))
    except EnvironmentBuildError:
        return one_by_one(workspaces)  # the single run reports the failure, typed
    per_item_s = timeout_s or config.verifier.timeout_sec
    storage_mb = runner.storage_mb(task)
    scratch = Path(tempfile.mkdtemp(prefix="verify-bulk-", dir=owned_dir(Path(tempfile.gettempdir()), "skillgym-verify-",
                                                                         mode=0o711)))
    outcomes: dict[int, VerifierOutcome] = {}
    try:
        runner.mount_scratch(scratch, len(workspaces) * storage_mb + 2 * storage_mb)
        bulk, app, logs = scratch / "bulk", scratch / "app", scratch / "logs"
        items: list[_Item] = []
        for directory in (bulk, app, logs, logs / "verifier"):
            directory.mkdir(parents=True, exist_ok=True)
        for index, workspace in enumerate(workspaces):
            tampered = runner.tampered_inputs(task, workspace)
            item_dir = bulk / str(len(items))
            try:
                copied = runner.copy_for_verifier(workspace, item_dir / "app", storage_mb)
            except WorkspaceError as exc:
                outcomes[index] = VerifierOutcome.failed(exc.reason, tampered=tampered, detail=str(exc))
                continue
            (item_dir / "logs").mkdir()
            items.append(_Item(index, tampered, copied.skipped, copied.dropped))
        runner.hand_over(scratch)
        if items:
            result = runner.sandbox.run(
                ["python3", f"{DRIVER_MOUNT}/driver.py", BULK_MOUNT, str(len(items)), str(per_item_s)],
                mounts=[Mount(app, AGENT_WORKDIR, writable=True), Mount(logs, LOGS_MOUNT, writable=True),
                        Mount(bulk, BULK_MOUNT, writable=True), Mount(task.tests, "/tests"),
                        Mount(DRIVER_DIR, DRIVER_MOUNT), *extra_mounts],
                workdir=AGENT_WORKDIR, env=env,
                limits=replace(runner.limits(task, per_item_s), wall_s=len(items) * (per_item_s + 1) + RUN_SLACK_S),
            )  # fmt: skip
            for number, item in enumerate(items):
                judged = _judged(runner, task, bulk / str(number), item)
                if judged is not None:
                    outcomes[item.index] = judged
            if result.outcome is not Outcome.OK:
                LOG.info("bulk verifier run ended %s; the workspaces it did not judge are judged one run each",
                         result.outcome.value)
    finally:
        discard_tree(scratch)
    missing = [index for index in range(len(workspaces)) if index not in outcomes]
    for index, outcome in zip(missing, one_by_one([workspaces[i] for i in missing]), strict=True):
        outcomes[index] = outcome
    return [outcomes[index] for index in range(len(workspaces))]


def _judged(runner: TaskRunner, task: TaskDir, item_dir: Path, item: _Item) -> VerifierOutcome | None:
    """One workspace's verdict from what the driver left, or None where it did not finish it."""
    logs = item_dir / "logs"
    try:
        status = json.loads((logs / "status.json").read_text(encoding="utf-8"))
        exit_code, timed_out, seconds = int(status["exit"]), bool(status["timed_out"]), float(status["seconds"])
    except (OSError, ValueError, KeyError, TypeError):
        return None
    if exit_code == KILLED_EXIT and not timed_out:
        return None  # killed from outside (the memory limit): a run of its own tells how
    result = SandboxResult(
        Outcome.TIMEOUT if timed_out else Outcome.OK, None if timed_out else exit_code,
        _tail(logs / "stdout"), _tail(logs / "stderr"), seconds,
        detail={"reason": "wall-clock limit"} if timed_out else {},
    )  # fmt: skip
    reading = read_verdict(logs / "verifier")
    return runner.judged_outcome(task, result, reading, item_dir / "app", item.tampered, item.skipped, item.dropped)


def _tail(path: Path) -> str:
    try:
        with path.open("rb") as handle:
            handle.seek(max(0, os.path.getsize(path) - MAX_OUTPUT_BYTES))
            return handle.read().decode("utf-8", "replace")
    except OSError:
        return ""
