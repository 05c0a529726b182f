"""mini-swe-agent, the real PyPI harness, run inside the task sandbox.

The agent process itself runs in the sandbox (its bash actions therefore run there too, in the
task's workdir); it reaches the model endpoint only through :class:`EndpointRelay`. On a sandbox
whose runs happen in the task's own image (containers), where the host's Python cannot be
mounted, the loop runs here and each action in the sandbox instead (see :mod:`.miniswe_host`).
Either way its ``*.traj.json`` is converted to ATIF afterwards."""

from __future__ import annotations

import json
import shlex
import sys
import tempfile
from pathlib import Path
from typing import Any

import yaml
from skillgym_core.llm import LLMSettings
from skillgym_core.sandbox.base import Limits, Mount, SandboxResult
from skillgym_core.sandbox.janitor import remove_tree
from skillgym_core.taskrun import SKILLS_MOUNT

from skillgym_sampler.convert.miniswe import miniswe_to_atif
from skillgym_sampler.errors import ConversionError, HarnessError
from skillgym_sampler.harness.base import AgentEnv, AgentRun, RunSpec
from skillgym_sampler.harness.miniswe_host import run_on_host
from skillgym_sampler.harness.relay import INSIDE_FORWARDER, SOCKET_NAME, EndpointRelay, start_forwarder_shell

AGENT_DIR = "/agent"
RELAY_DIR = "/llm"
SKILLS_NOTE = """

Skills are installed under {root}: each folder holds a SKILL.md with a procedure plus scripts and
references. Read the SKILL.md of a relevant skill before you start. Available skills: {names}."""


def _venv_root() -> Path:
    return Path(sys.prefix)


def miniswe_version() -> str:
    from importlib.metadata import version

    return version("mini-swe-agent")


class MiniSweAgentHarness:
    name = "mini-swe-agent"

    def __init__(self, llm: LLMSettings, *, step_limit: int = 40, max_seconds: float = 900.0,
                 memory_mb: int = 4096) -> None:
        self.llm = llm
        self.step_limit = step_limit
        self.max_seconds = max_seconds
        self.memory_mb = memory_mb
        self.version = miniswe_version()

    def _config(self, env: AgentEnv) -> dict[str, Any]:
        from minisweagent.config import builtin_config_dir

        config: dict[str, Any] = yaml.safe_load((Path(builtin_config_dir) / "mini.yaml").read_text())
        agent = config.setdefault("agent", {})
        if env.skills_dir is not None:
            names = ", ".join(sorted(p.name for p in env.skills_dir.iterdir() if p.is_dir())) or "none"
            agent["system_template"] = agent.get("system_template", "") + SKILLS_NOTE.format(
                root=SKILLS_MOUNT, names=names
            )
        agent.update(step_limit=self.step_limit, wall_time_limit_seconds=int(self.max_seconds), cost_limit=0)
        config.setdefault("environment", {}).update(cwd=env.workdir, timeout=int(env.command_timeout_s))
        model = config.setdefault("model", {})
        model["model_name"] = f"openai/{self.llm.model}"
        model["cost_tracking"] = "ignore_errors"
        kwargs = model.setdefault("model_kwargs", {})
        kwargs["temperature"] = self.llm.temperature
        if self.llm.max_tokens:
            kwargs["max_tokens"] = self.llm.max_tokens
        return config

    def run(self, env: AgentEnv, spec: RunSpec) -> AgentRun:
        if not getattr(env.runner.sandbox, "mounts_host_tools", True):
            return self._run_on_host(env, spec)
        agent_dir = Path(tempfile.mkdtemp(prefix="mswea-", dir=env.workspace.parent))
        relay_dir = Path(tempfile.mkdtemp(prefix="sg-"))  # short path: unix socket names are limited
        try:
            with EndpointRelay(self.llm.base_url, relay_dir) as relay:
                config = self._config(env)
                config["model"]["model_kwargs"]["api_base"] = relay.inside_base_url
                (agent_dir / "config.yaml").write_text(yaml.safe_dump(config, sort_keys=False))
                (agent_dir / "forwarder.py").write_text(INSIDE_FORWARDER)
                result = self._launch(env, agent_dir, relay_dir)
            traj_path = agent_dir / "run.traj.json"
            if not traj_path.is_file():
                raise HarnessError(
                    "mini-swe-agent wrote no trajectory",
                    reason="no_trajectory",
                    outcome=result.outcome.value,
                    exit_code=result.exit_code,
                    output=(result.stdout[-1500:] + result.stderr[-1500:]),
                )
            raw = json.loads(traj_path.read_text())
        finally:
            # written by the run: may be deeper than shutil.rmtree can recurse, or unreadable
            remove_tree(relay_dir)
            remove_tree(agent_dir)
        return self._converted(raw, spec, f"sandbox_{result.outcome.value}", result.stdout[-4000:] + result.stderr[-4000:])

    def _converted(self, raw: dict[str, Any], spec: RunSpec, otherwise: str, logs: str) -> AgentRun:
        try:
            trajectory = miniswe_to_atif(raw, session_id=spec.trajectory_id, trajectory_id=spec.trajectory_id)
        except ConversionError as exc:
            raise HarnessError(f"mini-swe-agent trajectory is unusable: {exc}", reason="conversion") from exc
        exit_status = str(raw.get("info", {}).get("exit_status") or "")
        outcome = {"Submitted": "ok", "LimitsExceeded": "step_limit", "TimeExceeded": "time_limit"}.get(
            exit_status, exit_status or otherwise
        )
        return AgentRun(trajectory, outcome=outcome, logs=logs)

    def _run_on_host(self, env: AgentEnv, spec: RunSpec) -> AgentRun:
        config = self._config(env)
        config["model"]["model_kwargs"].update(api_base=self.llm.base_url,
                                                api_key=self.llm.api_key.get_secret_value() or "unused")  # fmt: skip
        with tempfile.TemporaryDirectory(prefix="mswea-") as scratch:
            traj_path = Path(scratch) / "run.traj.json"
            error = ""
            try:
                run_on_host(config, env, traj_path)
            except Exception as exc:  # the package's own failures end the run; its saved trajectory still counts
                error = f"{type(exc).__name__}: {exc}"
            if not traj_path.is_file():
                raise HarnessError("mini-swe-agent wrote no trajectory", reason="no_trajectory", output=error[-1500:])
            raw = json.loads(traj_path.read_text())
        return self._converted(raw, spec, "agent_error" if error else "unfinished", error[-4000:])

    def _launch(self, env: AgentEnv, agent_dir: Path, relay_dir: Path) -> SandboxResult:
        venv = _venv_root()
        python = str(venv / "bin" / "python")
        mounts = [
            Mount(env.workspace, env.workdir, writable=True),
            Mount(agent_dir, AGENT_DIR, writable=True),
            Mount(relay_dir, RELAY_DIR, writable=True),
            Mount(venv, str(venv)),
        ]
        if env.skills_dir is not None:
            mounts.append(Mount(env.skills_dir, SKILLS_MOUNT))
        task_arg = shlex.quote(env.instruction)
        script = start_forwarder_shell(python, f"{AGENT_DIR}/forwarder.py", f"{RELAY_DIR}/{SOCKET_NAME}") + (
            f"{python} -m minisweagent.run.mini -y --exit-immediately -c {AGENT_DIR}/config.yaml "
            f"-o {AGENT_DIR}/run.traj.json -t {task_arg}\n"
        )
        environment = {
            "MSWEA_CONFIGURED": "true",
            "MSWEA_SILENT_STARTUP": "1",
            "MSWEA_COST_TRACKING": "ignore_errors",
            "MSWEA_GLOBAL_CONFIG_DIR": f"{AGENT_DIR}/config",
            "LITELLM_LOCAL_MODEL_COST_MAP": "True",
            "OPENAI_API_KEY": self.llm.api_key.get_secret_value() or "unused",
            "TERM": "dumb",
            "COLUMNS": "200",
        }
        return env.runner.sandbox.run(
            ["bash", "-c", script],
            mounts=mounts,
            workdir=env.workdir,
            env=environment,
            limits=Limits(wall_s=self.max_seconds + 60, memory_mb=self.memory_mb, pids=512,
                          output_bytes=4_000_000),
        )
