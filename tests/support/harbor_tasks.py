"""Tasks in Harbor's own format, written for the tests as a Harbor user writes them: no SkillGym
metadata, inputs copied into the image by the Dockerfile, system packages from apt, Harbor's
network keys, several rewards in ``reward.json``, a task without a solution, a multi-step task
in another working directory, a task run as its image's own user."""

from __future__ import annotations

from pathlib import Path

from tests.support.task_files import write_files

HELLO_TOML = """version = "1.0"

[metadata]
author_name = "Test Author"
difficulty = "easy"
category = "programming"
tags = ["trivial"]

[verifier]
timeout_sec = 120.0

[agent]
timeout_sec = 120.0

[environment]
build_timeout_sec = 600.0
cpus = 1
memory_mb = 2048
storage_mb = 10240
"""

HELLO_TEST = """#!/bin/bash
if [ "$(cat /app/hello.txt 2>/dev/null)" = "Hello, world!" ]; then
  echo 1 > /logs/verifier/reward.txt
else
  echo 0 > /logs/verifier/reward.txt
fi
"""

INVENTORY_TOML = """schema_version = "1.2"

[task]
name = "tests/apt-inventory"
description = "Items below their reorder level"
keywords = ["jq", "json"]

[metadata]
difficulty = "medium"

[verifier]
timeout_sec = 120.0

[agent]
timeout_sec = 300.0

[environment]
network_mode = "no-network"
memory_mb = 1024
"""

INVENTORY_DOCKERFILE = """FROM python:3.11-slim
RUN apt-get update && apt-get install -y --no-install-recommends jq && rm -rf /var/lib/apt/lists/*
WORKDIR /app
COPY inventory.json /app/inventory.json
ENV REPORT_NAME=low-stock.txt
"""

INVENTORY = """{"items": [
  {"name": "bolt", "qty": 3, "reorder": 10},
  {"name": "washer", "qty": 50, "reorder": 20},
  {"name": "anchor", "qty": 0, "reorder": 5},
  {"name": "hinge", "qty": 7, "reorder": 7}
]}
"""

INVENTORY_TEST = """#!/bin/bash
# two rewards: the right names, and in the right order
report=/app/low-stock.txt
names=0; order=0
if [ -f "$report" ]; then
  if [ "$(sort "$report" | tr '\\n' ' ')" = "anchor bolt " ]; then names=1; fi
  if [ "$(tr '\\n' ' ' < "$report")" = "anchor bolt " ]; then order=1; fi
fi
jq -n --argjson n "$names" --argjson o "$order" '{names: $n, order: $o}' > /logs/verifier/reward.json
"""

INVENTORY_SOLVE = """#!/bin/bash
set -euo pipefail
cd /app
jq -r '.items[] | select(.qty < .reorder) | .name' inventory.json | sort > "$REPORT_NAME"
"""


def hello_world(root: Path, *, with_solution: bool = True) -> Path:
    """Harbor's hello-world shape: ``version``, free-form ``[metadata]``, no ``[task]``, the
    internet allowed by default, an Ubuntu base the machine does not have."""
    files = {
        "task.toml": HELLO_TOML,
        "instruction.md": 'Create a file called hello.txt with "Hello, world!" as the content.\n',
        "environment/Dockerfile": "FROM ubuntu:24.04\n\nWORKDIR /app\n",
        "tests/test.sh": HELLO_TEST,
    }
    if with_solution:
        files["solution/solve.sh"] = "#!/bin/bash\necho \"Hello, world!\" > hello.txt\n"
    return write_files(root, files)


def apt_inventory(root: Path) -> Path:
    """A system package from apt, the input copied into the image, ``ENV``, ``network_mode``,
    and a ``reward.json`` with two keys."""
    return write_files(root, {
        "task.toml": INVENTORY_TOML,
        "instruction.md": "Some items in inventory.json are below their reorder level. Write their names, one per "
                          "line in alphabetical order, to the file named by $REPORT_NAME in the working directory.\n",
        "environment/Dockerfile": INVENTORY_DOCKERFILE,
        "environment/inventory.json": INVENTORY,
        "tests/test.sh": INVENTORY_TEST,
        "solution/solve.sh": INVENTORY_SOLVE,
    })


STEPS_TOML = """schema_version = "1.2"
multi_step_reward_strategy = "mean"

[task]
name = "tests/log-steps"

[agent]
timeout_sec = 120.0

[verifier]
timeout_sec = 60.0

[environment]
workdir = "/workspace"
allow_internet = false

[[steps]]
name = "count"
min_reward = 1.0

[[steps]]
name = "summarize"

[steps.agent]
timeout_sec = 90.0

[steps.healthcheck]
command = "test -s /workspace/errors.txt"
interval_sec = 0
retries = 1
"""

EVENTS = "INFO start\nERROR disk full\nWARN slow\nERROR disk full\nINFO stop\n"
# the second step's setup appends the night's events before its agent starts
LATE_EVENTS = "ERROR fan\nWARN hot\n"

STEP_REWARD_HELPER = """# shared by every step's test.sh
reward() { echo "$1" > /logs/verifier/reward.txt; }
"""

COUNT_TEST = """#!/bin/bash
. /tests/helpers.sh
if [ "$(tr -d '[:space:]' < /workspace/errors.txt 2>/dev/null)" = "2" ]; then reward 1; else reward 0; fi
"""

SUMMARIZE_TEST = """#!/bin/bash
. /tests/helpers.sh
expected='{"ERROR": 3, "INFO": 2, "WARN": 2}'
actual=$(python3 -c 'import json,sys; print(json.dumps(json.load(open("/workspace/summary.json")), sort_keys=True))' 2>/dev/null)
if [ "$actual" = "$expected" ]; then reward 1; else reward 0; fi
"""


def log_steps(root: Path) -> Path:
    """Two steps in ``/workspace``: the first's inputs come from its ``workdir/``, the second's
    setup adds more and its healthcheck needs the first's output; a shared test helper, each
    step's own ``test.sh``, a ``min_reward`` gate and per-step solutions."""
    return write_files(root, {
        "task.toml": STEPS_TOML,
        "environment/Dockerfile": "FROM python:3.11-slim\nWORKDIR /workspace\n",
        "tests/helpers.sh": STEP_REWARD_HELPER,
        "steps/count/instruction.md": "How many ERROR lines does events.log hold? Write the number to errors.txt.\n",
        "steps/count/workdir/events.log": EVENTS,
        "steps/count/tests/test.sh": COUNT_TEST,
        "steps/count/solution/solve.sh": "#!/bin/bash\ngrep -c '^ERROR' events.log > errors.txt\n",
        "steps/summarize/instruction.md": "events.log has grown. Write the number of lines per level (the first "
                                          "word) to summary.json as one JSON object.\n",
        "steps/summarize/workdir/setup.sh": f"printf '{LATE_EVENTS}' >> events.log\n",
        "steps/summarize/tests/test.sh": SUMMARIZE_TEST,
        "steps/summarize/solution/solve.sh": "#!/bin/bash\npython3 -c 'import collections, json; "
        "json.dump(collections.Counter(l.split()[0] for l in open(\"events.log\") if l.strip()), "
        "open(\"summary.json\", \"w\"))'\n",
    })


def log_count(root: Path) -> Path:
    """The first step of :func:`log_steps` as a task of its own: the input copied in by the
    Dockerfile, in ``/workspace``."""
    return write_files(root, {
        "task.toml": STEPS_TOML.split("[[steps]]")[0],
        "instruction.md": "How many ERROR lines does events.log hold? Write the number to errors.txt.\n",
        "environment/Dockerfile": "FROM python:3.11-slim\nWORKDIR /workspace\nCOPY events.log /workspace/events.log\n",
        "environment/events.log": EVENTS,
        "tests/helpers.sh": STEP_REWARD_HELPER,
        "tests/test.sh": COUNT_TEST,
        "solution/solve.sh": "#!/bin/bash\ngrep -c '^ERROR' events.log > errors.txt\n",
    })


def prebuilt_image(root: Path, image: str) -> Path:
    """Harbor's hello-world on a prebuilt ``docker_image`` instead of a Dockerfile."""
    task = hello_world(root)
    (task / "environment" / "Dockerfile").unlink()
    (task / "task.toml").write_text(HELLO_TOML.replace("[environment]\n", f'[environment]\ndocker_image = "{image}"\n'))
    return task


AGENT_USER_DOCKERFILE = """FROM python:3.11-slim
RUN useradd -m -u 1000 agent && mkdir -p /opt/notes && echo k-7431 > /opt/notes/key.txt \\
 && chown -R agent:agent /opt/notes && chmod 700 /opt/notes && chmod 600 /opt/notes/key.txt \\
 && echo root-only > /opt/root-only.txt && chmod 600 /opt/root-only.txt
WORKDIR /app
"""

AGENT_USER_TEST = """#!/bin/bash
if [ "$(cat /app/key.txt 2>/dev/null)" = "k-7431" ] && [ "$(cat /app/whoami.txt 2>/dev/null)" = "agent" ]; then
  echo 1 > /logs/verifier/reward.txt
else
  echo 0 > /logs/verifier/reward.txt
fi
"""


def agent_user(root: Path, user: str = "agent") -> Path:
    """``[agent] user``: the key only the image's ``agent`` user may read, and its name."""
    return write_files(root, {
        "task.toml": HELLO_TOML.replace("[agent]\n", f'[agent]\nuser = "{user}"\n'),
        "instruction.md": "Copy the key kept in /opt/notes/key.txt to key.txt, and write your user name to "
                          "whoami.txt.\n",
        "environment/Dockerfile": AGENT_USER_DOCKERFILE,
        "tests/test.sh": AGENT_USER_TEST,
        "solution/solve.sh": "#!/bin/bash\ncp /opt/notes/key.txt key.txt\nwhoami > whoami.txt\n",
    })


def harbor_suite(root: Path) -> dict[str, Path]:
    return {
        "hello-world": hello_world(root / "hello-world"),
        "apt-inventory": apt_inventory(root / "apt-inventory"),
        "no-solution": hello_world(root / "no-solution", with_solution=False),
        "log-steps": log_steps(root / "log-steps"),
        "agent-user": agent_user(root / "agent-user"),
    }
