"""Agent harnesses on the container sandbox, on Harbor tasks as Harbor users have them: the
built-in agent's and mini-swe-agent's commands run in containers of the task's image (in the
task's own working directory), the trusted verifier scores the run in a fresh one, a CLI harness
runs the CLI the task image ships (a stand-in speaking Claude Code's session format: the vendor's
CLI and service cannot exist here), and one whose CLI the image lacks ends with a typed error."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from skillgym_core.context import ServiceContext
from skillgym_core.contracts.events import Envelope, EnvValidated, TrajectoryVerified
from skillgym_core.contracts.task import TaskDir
from skillgym_core.sandbox.container.backend import ContainerSandbox
from skillgym_core.store.local import LocalStore
from skillgym_sampler import SamplerService, SamplerSettings

from tests.support.harbor_tasks import hello_world, log_count
from tests.support.podman import PodmanService
from tests.support.scripted_llm import Rules, ScriptedLLMServer, assistant, bash

pytestmark = [pytest.mark.integration, pytest.mark.slow, pytest.mark.deferred_service]


def _turn(body: dict[str, Any]) -> dict[str, Any]:
    done = sum(1 for m in body["messages"] if m.get("role") == "assistant")
    if done == 0:
        return bash('echo "Hello, world!" > hello.txt && id -u && cat /etc/os-release | head -1')
    return assistant("Wrote hello.txt.")


@pytest.fixture
def ctx(podman: PodmanService, tmp_path: Path) -> Iterator[ServiceContext]:
    sandbox = ContainerSandbox(engine_url=podman.url)
    yield ServiceContext(store=LocalStore(tmp_path / "store"), sandbox=sandbox, scratch=tmp_path / "scratch")
    sandbox.client.close()


SUBMIT = "echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT"


def _publish(ctx: ServiceContext, root: Path) -> Envelope:
    task = TaskDir(root)
    task_id = task.config().metadata.task_id
    return Envelope.wrap(EnvValidated(task_id=task_id, skill_id="none", package_key=ctx.save_task(task_id, task),
                                      valid=True, label="verifier-passed"), producer="test", correlation_id="c")


def _mini_turn(body: dict[str, Any]) -> dict[str, Any]:
    done = sum(1 for m in body["messages"] if m.get("role") == "assistant")
    if done == 0:
        return bash("grep -c '^ERROR' events.log > errors.txt && pwd && id -u && head -1 /etc/os-release && env")
    return assistant("Submitting.", [bash(SUBMIT)["tool_calls"][0]])


def test_mini_swe_agent_acts_in_the_task_image_from_outside(ctx: ServiceContext, podman: PodmanService,
                                                            tmp_path: Path) -> None:
    root = log_count(tmp_path / "log-count")
    with ScriptedLLMServer(Rules([], default=_mini_turn)) as server:
        settings = SamplerSettings(llm_base_url=server.base_url, llm_model="scripted-teacher", sandbox="container",
                                   container_engine_url=podman.url, env_cache=tmp_path / "cache",
                                   harnesses=["mini-swe-agent", "claude-code"], skill_conditions=["without"],
                                   max_seconds=120)
        outputs = [o for o in SamplerService(ctx, settings).handle(_publish(ctx, root))
                   if isinstance(o, TrajectoryVerified)]
    runs = {o.harness: o for o in outputs}
    assert runs["mini-swe-agent"].passed, runs["mini-swe-agent"]
    trajectory = ctx.store.get_bytes(runs["mini-swe-agent"].atif_key).decode()
    assert "/workspace" in trajectory and "2000000" in trajectory and "Debian" in trajectory
    # no host environment in the image: the sandbox's own runner variable is all of SkillGym there
    assert "OPENAI_API_KEY" not in trajectory and set(re.findall(r"SKILLGYM_\w+", trajectory)) == {
        "SKILLGYM_RUN_UNTRUSTED"}
    assert not runs["claude-code"].passed
    record = ctx.store.get_bytes(runs["claude-code"].verification_key).decode()
    assert "not_installed" in record


def test_the_builtin_agent_runs_in_containers(ctx: ServiceContext, podman: PodmanService,
                                                       tmp_path: Path) -> None:
    event = _publish(ctx, hello_world(tmp_path / "hello-world"))
    with ScriptedLLMServer(Rules([], default=_turn)) as server:
        settings = SamplerSettings(llm_base_url=server.base_url, llm_model="scripted-teacher", sandbox="container",
                                   container_engine_url=podman.url, env_cache=tmp_path / "cache",
                                   harnesses=["builtin"], skill_conditions=["without"],
                                   max_seconds=120)
        outputs = [o for o in SamplerService(ctx, settings).handle(event) if isinstance(o, TrajectoryVerified)]
    runs = {o.harness: o for o in outputs}
    assert set(runs) == {"builtin"} and runs["builtin"].passed and runs["builtin"].model == "scripted-teacher"
    trajectory = ctx.store.get_bytes(runs["builtin"].atif_key).decode()
    assert "2000000" in trajectory and "Debian" in trajectory  # the sandbox uid, in the task's (stand-in) image


# Acts as Claude Code does for this task: asks the model through the endpoint it is given, runs a
# command in its working directory and leaves its session log where Claude Code keeps it.
STAND_IN_CLAUDE = r"""#!/usr/bin/env python3
import json, os, subprocess, sys, time, urllib.request, uuid
instruction = sys.argv[sys.argv.index("--") + 1]
body = json.dumps({"model": sys.argv[sys.argv.index("--model") + 1],
                   "messages": [{"role": "user", "content": instruction}]}).encode()
for attempt in range(50):  # the relay's forwarder starts beside this process
    try:
        request = urllib.request.Request(os.environ["ANTHROPIC_BASE_URL"] + "/v1/chat/completions", body,
                                         {"content-type": "application/json"})
        served_by = json.load(urllib.request.urlopen(request, timeout=10))["model"]
        break
    except OSError:
        time.sleep(0.1)
else:
    served_by = "nobody"
command = 'echo "Hello, world!" > hello.txt && id -u && pwd && head -1 /etc/os-release'
done = subprocess.run(["sh", "-c", command], capture_output=True, text=True)
session = str(uuid.uuid4())
folder = os.path.join(os.environ["CLAUDE_CONFIG_DIR"], "projects", "-app")
os.makedirs(folder)
base = {"isSidechain": False, "userType": "external", "cwd": os.getcwd(), "sessionId": session, "version": "2.1.3"}
usage = {"input_tokens": 10, "output_tokens": 5}
records = [
    {**base, "type": "user", "uuid": "u1", "parentUuid": None, "timestamp": "2026-12-03T10:00:00.000Z",
     "message": {"role": "user", "content": instruction}},
    {**base, "type": "assistant", "uuid": "a1", "parentUuid": "u1", "timestamp": "2026-12-03T10:00:01.000Z",
     "message": {"id": "msg_1", "type": "message", "role": "assistant", "model": os.environ.get("MODEL", "stand-in"),
                 "content": [{"type": "tool_use", "id": "toolu_1", "name": "Bash", "input": {"command": command}}],
                 "usage": usage}},
    {**base, "type": "user", "uuid": "u2", "parentUuid": "a1", "timestamp": "2026-12-03T10:00:02.000Z",
     "message": {"role": "user", "content": [{"tool_use_id": "toolu_1", "type": "tool_result",
                                              "content": done.stdout + done.stderr}]}},
    {**base, "type": "assistant", "uuid": "a2", "parentUuid": "u2", "timestamp": "2026-12-03T10:00:03.000Z",
     "message": {"id": "msg_2", "type": "message", "role": "assistant", "model": "stand-in",
                 "content": [{"type": "text", "text": "Wrote hello.txt; the model was " + served_by}],
                 "usage": usage}},
]
if instruction.startswith("PLANT "):  # a hostile CLI: its session log is a link to a host file
    os.symlink(instruction.split()[1], os.path.join(folder, session + ".jsonl"))
else:
    with open(os.path.join(folder, session + ".jsonl"), "w") as log:
        log.writelines(json.dumps(record) + "\n" for record in records)
print(json.dumps({"type": "result", "total_cost_usd": 0.0}))
"""


def _cli_run(ctx: ServiceContext, podman: PodmanService, tmp_path: Path, instruction: str | None = None) -> Any:
    root = hello_world(tmp_path / "hello-cli")
    (root / "environment" / "claude").write_text(STAND_IN_CLAUDE)
    (root / "environment" / "Dockerfile").write_text(
        "FROM python:3.11-slim\nCOPY claude /usr/local/bin/claude\nRUN chmod 755 /usr/local/bin/claude\nWORKDIR /app\n")
    if instruction is not None:
        (root / "instruction.md").write_text(instruction)
    with ScriptedLLMServer(Rules([], default=_turn)) as server:
        settings = SamplerSettings(llm_base_url=server.base_url, llm_model="scripted-teacher", sandbox="container",
                                   container_engine_url=podman.url, env_cache=tmp_path / "cache",
                                   harnesses=["claude-code"], skill_conditions=["without"], max_seconds=120)
        outputs = [o for o in SamplerService(ctx, settings).handle(_publish(ctx, root))
                   if isinstance(o, TrajectoryVerified)]
    (run,) = outputs
    return run


def test_a_cli_the_task_image_ships_runs_there(ctx: ServiceContext, podman: PodmanService, tmp_path: Path) -> None:
    run = _cli_run(ctx, podman, tmp_path)
    assert run.harness == "claude-code" and run.passed, ctx.store.get_bytes(run.verification_key).decode()[-3000:]
    trajectory = ctx.store.get_bytes(run.atif_key).decode()
    # the CLI ran in the task's image, as the sandbox uid, in the task's working directory
    assert "2000000" in trajectory and "/app" in trajectory and "Debian" in trajectory
    # and reached the model, offline, only through the relay's socket
    assert "the model was scripted-teacher" in trajectory


def test_a_cli_log_that_links_to_a_host_file_is_not_read(ctx: ServiceContext, podman: PodmanService,
                                                         tmp_path: Path) -> None:
    secret = tmp_path / "host-secret.jsonl"
    secret.write_text(json.dumps({"type": "user", "uuid": "u1", "message": {"role": "user", "content": "HOST-SECRET-7"}})
                      + "\n")
    run = _cli_run(ctx, podman, tmp_path, instruction=f"PLANT {secret}\n")
    record = ctx.store.get_bytes(run.verification_key).decode()
    assert "no usable session log" in record and "HOST-SECRET-7" not in record
    # the workspace is right, but nothing shows how: no demonstration comes of it
    assert not run.passed and '"failure_type": "harness_error"' in record
    assert "HOST-SECRET-7" not in ctx.store.get_bytes(run.atif_key).decode()
