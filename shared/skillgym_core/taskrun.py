"""Running a Harbor task's phases in a sandbox: the initial workspace, the reference solution,
agent commands, and the trusted verifier.

The agent only ever sees the workspace (at the task's ``[environment] workdir``, ``/app`` by
default) and, when given, the skills (read-only
at ``/skills``); ``tests/`` and ``solution/`` are never mounted for it. The verifier runs on
a *fresh copy* of the final workspace with its own read-only ``/tests`` and an empty
``/logs/verifier``, so reward files the agent pre-wrote are discarded. Protected inputs are
checksummed before the verifier runs; a changed one fails the run as ``tampered_inputs``.
Everything the host reads back from a sandbox-written tree is read without following links
(see :mod:`skillgym_core.sandbox.workspace`).

With an :class:`~skillgym_core.envbuild.EnvironmentProvider`, every run (solution, agent
commands, verifier) also gets the task's built environment, mounted read-only with its
``bin`` first on PATH. A task with ``tests/eval_spec.json`` is graded by its weighted rubric:
``test.sh``'s deterministic item scores combined with LLM-judge scores (see
:mod:`skillgym_core.rubric`)."""

from __future__ import annotations

import hashlib
import os
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from skillgym_core.contracts.task import AGENT_WORKDIR, EnvPhase, TaskConfig, TaskDir
from skillgym_core.envbuild.provider import EnvironmentBuildError, EnvironmentProvider, PreparedEnvironment
from skillgym_core.errors import ContractError
from skillgym_core.reward import RewardReading, read_verdict
from skillgym_core.rubric import EvalJudge, EvalSpec, RubricScore, load_eval_spec, score_rubric
from skillgym_core.sandbox.base import Limits, Mount, Outcome, Sandbox, SandboxResult
from skillgym_core.sandbox.hostmounts import can_mount, mount_volume
from skillgym_core.sandbox.janitor import discard_tree
from skillgym_core.sandbox.owned_dirs import owned_dir
from skillgym_core.sandbox.session import SandboxSession, open_session, resume_session
from skillgym_core.sandbox.workspace import (
    CopyReport,
    WorkspaceError,
    resolve_inside,
    safe_copy_tree,
    sha256_regular_file,
)

SKILLS_MOUNT = "/skills"
AGENT_LOGS_MOUNT = "/logs/agent"
AGENT_LOGS_MB = 64
MAX_REWARD_FILE_BYTES = 64 * 1024
MAX_PROTECTED_INPUT_BYTES = 1 << 30
# Settings every git command of the verifier runs with, above the repository's own config: an
# agent's ``.git/config`` must not run code (fsmonitor, hooks, pager, editor, ssh) as the verifier.
GIT_GUARDS = {
    "core.fsmonitor": "false",
    "core.hooksPath": "/dev/null",
    "core.pager": "cat",
    "core.editor": "false",
    "core.sshCommand": "false",
    "core.askPass": "false",
    "credential.helper": "",
    "protocol.allow": "never",
    "diff.external": "",
}
# The verifier runs with the agent's files as its working directory: never let Python put
# that directory first on sys.path, or a planted ``pytest.py`` would grade itself.
VERIFIER_ENV = {
    "PYTHONSAFEPATH": "1",
    # every backend gives a run its own process namespace: the built-in checker may end the
    # run's other processes before it writes the verdict (see the verifier's checks.py)
    "SKILLGYM_VERIFIER_SEAL": "1",
    "PYTHONDONTWRITEBYTECODE": "1",
    "GIT_CONFIG_NOSYSTEM": "1",
    "GIT_CONFIG_GLOBAL": "/dev/null",
    "GIT_TERMINAL_PROMPT": "0",
    "GIT_NO_REPLACE_OBJECTS": "1",
    "GIT_CONFIG_COUNT": str(len(GIT_GUARDS)),
    **{f"GIT_CONFIG_KEY_{i}": key for i, key in enumerate(GIT_GUARDS)},
    **{f"GIT_CONFIG_VALUE_{i}": value for i, value in enumerate(GIT_GUARDS.values())},
}
# room for what the verifier itself writes (logs, caches) beside the agent's files
VERIFIER_SCRATCH_EXTRA_MB = 256
JUDGE_FROM_ROLE: Literal["from_role"] = "from_role"
# A verifier whose main process (or the checker it waits for) ended by a signal exits 128 + the
# signal: code the verifier ran may have killed the checker and written a verdict of its own.
SIGNAL_EXIT_BASE = 128
# failures that still carry the verifier's own rewards; with any other, the rewards are a stand-in 0
JUDGED_FAILURES = frozenset({"verifier_rejected", "judge_unavailable"})


@dataclass
class VerifierOutcome:
    reward: float
    rewards: dict[str, float]
    passed: bool
    failure_type: str | None
    result: SandboxResult | None
    tampered: list[str] = field(default_factory=list)
    skipped_files: list[str] = field(default_factory=list)
    rubric: dict[str, Any] | None = None  # per-item scores when the task has tests/eval_spec.json
    detail: str = ""  # why the verifier could not run or its reward was refused
    dropped_files: list[dict[str, str]] = field(default_factory=list)  # {"path", "reason"} not handed over

    @property
    def judged(self) -> bool:
        """Whether ``rewards`` are the verifier's verdict, not the 0 standing in for a verifier
        that gave none (it did not finish, wrote no sound reward, or its inputs were tampered with)."""
        return self.failure_type is None or self.failure_type in JUDGED_FAILURES

    def to_dict(self) -> dict[str, object]:
        extra: dict[str, object] = {}
        if self.rubric is not None:
            extra["rubric"] = self.rubric
        if self.detail:
            extra["detail"] = self.detail
        return {
            **extra,
            "reward": self.reward,
            "rewards": self.rewards,
            "passed": self.passed,
            "failure_type": self.failure_type,
            "tampered": self.tampered,
            "skipped_files": self.skipped_files,
            "dropped_files": self.dropped_files,
            "outcome": self.result.outcome.value if self.result else None,
            "exit_code": self.result.exit_code if self.result else None,
            "duration_s": self.result.duration_s if self.result else None,
            "stdout": self.result.stdout[-4000:] if self.result else "",
            "stderr": self.result.stderr[-4000:] if self.result else "",
        }

    @classmethod
    def failed(
        cls,
        failure_type: str,
        result: SandboxResult | None = None,
        *,
        tampered: list[str] | None = None,
        skipped_files: list[str] | None = None,
        detail: str = "",
    ) -> VerifierOutcome:
        return cls(
            0.0, {"reward": 0.0}, False, failure_type, result, list(tampered or []), list(skipped_files or []),
            detail=detail,
        )  # fmt: skip


def environment_failure(exc: EnvironmentBuildError) -> SandboxResult:
    """The result of a run that could not start because the task's environment did not build."""
    tail = exc.log_tail.strip()[-2000:]
    message = f"environment build failed ({exc.reason}): {exc}" + (f"\n{tail}" if tail else "")
    detail = {"reason": "environment_error", "environment": exc.to_dict()}
    return SandboxResult(Outcome.SANDBOX_ERROR, None, "", message, 0.0, detail=detail)


def sha256_file(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def agent_logs_dir(workspace: Path) -> Path:
    """Where the ``/logs/agent`` folder of ``workspace``'s runs lives: beside it."""
    return workspace.parent / f"{workspace.name}.agent-logs"


class TaskRunner:
    def __init__(
        self,
        sandbox: Sandbox,
        *,
        pass_threshold: float = 1.0,
        max_workspace_bytes: int = 512 * 1024 * 1024,
        max_workspace_files: int = 50_000,
        environment: EnvironmentProvider | None = None,
        judge: EvalJudge | Literal["from_role"] | None = JUDGE_FROM_ROLE,
    ) -> None:
        """``environment`` builds (or finds cached) each task's environment; ``judge`` scores
        ``llm_judge`` rubric items (by default the ``judge`` role's endpoint, made on first
        use; None: judge items score 0 and the outcome says no judge was configured)."""
        self.sandbox = sandbox
        self.pass_threshold = pass_threshold
        self.max_workspace_bytes = max_workspace_bytes
        self.max_workspace_files = max_workspace_files
        self.environment = environment
        self._judge = judge
        self._configs: dict[Path, tuple[tuple[int, int], TaskConfig]] = {}

    def config(self, task: TaskDir) -> TaskConfig:
        """``task.config()``, parsed once per version of ``task.toml``."""
        info = task.config_path.stat()
        version = (info.st_mtime_ns, info.st_size)
        cached = self._configs.get(task.config_path)
        if cached is None or cached[0] != version:
            if len(self._configs) > 256:
                self._configs.clear()
            cached = (version, task.config())
            self._configs[task.config_path] = cached
        return cached[1]

    def _owner(self) -> tuple[int, int] | None:
        """Who must own what the sandbox writes (the sandbox's unprivileged uid)."""
        owner = getattr(self.sandbox, "workspace_owner", None)
        return owner if isinstance(owner, tuple) else None

    def hand_over(self, path: Path) -> None:
        """Give ``path`` (a directory a harness made for a run to write in) and what is below it
        to the sandbox's uid, where the sandbox runs as one; links are changed, never followed."""
        owner = self._owner()
        if owner is None:
            return
        os.chown(path, *owner, follow_symlinks=False)
        for found in path.rglob("*"):
            os.chown(found, *owner, follow_symlinks=False)

    def storage_mb(self, task: TaskDir) -> int:
        declared = self.config(task).environment.storage_mb
        ceiling = self.max_workspace_bytes // (1024 * 1024)
        return max(1, min(declared, ceiling) if declared else ceiling)

    def _copy_report(self, src: Path, dst: Path, *, max_bytes: int | None = None,
                     inside: str = AGENT_WORKDIR) -> CopyReport:  # fmt: skip
        """Copy a sandbox-written tree as data: links never lead out of it (see
        :func:`~skillgym_core.sandbox.workspace.safe_copy_tree`; ``inside`` is where it was
        mounted), the result owned by the sandbox uid."""
        return safe_copy_tree(
            src, dst, max_bytes=max_bytes or self.max_workspace_bytes, max_files=self.max_workspace_files,
            owner=self._owner(), inside_prefix=inside,
        )  # fmt: skip

    def _copy(self, src: Path, dst: Path, *, max_bytes: int | None = None, inside: str = AGENT_WORKDIR) -> list[str]:
        return self._copy_report(src, dst, max_bytes=max_bytes, inside=inside).skipped

    def copy_out(self, src: Path, dst: Path, *, inside: str) -> list[str]:
        """Copy what a run wrote in ``src`` (mounted at ``inside``) to ``dst`` as data, within the
        workspace budget, before the host reads any of it; returns what was left out and why."""
        return self._copy(src, dst, inside=inside)

    def _volume(self, directory: Path, size_mb: int) -> bool:
        """Mount a tmpfs of ``size_mb`` on ``directory`` where this process may; False otherwise
        (the copy budget then is the only bound)."""
        owner = self._owner()
        if owner is None or not can_mount():
            return False
        mount_volume(directory, size_mb=size_mb, owner=owner)
        return True

    def fresh_workspace(self, task: TaskDir, parent: Path) -> Path:
        """A copy of the task's initial workspace on a volume capped at the task's ``storage_mb``
        (writes past it fail inside the run with ``ENOSPC``). Discard it with the janitor."""
        workspace = Path(tempfile.mkdtemp(prefix="ws-", dir=parent))
        self._volume(workspace, self.storage_mb(task))
        budget = self.storage_mb(task) * 1024 * 1024
        if task.workspace.is_dir():
            self._copy(task.workspace, workspace, max_bytes=budget)
            return workspace
        image_files = self._image_workdir(task, parent)
        if image_files is not None:
            try:
                self._copy(image_files, workspace, max_bytes=budget, inside=self.workdir(task))
            finally:
                discard_tree(image_files)
        elif (owner := self._owner()) is not None:
            os.chown(workspace, *owner)
        return workspace

    def _image_workdir(self, task: TaskDir, parent: Path) -> Path | None:
        """A task with no ``environment/workspace/`` whose image holds its workdir (a Harbor task
        that copies its inputs in the Dockerfile): those files, unpacked as data; else None.
        An environment that does not build gives None here; its runs report the failure."""
        try:
            prepared = self.prepare_environment(task)
        except EnvironmentBuildError:
            return None
        if prepared is None:
            return None
        staging = Path(tempfile.mkdtemp(prefix="image-ws-", dir=parent))
        if prepared.export_workdir(self.config(task).environment.workdir, staging):
            return staging
        discard_tree(staging)
        return None

    def prepare_environment(self, task: TaskDir) -> PreparedEnvironment | None:
        """The task's environment (None without a provider or requirements); raises
        :class:`EnvironmentBuildError` when it cannot be built."""
        if self.environment is None:
            return None
        return self.environment.prepare(task, timeout_s=self.config(task).environment.build_timeout_sec)

    def environment_extras(
        self, task: TaskDir, env: Mapping[str, str] | None = None
    ) -> tuple[list[Mount], Mapping[str, str] | None]:
        """Extra mounts and the run environment for a command of ``task`` run outside this
        class's methods (harnesses that call the sandbox directly); raises EnvironmentBuildError."""
        prepared = self.prepare_environment(task)
        return ([], env) if prepared is None else (prepared.mounts(), prepared.run_env(env))

    def agent_logs(self, workspace: Path) -> Path:
        """The run's ``/logs/agent`` (Harbor's layout): beside ``workspace``, kept across its
        commands and the solution, writable by them; the verifier never sees it."""
        logs = agent_logs_dir(workspace)
        if not logs.is_dir():
            logs.mkdir(mode=0o755)
            # a volume of its own, as the workspace's: bounded, and no host path in the run's mount table
            if not self._volume(logs, AGENT_LOGS_MB) and (owner := self._owner()) is not None:
                os.chown(logs, *owner)
        return logs

    def discard_workspace(self, workspace: Path) -> None:
        """``workspace`` and its ``/logs/agent`` folder, volumes included."""
        discard_tree(workspace)
        discard_tree(agent_logs_dir(workspace))

    def _agent_mounts(self, task: TaskDir, workspace: Path, skills: Path | None) -> list[Mount]:
        mounts = [Mount(workspace, self.workdir(task), writable=True),
                  Mount(self.agent_logs(workspace), AGENT_LOGS_MOUNT, writable=True)]  # fmt: skip
        if skills is not None and skills.is_dir():
            mounts.append(Mount(skills, SKILLS_MOUNT))
        return mounts

    def workdir(self, task: TaskDir) -> str:
        """Where the workspace is mounted and every run starts: ``[environment] workdir``."""
        return self.config(task).environment.workdir

    def run_in_environment(
        self, task: TaskDir, command: list[str], mounts: list[Mount], env: Mapping[str, str] | None, timeout_s: float,
        *, phase: EnvPhase = "agent",
    ) -> SandboxResult:
        """``command`` in the task's environment with ``mounts``, starting in its workdir, with the
        variables the task gives ``phase`` (``env`` over them)."""
        try:
            extra_mounts, run_env = self.environment_extras(task, {**self.config(task).env_for(phase), **(env or {})})
        except EnvironmentBuildError as exc:
            return environment_failure(exc)
        return self.sandbox.run(
            command,
            mounts=[*mounts, *extra_mounts],
            workdir=self.workdir(task),
            env=run_env,
            limits=self.limits(task, timeout_s),
        )

    def _eval_judge(self) -> EvalJudge | None:
        if self._judge == JUDGE_FROM_ROLE:
            self._judge = EvalJudge.for_role("judge")
        return self._judge if isinstance(self._judge, EvalJudge) else None

    def limits(self, task: TaskDir, timeout_s: float) -> Limits:
        """The task's run limits with a wall-clock limit of ``timeout_s``."""
        env = self.config(task).environment
        return Limits(
            wall_s=timeout_s, memory_mb=env.memory_mb or 2048, cpus=float(env.cpus) if env.cpus else None,
            storage_mb=self.storage_mb(task),
        )  # fmt: skip

    def run_solution(
        self, task: TaskDir, workspace: Path, *, solution: Path | None = None, timeout_s: float | None = None,
        script: str = "solve.sh",
    ) -> SandboxResult:
        """The reference solution (``solution``: a step's own; ``script``: an alternative under it,
        run the same way) on ``workspace``."""
        timeout = timeout_s or self.config(task).agent.timeout_sec
        return self.run_in_environment(
            task,
            ["bash", f"/solution/{script}"],
            [
                # the oracle sees the skill where the agent does (the image copies it to skills_dir)
                *self._agent_mounts(task, workspace, task.skills),
                Mount(solution or task.solution, "/solution"),
            ],
            None,
            timeout,
            phase="solution",
        )

    def run_agent_command(
        self,
        task: TaskDir,
        workspace: Path,
        command: str,
        *,
        skills: Path | None = None,
        timeout_s: float = 120,
        env: Mapping[str, str] | None = None,
    ) -> SandboxResult:
        mounts = self._agent_mounts(task, workspace, skills)
        return self.run_in_environment(task, ["bash", "-lc", command], mounts, env, timeout_s)

    def open_agent_session(
        self, task: TaskDir, workspace: Path, *, skills: Path | None = None, lifetime_s: float, idle_s: float,
        record: Mapping[str, Any] | None = None,
    ) -> SandboxSession:  # fmt: skip
        """A session for an agent's commands on ``workspace`` (each as ``bash -lc``, like
        :meth:`run_agent_command`): on Kubernetes one warm pod for all of them. With ``record`` the
        session a previous process opened is resumed. Raises :class:`EnvironmentBuildError` when the
        task's environment cannot be prepared, :class:`SandboxError` when a session is lost."""
        workdir = self.workdir(task)
        mounts = self._agent_mounts(task, workspace, skills)
        extra_mounts, run_env = self.environment_extras(task, self.config(task).env_for("agent"))
        mounts += extra_mounts
        limits = self.limits(task, lifetime_s)
        if record is not None:
            return resume_session(self.sandbox, record, mounts=mounts, workdir=workdir, env=run_env,
                                  limits=limits)  # fmt: skip
        return open_session(self.sandbox, mounts=mounts, workdir=workdir, env=run_env, limits=limits,
                            idle_s=idle_s)  # fmt: skip

    def tampered_inputs(self, task: TaskDir, workspace: Path) -> list[str]:
        """Protected inputs that are missing, not regular files, or changed."""
        tampered = []
        for item in self.config(task).metadata.protected_inputs:
            try:
                path = resolve_inside(workspace, item.path)
            except WorkspaceError:
                tampered.append(item.path)
                continue
            if sha256_regular_file(path, max_bytes=MAX_PROTECTED_INPUT_BYTES) != item.sha256:
                tampered.append(item.path)
        return tampered

    def verify(
        self, task: TaskDir, workspace: Path, *, keep_logs: Path | None = None, extra_env: Mapping[str, str] | None = None,
        tests: Path | None = None, timeout_s: float | None = None,
    ) -> VerifierOutcome:
        """Grade ``workspace`` with the task's trusted tests (``tests``: a step's, layered over the
        task's); ``keep_logs`` receives /logs/verifier; ``extra_env`` adds variables to the
        verifier's environment (the reviewer varies the hash seed)."""
        config = self.config(task)
        tests = tests or task.tests
        workdir = self.workdir(task)
        if not (tests / "test.sh").is_file():
            return VerifierOutcome.failed("tests_missing")
        try:
            spec = load_eval_spec(tests)
        except ContractError as exc:
            return VerifierOutcome.failed("verifier_eval_spec_invalid", detail=str(exc))
        try:
            extra_mounts, verifier_env = self.environment_extras(task, self.verifier_env(config, extra_env))
        except EnvironmentBuildError as exc:
            not_built = environment_failure(exc)
            return VerifierOutcome.failed("environment_error", not_built, detail=not_built.stderr)
        tampered = self.tampered_inputs(task, workspace)
        scratch_parent = owned_dir(Path(tempfile.gettempdir()), "skillgym-verify-", mode=0o711)
        scratch = Path(tempfile.mkdtemp(prefix="verify-", dir=scratch_parent))
        try:
            self.mount_scratch(scratch, self.storage_mb(task) + VERIFIER_SCRATCH_EXTRA_MB)
            trusted = scratch / "app"
            try:
                copied = self.copy_for_verifier(workspace, trusted, self.storage_mb(task), inside=workdir)
            except WorkspaceError as exc:
                return VerifierOutcome.failed(exc.reason, tampered=tampered, detail=str(exc))
            logs = scratch / "logs"
            (logs / "verifier").mkdir(parents=True)
            if (owner := self._owner()) is not None:
                for directory in (scratch, logs, logs / "verifier"):
                    os.chown(directory, *owner)
            result = self.sandbox.run(
                ["bash", "/tests/test.sh"],
                mounts=[
                    Mount(trusted, workdir, writable=True),
                    Mount(tests, "/tests"),
                    Mount(logs, "/logs", writable=True),
                    *extra_mounts,
                ],
                workdir=workdir,
                env=verifier_env,
                limits=self.limits(task, timeout_s or config.verifier.timeout_sec),
            )
            # the sandbox returns only once every process of the run is gone: nothing still writes
            reading = read_verdict(logs / "verifier")
            # judged while the trusted copy still exists; the judge only reads its files
            outcome = self.judged_outcome(task, result, reading, trusted, tampered, copied.skipped, copied.dropped,
                                          spec=spec)
            if keep_logs is not None:
                self._keep(logs / "verifier", keep_logs)
        finally:
            discard_tree(scratch)
        return outcome

    def verify_many(self, task: TaskDir, workspaces: Sequence[Path], *, timeout_s: float | None = None) -> list[VerifierOutcome]:
        """:meth:`verify` of each workspace, in order, judged in one sandbox run where the task's
        verifier is the built-in runner (see :mod:`skillgym_core.bulkverify`). For workspaces
        whose outputs are data the caller made, never for ones an agent's code ran in."""
        from skillgym_core.bulkverify import verify_batch

        return verify_batch(self, task, workspaces, timeout_s)

    def verifier_env(self, config: TaskConfig, extra_env: Mapping[str, str] | None = None) -> dict[str, str]:
        return {**config.env_for("verifier"), **VERIFIER_ENV, **(extra_env or {})}

    def mount_scratch(self, directory: Path, size_mb: int) -> None:
        self._volume(directory, size_mb)

    def copy_for_verifier(self, workspace: Path, target: Path, storage_mb: int, *, inside: str = AGENT_WORKDIR) -> CopyReport:
        """The trusted copy of a workspace the verifier judges (raises :class:`WorkspaceError`)."""
        return self._copy_report(workspace, target, max_bytes=storage_mb * 1024 * 1024, inside=inside)

    def judged_outcome(
        self, task: TaskDir, result: SandboxResult, reading: RewardReading, trusted: Path, tampered: list[str],
        skipped: list[str], dropped: list[dict[str, str]], *, spec: EvalSpec | None = None,
    ) -> VerifierOutcome:
        """A verifier run's outcome from its sandbox result and the verdict files it left;
        ``trusted`` (the copy it judged) must still exist when a rubric judges it."""
        rubric: RubricScore | None = None
        if spec is not None and reading.reward is not None and result.outcome is Outcome.OK and not tampered:
            rubric = self._score_rubric(task, spec, reading.rewards, trusted)
        return self._outcome(result, reading, rubric, tampered, skipped, dropped)

    def _outcome(
        self,
        result: SandboxResult,
        reading: RewardReading,
        rubric: RubricScore | None,
        tampered: list[str],
        skipped: list[str],
        dropped: list[dict[str, str]],
    ) -> VerifierOutcome:
        def failed(failure_type: str, detail: str = "") -> VerifierOutcome:
            outcome = VerifierOutcome.failed(
                failure_type, result, tampered=tampered, skipped_files=skipped, detail=detail
            )
            outcome.dropped_files = dropped
            return outcome

        if tampered:
            return failed("tampered_inputs")
        if result.outcome is not Outcome.OK:
            return failed(f"verifier_{result.outcome.value}", str(result.detail.get("reason", "")))
        if result.exit_code is not None and result.exit_code > SIGNAL_EXIT_BASE:
            return failed("verifier_killed", f"the verifier exited {result.exit_code} (signal "
                          f"{result.exit_code - SIGNAL_EXIT_BASE}): a verdict written then is not the checker's")
        if reading.failure is not None or reading.reward is None:
            return failed(reading.failure or "reward_file_missing", reading.detail)
        if rubric is not None:
            failure = None if rubric.passed else "judge_unavailable" if rubric.hinges_on_judge else "verifier_rejected"
            return VerifierOutcome(
                rubric.reward, {**reading.rewards, **rubric.scores(), "reward": rubric.reward}, rubric.passed,
                failure, result, skipped_files=skipped, rubric=rubric.to_dict(), dropped_files=dropped,
            )  # fmt: skip
        passed = reading.reward >= self.pass_threshold
        return VerifierOutcome(
            reading.reward, reading.rewards, passed, None if passed else "verifier_rejected", result,
            skipped_files=skipped, dropped_files=dropped,
        )  # fmt: skip

    def _score_rubric(self, task: TaskDir, spec: EvalSpec, rewards: dict[str, float], trusted: Path) -> RubricScore:
        judge = self._eval_judge() if spec.judge_items else None
        instruction = task.instruction() if (task.root / "instruction.md").is_file() else ""
        return score_rubric(spec, rewards, judge=judge, workspace=trusted, instruction=instruction)

    def _keep(self, logs: Path, destination: Path) -> None:
        try:
            safe_copy_tree(logs, destination, max_bytes=64 * 1024 * 1024, max_files=1000)
        except (WorkspaceError, FileExistsError):
            return
