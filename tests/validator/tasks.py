"""A small factory of real Harbor task directories for sandbox and validator tests.

The default task: ``/app/input.txt`` holds two numbers; the agent writes their sum (plus the
skill's secret offset, when the task says so) to ``/app/answer.txt``."""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from pathlib import Path

from skillgym_core.contracts.task import (
    EnvironmentSection,
    ProtectedInput,
    SkillGymMetadata,
    TaskConfig,
    TaskDir,
    TaskSection,
    TimeoutSection,
)

CHECK_ANSWER = """#!/bin/bash
expected="{expected}"
if [ "$(cat /app/answer.txt 2>/dev/null)" = "$expected" ]; then
  echo 1 > /logs/verifier/reward.txt
else
  echo 0 > /logs/verifier/reward.txt
fi
"""
SOLVE_SUM = "#!/bin/bash\nread a b < /app/input.txt\necho $((a + b + {offset})) > /app/answer.txt\n"


def make_task(
    root: Path,
    *,
    name: str = "sum",
    inputs: tuple[int, int] = (3, 4),
    offset: int = 0,
    test_sh: str | None = None,
    solve_sh: str | None = None,
    extra_tests: Mapping[str, str] | None = None,
    skills: Mapping[str, str] | None = None,
    protected: Sequence[str] = ("input.txt",),
    verifier_timeout_s: float = 30,
    agent_timeout_s: float = 30,
    memory_mb: int = 512,
    category: str | None = "testing",
) -> TaskDir:
    """Write a task directory; ``skills`` maps a skill name to its SKILL.md text."""
    root.mkdir(parents=True)
    workspace = root / "environment" / "workspace"
    workspace.mkdir(parents=True)
    (workspace / "input.txt").write_text(f"{inputs[0]} {inputs[1]}\n")
    (root / "environment" / "Dockerfile").write_text("FROM python:3.11-slim\nWORKDIR /app\nCOPY workspace/ /app/\n")
    for skill, text in (skills or {}).items():
        (root / "environment" / "skills" / skill).mkdir(parents=True)
        (root / "environment" / "skills" / skill / "SKILL.md").write_text(text)
    (root / "tests").mkdir()
    expected = inputs[0] + inputs[1] + offset
    (root / "tests" / "test.sh").write_text(test_sh or CHECK_ANSWER.format(expected=expected))
    for filename, text in (extra_tests or {}).items():
        (root / "tests" / filename).write_text(text)
    (root / "solution").mkdir()
    (root / "solution" / "solve.sh").write_text(solve_sh or SOLVE_SUM.format(offset=offset))
    (root / "instruction.md").write_text(
        "Read the two numbers in /app/input.txt and write the answer to /app/answer.txt.\n"
    )
    config = TaskConfig(
        task=TaskSection(name=f"skillgym/{name}"),
        metadata=SkillGymMetadata(
            task_id=f"task-{name}",
            skill_id=f"skill-{name}",
            skill_name=name,
            template="sum",
            category=category,
            protected_inputs=[
                ProtectedInput(path=p, sha256=hashlib.sha256((workspace / p).read_bytes()).hexdigest())
                for p in protected
            ],
        ),
        verifier=TimeoutSection(timeout_sec=verifier_timeout_s),
        agent=TimeoutSection(timeout_sec=agent_timeout_s),
        environment=EnvironmentSection(memory_mb=memory_mb),
    )
    task = TaskDir(root)
    task.write_config(config)
    assert task.check_layout() == [], task.check_layout()
    return task
