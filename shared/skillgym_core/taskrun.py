"""Running a Harbor task's phases in a sandbox: the initial workspace, the reference solution,
agent commands, and the trusted verifier.

The verifier always runs on a *fresh copy* of the final workspace with its own trusted
``/tests`` and an empty ``/logs/verifier``: anything the agent wrote there is discarded, and
protected inputs are checksummed so tampering fails the run with that reason."""

from __future__ import annotations

import hashlib
import json
import shutil
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from skillgym_core.contracts.task import AGENT_WORKDIR, TaskDir
from skillgym_core.sandbox.base import Limits, Mount, Outcome, Sandbox, SandboxResult

SKILLS_MOUNT = "/skills"


@dataclass
class VerifierOutcome:
    reward: float
    rewards: dict[str, float]
    passed: bool
    failure_type: str | None
    result: SandboxResult | None
    tampered: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, object]:
        return {
            "reward": self.reward,
            "rewards": self.rewards,
            "passed": self.passed,
            "failure_type": self.failure_type,
            "tampered": self.tampered,
            "outcome": self.result.outcome.value if self.result else None,
            "exit_code": self.result.exit_code if self.result else None,
            "stdout": self.result.stdout[-4000:] if self.result else "",
            "stderr": self.result.stderr[-4000:] if self.result else "",
        }


def sha256_file(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def read_reward(logs_verifier: Path) -> tuple[float, dict[str, float]] | None:
    """Harbor's rule: ``reward.json`` first (a dict of numbers), else ``reward.txt``."""
    json_path, txt_path = logs_verifier / "reward.json", logs_verifier / "reward.txt"
    if json_path.is_file():
        data = json.loads(json_path.read_text() or "null")
        if isinstance(data, dict) and data and all(isinstance(v, int | float) for v in data.values()):
            rewards = {str(k): float(v) for k, v in data.items()}
            return rewards.get("reward", sum(rewards.values()) / len(rewards)), rewards
        return None
    if txt_path.is_file():
        text = txt_path.read_text().strip()
        try:
            value = float(text)
        except ValueError:
            return None
        return value, {"reward": value}
    return None


class TaskRunner:
    def __init__(self, sandbox: Sandbox, *, pass_threshold: float = 1.0) -> None:
        self.sandbox = sandbox
        self.pass_threshold = pass_threshold

    def fresh_workspace(self, task: TaskDir, parent: Path) -> Path:
        workspace = Path(tempfile.mkdtemp(prefix="ws-", dir=parent))
        if task.workspace.is_dir():
            shutil.copytree(task.workspace, workspace, dirs_exist_ok=True, symlinks=False)
        return workspace

    def _limits(self, task: TaskDir, timeout_s: float) -> Limits:
        env = task.config().environment
        return Limits(wall_s=timeout_s, memory_mb=env.memory_mb or 2048)

    def run_solution(self, task: TaskDir, workspace: Path) -> SandboxResult:
        timeout = task.config().agent.timeout_sec
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
        self, task: TaskDir, workspace: Path, command: str, *, skills: Path | None = None, timeout_s: float = 120
    ) -> SandboxResult:
        mounts = [Mount(workspace, AGENT_WORKDIR, writable=True)]
        if skills is not None and skills.is_dir():
            mounts.append(Mount(skills, SKILLS_MOUNT))
        return self.sandbox.run(
            ["bash", "-lc", command], mounts=mounts, workdir=AGENT_WORKDIR, limits=self._limits(task, timeout_s)
        )

    def verify(self, task: TaskDir, workspace: Path) -> VerifierOutcome:
        config = task.config()
        tampered = [
            item.path
            for item in config.metadata.protected_inputs
            if not (workspace / item.path).is_file() or sha256_file(workspace / item.path) != item.sha256
        ]
        with tempfile.TemporaryDirectory(prefix="verify-") as scratch:
            trusted = Path(scratch) / "app"
            shutil.copytree(workspace, trusted, symlinks=False, ignore_dangling_symlinks=True)
            logs = Path(scratch) / "logs"
            (logs / "verifier").mkdir(parents=True)
            result = self.sandbox.run(
                ["bash", "/tests/test.sh"],
                mounts=[
                    Mount(trusted, AGENT_WORKDIR, writable=True),
                    Mount(task.tests, "/tests"),
                    Mount(logs, "/logs", writable=True),
                ],
                workdir=AGENT_WORKDIR,
                limits=self._limits(task, config.verifier.timeout_sec),
            )
            parsed = read_reward(logs / "verifier")
        if tampered:
            return VerifierOutcome(0.0, {"reward": 0.0}, False, "tampered_inputs", result, tampered)
        if result.outcome is not Outcome.OK:
            return VerifierOutcome(0.0, {"reward": 0.0}, False, f"verifier_{result.outcome.value}", result)
        if parsed is None:
            return VerifierOutcome(0.0, {"reward": 0.0}, False, "reward_file_missing", result)
        reward, rewards = parsed
        passed = reward >= self.pass_threshold
        return VerifierOutcome(reward, rewards, passed, None if passed else "verifier_rejected", result)
