"""Hand-made Harbor tasks, one good and several broken in a known way, for the reviewer tests."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
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

from tests.support.task_files import write_files

DATA = "item,amount\napples,12.50\npears,3.25\nplums,20.00\nfigs,7.75\nkiwis,15.25\n"
TOTAL, COUNT = 58.75, 5
ANSWER = {"count": COUNT, "total": TOTAL}

INSTRUCTION = """# Total the ledger

`/app/data.csv` lists items with an `amount` column. Write `/app/out/total.json` as a JSON
object with `total` (the sum of the amounts, two decimals) and `count` (the number of rows).
Do not modify `/app/data.csv`. The ledger-basics skill in your skills directory explains the
format.
"""

TEST_SH = """#!/usr/bin/env bash
mkdir -p /logs/verifier
python3 /tests/verify.py
"""

GOOD_VERIFY = """import json, os
expected = json.load(open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "expected.json")))
ok = False
try:
    got = json.load(open("/app/out/total.json"))
    ok = abs(float(got["total"]) - expected["total"]) < 0.005 and int(got["count"]) == expected["count"]
except Exception as exc:
    print("answer unreadable:", exc)
open("/logs/verifier/reward.txt", "w").write("1" if ok else "0")
"""

SOLVE_PY = """import csv, json, os
rows = list(csv.DictReader(open("data.csv")))
os.makedirs("out", exist_ok=True)
json.dump({"total": round(sum(float(r["amount"]) for r in rows), 2), "count": len(rows)}, open("out/total.json", "w"))
"""

SOLVE_SH = "#!/usr/bin/env bash\nset -euo pipefail\ncd /app\npython3 /solution/solve.py\n"
SKILL_MD = """---
name: ledger-basics
description: Read small CSV ledgers and total their amounts.
---

# Ledger basics

## Reading

Amounts use a dot as the decimal separator and never carry a currency sign.

## Totals

Round the final total to two decimals only after summing every row.
"""


def write_task(root: Path, edit: Callable[[dict[str, str]], None] | None = None, *, protect: bool = True) -> TaskDir:
    """The good task, after ``edit`` changed some of its files (relative path -> text)."""
    files = {
        "instruction.md": INSTRUCTION,
        "environment/Dockerfile": "FROM python:3.11-slim\nWORKDIR /app\nCOPY workspace/ /app/\nCOPY skills/ /skills/\n",
        "environment/workspace/data.csv": DATA,
        "environment/skills/ledger-basics/SKILL.md": SKILL_MD,
        "tests/test.sh": TEST_SH,
        "tests/verify.py": GOOD_VERIFY,
        "tests/expected.json": json.dumps(ANSWER),
        "solution/solve.sh": SOLVE_SH,
        "solution/solve.py": SOLVE_PY,
    }
    if edit:
        edit(files)
    write_files(root, files)
    task = TaskDir(root)
    data = files.get("environment/workspace/data.csv", "").encode()
    config = TaskConfig(
        task=TaskSection(name=f"handmade/{root.name}"),
        metadata=SkillGymMetadata(
            task_id=f"task-{root.name}",
            skill_id="skill-ledger",
            skill_name="ledger-basics",
            template="handmade",
            protected_inputs=[ProtectedInput(path="data.csv", sha256=hashlib.sha256(data).hexdigest())] if protect else [],
        ),
        verifier=TimeoutSection(timeout_sec=30),
        agent=TimeoutSection(timeout_sec=60),
        environment=EnvironmentSection(skills_dir="/skills"),
    )
    task.write_config(config)
    return task


def _verify(body: str) -> Callable[[dict[str, str]], None]:
    def edit(files: dict[str, str]) -> None:
        files["tests/verify.py"] = body

    return edit


def always_pass(files: dict[str, str]) -> None:
    files["tests/test.sh"] = "#!/usr/bin/env bash\nmkdir -p /logs/verifier\necho 1 > /logs/verifier/reward.txt\n"


passes_initial_state = _verify(
    GOOD_VERIFY.replace('    got = json.load(open("/app/out/total.json"))',
                        '    if not os.path.exists("/app/out/total.json"):\n        raise SystemExit(open("/logs/verifier/reward.txt", "w").write("1") and 0)\n'
                        '    got = json.load(open("/app/out/total.json"))')
)

accepts_any_value = _verify(
    GOOD_VERIFY.replace(
        'ok = abs(float(got["total"]) - expected["total"]) < 0.005 and int(got["count"]) == expected["count"]',
        'ok = "total" in got and "count" in got',
    )
)

rejects_valid_alternative = _verify(
    GOOD_VERIFY.replace(
        'ok = abs(float(got["total"]) - expected["total"]) < 0.005 and int(got["count"]) == expected["count"]',
        'ok = open("/app/out/total.json").read() == json.dumps({"total": expected["total"], "count": expected["count"]})',
    )
)

trusts_agent_inputs = _verify(
    """import csv, json
ok = False
try:
    rows = list(csv.DictReader(open("/app/data.csv")))
    got = json.load(open("/app/out/total.json"))
    ok = abs(float(got["total"]) - sum(float(r["amount"]) for r in rows)) < 0.005 and int(got["count"]) == len(rows)
except Exception as exc:
    print("answer unreadable:", exc)
open("/logs/verifier/reward.txt", "w").write("1" if ok else "0")
"""
)

crashing_checker = _verify(GOOD_VERIFY.replace("expected = json.load(", "expected = json.loads(1) or json.load("))


def leaked_answer_in_workspace(files: dict[str, str]) -> None:
    files["environment/workspace/notes/expected_total.json"] = json.dumps({"total": TOTAL, "count": COUNT}, indent=1)


def leaked_answer_in_instruction(files: dict[str, str]) -> None:
    files["instruction.md"] = INSTRUCTION + '\nFor reference, the correct file reads {"total": 58.75, "count": 5}.\n'


def solution_reachable(files: dict[str, str]) -> None:
    files["instruction.md"] = INSTRUCTION + "\nIf stuck, run `bash /solution/solve.sh`.\n"


def no_reward_file(files: dict[str, str]) -> None:
    files["tests/test.sh"] = "#!/usr/bin/env bash\npython3 -c 'print(1)'\n"
    files["tests/verify.py"] = "print('nothing written')\n"
