"""Running a Harbor task's phases in a sandbox: the initial workspace, the reference solution,
agent commands, and the trusted verifier.

The agent only ever sees the workspace (at ``/app``) and, when given, the skills (read-only
at ``/skills``); ``tests/`` and ``solution/`` are never mounted for it. The verifier runs on
a *fresh copy* of the final workspace with its own read-only ``/tests`` and an empty
``/logs/verifier``, so reward files the agent pre-wrote are discarded. Protected inputs are
checksummed before the verifier runs; a changed one fails the run as ``tampered_inputs``.
Everything the host reads back from a sandbox-written tree is read without following links
(see :mod:`skillgym_core.sandbox.workspace`)."""

from __future__ import annotations

import hashlib
import json
import math
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from skillgym_core.contracts.task import AGENT_WORKDIR, TaskConfig, TaskDir
from skillgym_core.sandbox.base import Limits, Mount, Outcome, Sandbox, SandboxResult
from skillgym_core.sandbox.janitor import discard_tree
from skillgym_core.sandbox.workspace import (
    WorkspaceError,
    read_regular_file,
    resolve_inside,
    safe_copy_tree,
    sha256_regular_file,
)

SKILLS_MOUNT = "/skills"
MAX_REWARD_FILE_BYTES = 64 * 1024
MAX_PROTECTED_INPUT_BYTES = 1 << 30
# The verifier runs with the agent's files as its working directory: never let Python put
# that directory first on sys.path, or a planted ``pytest.py`` would grade itself.
VERIFIER_ENV = {"PYTHONSAFEPATH": "1", "PYTHONDONTWRITEBYTECODE": "1"}


@dataclass
class VerifierOutcome:
    reward: float
    rewards: dict[str, float]
    passed: bool
    failure_type: str | None
    result: SandboxResult | None
    tampered: list[str] = field(default_factory=list)
    skipped_files: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, object]:
        return {
            "reward": self.reward,
            "rewards": self.rewards,
            "passed": self.passed,
            "failure_type": self.failure_type,
            "tampered": self.tampered,
            "skipped_files": self.skipped_files,
            "outcome": self.result.outcome.value if self.result else None,
            "exit_code": self.result.exit_code if self.result else None,
            "duration_s": self.result.duration_s if self.result else None,
            "stdout": self.result.stdout[-4000:] if self.result else "",
            "stderr": self.result.stderr[-4000:] if self.result else "",
        }

    @classmethod
    def failed(cls, failure_type: str, result: SandboxResult | None = None, **extra: list[str]) -> VerifierOutcome:
        return cls(0.0, {"reward": 0.0}, False, failure_type, result, **extra)


def sha256_file(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _finite_number(value: object) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)


def read_reward(logs_verifier: Path) -> tuple[float, dict[str, float]] | None:
    """Harbor's rule: ``reward.json`` first (a dict of numbers), else ``reward.txt``.

    Only regular files (not links) of bounded size count, and only finite numbers."""
    raw_json = read_regular_file(logs_verifier / "reward.json", max_bytes=MAX_REWARD_FILE_BYTES)
    if raw_json is not None:
        try:
            data = json.loads(raw_json.decode() or "null")
        except (ValueError, UnicodeDecodeError):
            return None
        if isinstance(data, dict) and data and all(_finite_number(v) for v in data.values()):
            rewards = {str(k): float(v) for k, v in data.items()}
            return rewards.get("reward", sum(rewards.values()) / len(rewards)), rewards
        return None
    raw_txt = read_regular_file(logs_verifier / "reward.txt", max_bytes=MAX_REWARD_FILE_BYTES)
    if raw_txt is None:
        return None
    try:
        value = float(raw_txt.decode().strip())
    except (ValueError, UnicodeDecodeError):
        return None
    return (value, {"reward": value}) if math.isfinite(value) else None


class TaskRunner:
    def __init__(
        self,
        sandbox: Sandbox,
        *,
        pass_threshold: float = 1.0,
        max_workspace_bytes: int = 512 * 1024 * 1024,
        max_workspace_files: int = 50_000,
    ) -> None:
        self.sandbox = sandbox
        self.pass_threshold = pass_threshold
        self.max_workspace_bytes = max_workspace_bytes
        self.max_workspace_files = max_workspace_files
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

    def _copy(self, src: Path, dst: Path) -> list[str]:
        report = safe_copy_tree(src, dst, max_bytes=self.max_workspace_bytes, max_files=self.max_workspace_files)
        return report.skipped

    def fresh_workspace(self, task: TaskDir, parent: Path) -> Path:
        workspace = Path(tempfile.mkdtemp(prefix="ws-", dir=parent))
        if task.workspace.is_dir():
            self._copy(task.workspace, workspace)
        return workspace

    def _limits(self, task: TaskDir, timeout_s: float) -> Limits:
        env = self.config(task).environment
        return Limits(wall_s=timeout_s, memory_mb=env.memory_mb or 2048, cpus=float(env.cpus) if env.cpus else None)

    def run_solution(self, task: TaskDir, workspace: Path) -> SandboxResult:
        timeout = self.config(task).agent.timeout_sec
        return self.sandbox.run(
            ["bash", "/solution/solve.sh"],
            mounts=[
                Mount(workspace, AGENT_WORKDIR, writable=True),
                Mount(task.solution, "/solution"),
                # the oracle sees the skill where the agent does (the image copies it to skills_dir)
                *([Mount(task.skills, SKILLS_MOUNT)] if task.skills.is_dir() else []),
            ],
            workdir=AGENT_WORKDIR,
            limits=self._limits(task, timeout),
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
        mounts = [Mount(workspace, AGENT_WORKDIR, writable=True)]
        if skills is not None and skills.is_dir():
            mounts.append(Mount(skills, SKILLS_MOUNT))
        return self.sandbox.run(
            ["bash", "-lc", command],
            mounts=mounts,
            workdir=AGENT_WORKDIR,
            env=env,
            limits=self._limits(task, timeout_s),
        )

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

    def verify(self, task: TaskDir, workspace: Path, *, keep_logs: Path | None = None) -> VerifierOutcome:
        """Grade ``workspace`` with the task's trusted tests; ``keep_logs`` receives /logs/verifier."""
        config = self.config(task)
        if not (task.tests / "test.sh").is_file():
            return VerifierOutcome.failed("tests_missing")
        tampered = self.tampered_inputs(task, workspace)
        scratch = Path(tempfile.mkdtemp(prefix="verify-"))
        try:
            trusted = scratch / "app"
            try:
                skipped = self._copy(workspace, trusted)
            except WorkspaceError as exc:
                return VerifierOutcome.failed(exc.reason, tampered=tampered)
            logs = scratch / "logs"
            (logs / "verifier").mkdir(parents=True)
            result = self.sandbox.run(
                ["bash", "/tests/test.sh"],
                mounts=[
                    Mount(trusted, AGENT_WORKDIR, writable=True),
                    Mount(task.tests, "/tests"),
                    Mount(logs, "/logs", writable=True),
                ],
                workdir=AGENT_WORKDIR,
                env=VERIFIER_ENV,
                limits=self._limits(task, config.verifier.timeout_sec),
            )
            parsed = read_reward(logs / "verifier")
            if keep_logs is not None:
                self._keep(logs / "verifier", keep_logs)
        finally:
            discard_tree(scratch)
        if tampered:
            return VerifierOutcome.failed("tampered_inputs", result, tampered=tampered, skipped_files=skipped)
        if result.outcome is not Outcome.OK:
            return VerifierOutcome.failed(f"verifier_{result.outcome.value}", result, skipped_files=skipped)
        if parsed is None:
            return VerifierOutcome.failed("reward_file_missing", result, skipped_files=skipped)
        reward, rewards = parsed
        passed = reward >= self.pass_threshold
        return VerifierOutcome(
            reward, rewards, passed, None if passed else "verifier_rejected", result, skipped_files=skipped
        )

    def _keep(self, logs: Path, destination: Path) -> None:
        try:
            safe_copy_tree(logs, destination, max_bytes=64 * 1024 * 1024, max_files=1000)
        except (WorkspaceError, FileExistsError):
            return
