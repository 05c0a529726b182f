"""mini-swe-agent with its loop outside the sandbox and every action inside it, the way
mini-swe-agent's own Docker environment works: for sandboxes whose runs happen in the task's
image (containers), where the host's Python and the agent package cannot be mounted.

The loop is the PyPI package's ``DefaultAgent`` with its model class; only the environment is
SkillGym's: each action is one ``bash -lc`` run of the task's sandbox in the task's environment
(a new shell per action, as mini-swe-agent's local environment does too). Nothing of the host's
environment reaches the prompt templates, and the endpoint's key stays in this process."""

from __future__ import annotations

import os
import shlex
from pathlib import Path
from typing import Any

from skillgym_core.sandbox.base import Outcome

from skillgym_sampler.harness.base import AgentEnv

SUBMIT_MARKER = "COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT"
# no first-run setup, no banner, and LiteLLM's bundled cost map instead of a download
PACKAGE_SETTINGS = {"MSWEA_CONFIGURED": "true", "MSWEA_SILENT_STARTUP": "1", "MSWEA_COST_TRACKING": "ignore_errors",
                    "LITELLM_LOCAL_MODEL_COST_MAP": "True"}


class SandboxEnvironment:
    """mini-swe-agent's ``Environment`` over the task's sandbox."""

    def __init__(self, env: AgentEnv, *, timeout: int, variables: dict[str, str] | None = None) -> None:
        self.env = env
        self.timeout = timeout
        self.variables = dict(variables or {})
        self.config = {"cwd": env.workdir, "timeout": timeout}

    def execute(self, action: dict[str, Any], cwd: str = "", *, timeout: int | None = None) -> dict[str, Any]:
        from minisweagent.exceptions import Submitted

        command = str(action.get("command", ""))
        if cwd and cwd != self.env.workdir:
            command = f"cd {shlex.quote(cwd)} && {command}"
        result = self.env.runner.run_agent_command(self.env.task, self.env.workspace, command, skills=self.env.skills_dir,
                                                   timeout_s=timeout or self.timeout, env=self.variables)  # fmt: skip
        output = result.stdout + result.stderr  # one stream, as the agent's own shell gives it
        if result.outcome is Outcome.OK:
            observed = {"output": output, "returncode": result.exit_code, "exception_info": ""}
        else:
            observed = {"output": output, "returncode": -1,
                        "exception_info": f"The command did not finish: {result.outcome.value}"}  # fmt: skip
        lines = output.lstrip().splitlines(keepends=True)
        if lines and lines[0].strip() == SUBMIT_MARKER and observed["returncode"] == 0:
            submission = "".join(lines[1:])
            raise Submitted({"role": "exit", "content": submission,
                             "extra": {"exit_status": "Submitted", "submission": submission}})  # fmt: skip
        return observed

    def get_template_vars(self, **kwargs: Any) -> dict[str, Any]:
        # the sandbox shares the host's kernel; its node name and environment stay out
        uname = os.uname()
        return {"cwd": self.env.workdir, "timeout": self.timeout, "system": "Linux", "release": uname.release,
                "version": uname.version, "machine": uname.machine, **kwargs}  # fmt: skip

    def serialize(self) -> dict[str, Any]:
        return {"info": {"config": {"environment": dict(self.config),
                                    "environment_type": f"{__name__}.{type(self).__name__}"}}}  # fmt: skip


def run_on_host(config: dict[str, Any], env: AgentEnv, traj_path: Path) -> None:
    """The agent's loop here, its actions in the sandbox; the trajectory is saved to ``traj_path``."""
    for name, value in PACKAGE_SETTINGS.items():  # read by the packages when first imported
        os.environ.setdefault(name, value)
    from minisweagent.agents.default import DefaultAgent
    from minisweagent.models import get_model

    model = get_model(config=config.get("model", {}))
    agent_config = {k: v for k, v in config.get("agent", {}).items() if k not in ("agent_class", "mode", "confirm_exit")}
    variables = {str(k): str(v) for k, v in (config.get("environment", {}).get("env") or {}).items()}
    sandbox = SandboxEnvironment(env, timeout=int(env.command_timeout_s), variables=variables)
    agent = DefaultAgent(model, sandbox, **{**agent_config, "output_path": traj_path})
    agent.run(env.instruction)
