"""Wrong trajectories that need a run: the reference solution with one step skipped, the
reference outputs left stale on changed inputs, and (see :mod:`.llm`) scripts written to look
right but miss a criterion. Scripts run like the reference solution: the task's environment,
the workspace at the agent's workdir, the solution folder (a copy holding the script) read-only."""

from __future__ import annotations

import re
import shlex
import tempfile
from dataclasses import dataclass
from pathlib import Path

from skillgym_core.contracts.task import AGENT_WORKDIR, TaskDir
from skillgym_core.envbuild import EnvironmentBuildError
from skillgym_core.sandbox.base import Limits, Mount, Outcome, SandboxResult
from skillgym_core.sandbox.janitor import remove_tree
from skillgym_core.sandbox.workspace import safe_copy_tree
from skillgym_core.taskrun import SKILLS_MOUNT, TaskRunner, environment_failure

SOLUTION_MAX_BYTES, SOLUTION_MAX_FILES = 64 * 1024 * 1024, 2000
# lines of solve.sh that set the stage rather than do a step: skipping them only breaks the run
SETUP = re.compile(r"^(set|cd|export|source|\.|trap|shopt|umask|ulimit|[A-Za-z_][A-Za-z0-9_]*=\S*$)(\s|$)")
# shell that spans lines or branches: dropping one line of it would not be "one step skipped"
COMPOUND = re.compile(r"(\\$|<<|^(if|then|else|elif|fi|for|while|until|do|done|case|esac|function|select)\b|[{(]\s*$|^[})])")


@dataclass(frozen=True)
class Step:
    line: int  # 0-based index into the script's lines
    command: str


def solution_steps(script: str) -> list[Step] | None:
    """The top-level commands of ``solve.sh`` that are steps, or None when the script's shape
    (multi-line constructs, here-documents, functions) makes skipping one line unsafe."""
    steps = []
    for index, raw in enumerate(script.splitlines()):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        try:
            shlex.split(line, comments=True)
        except ValueError:  # a quote left open: the command goes on over the next lines
            return None
        if COMPOUND.search(line):
            return None
        if not SETUP.match(line):
            steps.append(Step(index, line))
    return steps


def without_step(script: str, step: Step) -> str:
    lines = script.splitlines(keepends=True)
    lines[step.line] = f": skipped step {step.line + 1}\n"
    return "".join(lines)


def step_label(step: Step) -> str:
    words = step.command.split()
    shown = " ".join(words[:3]) + (" ..." if len(words) > 3 else "")
    return f"line {step.line + 1} ({shown})"


def stopped(result: SandboxResult) -> str:
    return f"exit {result.exit_code}" if result.outcome is Outcome.OK else result.outcome.value


class ScriptRunner:
    """Runs a bash script as the task's reference solution would run, from a private copy of
    the solution folder."""

    def __init__(self, runner: TaskRunner, task: TaskDir, workdir: Path, timeout_s: float) -> None:
        self.runner, self.task, self.workdir, self.timeout_s = runner, task, workdir, timeout_s

    def run(self, script: str, workspace: Path, name: str = "solve.sh") -> SandboxResult:
        solution = Path(tempfile.mkdtemp(prefix="solution-", dir=self.workdir))
        try:
            if self.task.solution.is_dir():
                solution.rmdir()
                safe_copy_tree(self.task.solution, solution, max_bytes=SOLUTION_MAX_BYTES, max_files=SOLUTION_MAX_FILES)
            (solution / name).write_text(script, encoding="utf-8")
            mounts = [Mount(workspace, AGENT_WORKDIR, writable=True), Mount(solution, "/solution")]
            if self.task.skills.is_dir():
                mounts.append(Mount(self.task.skills, SKILLS_MOUNT))
            try:
                extra_mounts, env = self.runner.environment_extras(self.task)
            except EnvironmentBuildError as exc:
                return environment_failure(exc)
            config = self.runner.config(self.task)
            limits = Limits(
                wall_s=self.timeout_s, memory_mb=config.environment.memory_mb or 2048,
                storage_mb=self.runner.storage_mb(self.task),
            )  # fmt: skip
            return self.runner.sandbox.run(
                ["bash", f"/solution/{name}"], mounts=[*mounts, *extra_mounts], workdir=AGENT_WORKDIR, env=env,
                limits=limits,
            )  # fmt: skip
        finally:
            remove_tree(solution)
