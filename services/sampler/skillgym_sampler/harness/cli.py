"""Claude Code and Codex CLIs, run as commands inside the task sandbox when they are installed.

Each gets its own writable home under ``/agent``, the skills copied to its own skill location
(Claude Code: ``$CLAUDE_CONFIG_DIR/skills``; Codex: ``$HOME/.agents/skills``) or none, and the
model endpoint through :class:`EndpointRelay`. The CLI runs in the task's environment: on the
local sandbox the host's installed CLI is used; where runs happen in the task's image
(containers), the image must ship the CLI, as Harbor's agent setup installs it there, and a
task image without it ends the run with a typed ``not_installed``. Claude Code speaks the Anthropic Messages API and
Codex the OpenAI Responses API, so the configured endpoint must serve that protocol. After the run
their session files (not the streams: those lack raw call ids) are converted to ATIF."""

from __future__ import annotations

import shlex
import shutil
import tempfile
from abc import ABC, abstractmethod
from pathlib import Path

from skillgym_core.contracts.atif import Trajectory
from skillgym_core.envbuild import EnvironmentBuildError
from skillgym_core.llm import LLMSettings
from skillgym_core.sandbox.base import Limits, Mount
from skillgym_core.sandbox.janitor import remove_tree

from skillgym_sampler.convert.claude import claude_session_to_atif, read_jsonl
from skillgym_sampler.convert.codex import codex_rollout_to_atif
from skillgym_sampler.errors import ConversionError, HarnessError
from skillgym_sampler.harness.base import AgentEnv, AgentRun, RunSpec
from skillgym_sampler.harness.relay import INSIDE_FORWARDER, SOCKET_NAME, EndpointRelay, start_forwarder_shell

AGENT_DIR = "/agent"
RELAY_DIR = "/llm"
NOT_INSTALLED_EXIT = 127
NOT_INSTALLED_MARK = "skillgym-cli-not-installed"


class _CliHarness(ABC):
    name = "cli"
    version = "unknown"
    skills_subdir = "skills"

    def __init__(self, llm: LLMSettings, *, command: str, max_seconds: float = 900.0, memory_mb: int = 4096) -> None:
        self.llm = llm
        self.command = command
        self.max_seconds = max_seconds
        self.memory_mb = memory_mb

    def executable(self, env: AgentEnv | None = None) -> str:
        """The CLI to run: the host's, or the image's own where runs happen in the task's image."""
        if env is not None and not getattr(env.runner.sandbox, "mounts_host_tools", True):
            return self.command
        found = shutil.which(self.command)
        if found is None:
            raise HarnessError(f"{self.name}: command {self.command!r} is not installed", reason="not_installed",
                               harness=self.name)
        return found

    # -- per CLI ---------------------------------------------------------------------------------
    @abstractmethod
    def command_line(self, executable: str, instruction: str) -> str: ...

    @abstractmethod
    def environment(self, base_url: str) -> dict[str, str]: ...

    @abstractmethod
    def convert(self, agent_dir: Path, spec: RunSpec) -> Trajectory: ...

    # -- shared ----------------------------------------------------------------------------------
    def run(self, env: AgentEnv, spec: RunSpec) -> AgentRun:
        executable = self.executable(env)
        agent_dir = Path(tempfile.mkdtemp(prefix=f"{self.name}-", dir=env.workspace.parent))
        relay_dir = Path(tempfile.mkdtemp(prefix="sg-"))
        written: Path | None = None
        try:
            if env.skills_dir is not None:
                shutil.copytree(env.skills_dir, agent_dir / self.skills_subdir, symlinks=False)
            (agent_dir / "forwarder.py").write_text(INSIDE_FORWARDER)
            # the CLI runs as the sandbox's uid: its home, its skills and the relay's socket are its own
            env.runner.hand_over(agent_dir)
            with EndpointRelay(self.llm.base_url, relay_dir) as relay:
                env.runner.hand_over(relay_dir)
                try:
                    extra_mounts, run_env = env.runner.environment_extras(
                        env.task, {**env.runner.config(env.task).env_for("agent"), **self.environment(relay.inside_base_url)})
                except EnvironmentBuildError as exc:
                    raise HarnessError(f"{self.name}: the task's environment did not build: {exc}",
                                       reason="environment_error") from exc  # fmt: skip
                script = (f"command -v {shlex.quote(executable)} >/dev/null || "
                          f"{{ echo {NOT_INSTALLED_MARK} >&2; exit {NOT_INSTALLED_EXIT}; }}\n")
                script += start_forwarder_shell("python3", f"{AGENT_DIR}/forwarder.py", f"{RELAY_DIR}/{SOCKET_NAME}")
                script += self.command_line(executable, env.instruction) + "\n"
                result = env.runner.sandbox.run(
                    ["bash", "-c", script],
                    mounts=[Mount(env.workspace, env.workdir, writable=True),
                            Mount(agent_dir, AGENT_DIR, writable=True),
                            Mount(relay_dir, RELAY_DIR, writable=True), *extra_mounts],
                    workdir=env.workdir,
                    env=run_env,
                    limits=Limits(wall_s=self.max_seconds, memory_mb=self.memory_mb, pids=512,
                                  output_bytes=8_000_000),
                )
            if result.exit_code == NOT_INSTALLED_EXIT and NOT_INSTALLED_MARK in result.stderr:
                raise HarnessError(f"{self.name}: command {executable!r} is not installed where the task runs",
                                   reason="not_installed", harness=self.name)  # fmt: skip
            # the CLI's files are the agent's: read as data (no link leads out), never in place
            written = Path(tempfile.mkdtemp(prefix=f"{self.name}-out-", dir=env.workspace.parent))
            env.runner.copy_out(agent_dir, written / "agent", inside=AGENT_DIR)
            try:
                trajectory = self.convert(written / "agent", spec)
            except ConversionError as exc:
                raise HarnessError(f"{self.name}: no usable session log: {exc}", reason="no_trajectory",
                                   exit_code=result.exit_code, output=result.stderr[-2000:]) from exc
        finally:
            # written by the run: may be deeper than shutil.rmtree can recurse, or unreadable
            remove_tree(relay_dir)
            remove_tree(agent_dir)
            if written is not None:
                remove_tree(written)
        outcome = "ok" if result.ok else f"exit_{result.exit_code}" if result.exit_code else result.outcome.value
        return AgentRun(trajectory, outcome=outcome, logs=result.stderr[-4000:])


def _newest(paths: list[Path]) -> Path:
    if not paths:
        raise ConversionError("no session file was written")
    return max(paths, key=lambda p: p.stat().st_mtime)


class ClaudeCodeHarness(_CliHarness):
    name = "claude-code"
    skills_subdir = "claude/skills"

    def command_line(self, executable: str, instruction: str) -> str:
        return (f"{shlex.quote(executable)} --verbose --output-format=stream-json --permission-mode=bypassPermissions "
                f"--model {shlex.quote(self.llm.model)} --print -- {shlex.quote(instruction)} "
                f"> {AGENT_DIR}/stream.jsonl")

    def environment(self, base_url: str) -> dict[str, str]:
        return {
            "IS_SANDBOX": "1",
            "HOME": f"{AGENT_DIR}/home",
            "CLAUDE_CONFIG_DIR": f"{AGENT_DIR}/claude",
            "ANTHROPIC_BASE_URL": base_url.removesuffix("/v1"),
            "ANTHROPIC_API_KEY": self.llm.api_key.get_secret_value() or "unused",
            "DISABLE_AUTOUPDATER": "1",
            "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
        }

    def convert(self, agent_dir: Path, spec: RunSpec) -> Trajectory:
        session = _newest(list((agent_dir / "claude" / "projects").glob("*/*.jsonl")))
        stream = agent_dir / "stream.jsonl"
        cost = None
        if stream.is_file():
            for record in read_jsonl(stream.read_text(errors="replace").splitlines()):
                if record.get("type") == "result" and isinstance(record.get("total_cost_usd"), int | float):
                    cost = float(record["total_cost_usd"])
        return claude_session_to_atif(read_jsonl(session.read_text().splitlines()),
                                      trajectory_id=spec.trajectory_id, total_cost_usd=cost)


class CodexHarness(_CliHarness):
    name = "codex"
    skills_subdir = "home/.agents/skills"

    def command_line(self, executable: str, instruction: str) -> str:
        return (f"{shlex.quote(executable)} exec --dangerously-bypass-approvals-and-sandbox --skip-git-repo-check "
                f"--model {shlex.quote(self.llm.model)} --json --enable unified_exec -- {shlex.quote(instruction)} "
                f"> {AGENT_DIR}/events.jsonl")

    def environment(self, base_url: str) -> dict[str, str]:
        return {
            "HOME": f"{AGENT_DIR}/home",
            "CODEX_HOME": f"{AGENT_DIR}/codex",
            "OPENAI_BASE_URL": base_url,
            "OPENAI_API_KEY": self.llm.api_key.get_secret_value() or "unused",
        }

    def convert(self, agent_dir: Path, spec: RunSpec) -> Trajectory:
        rollout = _newest(list((agent_dir / "codex" / "sessions").rglob("rollout-*.jsonl")))
        return codex_rollout_to_atif(read_jsonl(rollout.read_text().splitlines()), trajectory_id=spec.trajectory_id)
