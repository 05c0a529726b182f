"""Real Harbor task directories for sampler tests, packed into a store like the builder does."""

from __future__ import annotations

import hashlib
from pathlib import Path

from skillgym_core.context import ServiceContext
from skillgym_core.contracts.events import Envelope, EnvValidated
from skillgym_core.contracts.task import SkillGymMetadata, TaskConfig, TaskDir, TaskSection

SKILL_NAME = "ledger-total"
SKILL_MD = """---
name: ledger-total
description: Total the amount column of a ledger CSV with awk and write the number to a file.
---
# Ledger total
1. Skip the header row of the CSV.
2. Sum the second column: `awk -F, 'NR>1 {s+=$2} END {print s}' ledger.csv`.
3. Write only the number, no other text, to `total.txt` in the workspace.
"""
LEDGER = "item,amount\napples,12\npears,20\nplums,10\n"
EXPECTED_TOTAL = "42"

SOLVE_SH = """#!/bin/bash
set -euo pipefail
cd /app

# Check the input
head -n 3 ledger.csv

# Sum the amount column
awk -F, 'NR>1 {s+=$2} END {print s}' ledger.csv > total.txt

# Show the result
cat total.txt
"""

TEST_SH = """#!/bin/bash
mkdir -p /logs/verifier
if [ "$(tr -d '[:space:]' < /app/total.txt 2>/dev/null)" = "42" ]; then
  echo 1 > /logs/verifier/reward.txt
  echo "total is correct"
else
  echo 0 > /logs/verifier/reward.txt
  echo "total.txt missing or wrong"
fi
"""

INSTRUCTION = "The file /app/ledger.csv lists items and amounts. Write the total amount to /app/total.txt.\n"


def write_task(root: Path, *, task_id: str = "task-ledger0001", revision: int = 0,
               category: str = "data-processing") -> TaskDir:
    task = TaskDir(root)
    (root / "environment" / "workspace").mkdir(parents=True)
    (root / "environment" / "skills" / SKILL_NAME).mkdir(parents=True)
    (root / "tests").mkdir()
    (root / "solution").mkdir()
    (root / "environment" / "Dockerfile").write_text("FROM python:3.11-slim\nWORKDIR /app\nCOPY workspace/ /app/\n")
    (root / "environment" / "workspace" / "ledger.csv").write_text(LEDGER)
    (root / "environment" / "skills" / SKILL_NAME / "SKILL.md").write_text(SKILL_MD)
    (root / "instruction.md").write_text(INSTRUCTION)
    (root / "tests" / "test.sh").write_text(TEST_SH)
    (root / "solution" / "solve.sh").write_text(SOLVE_SH)
    config = TaskConfig(
        task=TaskSection(name="skillgym/ledger-total"),
        metadata=SkillGymMetadata(
            task_id=task_id,
            skill_id="skill-ledger",
            skill_name=SKILL_NAME,
            template="procedural-file",
            category=category,
            revision=revision,
            protected_inputs=[{"path": "ledger.csv", "sha256": hashlib.sha256(LEDGER.encode()).hexdigest()}],
        ),
    )
    task.write_config(config)
    assert task.check_layout() == []
    return task


def publish_task(ctx: ServiceContext, tmp: Path, **kwargs: object) -> Envelope:
    task_id = str(kwargs.get("task_id", "task-ledger0001"))
    task = write_task(tmp / task_id, **kwargs)  # type: ignore[arg-type]
    package_key = ctx.save_task(task_id, task)
    payload = EnvValidated(task_id=task_id, skill_id="skill-ledger", package_key=package_key, valid=True,
                           label="skill-dep", category="data-processing")
    return Envelope.wrap(payload, producer="validator", correlation_id="test")
