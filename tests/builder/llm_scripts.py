"""Recorded answers of a builder model and a reviewer model, for the scripted OpenAI-compatible
server: one good task and one variant per kind of defect."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from tests.support.scripted_llm import Rules, Sequence, assistant, conversation_text, tool_call

INSTRUCTION = """# Total the ledger

`/app/data.csv` is a ledger export with an `item` and an `amount` column. Total it the way the
`ledger-basics` skill in your skills directory describes, and write `/app/out/total.json` with
`total` (two decimals) and `count` (the number of rows that count towards the total).
Do not modify `/app/data.csv`.
"""
DATA = "item,amount\napples,12.50\n#pears,3.25\nplums,20.00\nfigs,7.75\n#kiwis,15.25\ndates,4.10\n"
EXPECTED = {"total": 44.35, "count": 4}
TEST_SH = """#!/usr/bin/env bash
mkdir -p /logs/verifier
python3 /tests/verify.py
status=$?
[ -s /logs/verifier/reward.json ] || [ -s /logs/verifier/reward.txt ] || echo 0 > /logs/verifier/reward.txt
exit $status
"""
VERIFY = """import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from checks import load_expected, read_json, run

E = load_expected()


def total():
    return abs(float(read_json("out/total.json")["total"]) - E["total"]) < 0.005


def count():
    value = read_json("out/total.json")["count"]
    return not isinstance(value, bool) and int(value) == E["count"]


run([("total", total), ("count", count)])
"""
RUBRIC = [{"name": "total", "weight": 0.7}, {"name": "count", "weight": 0.3}]
SOLVE_SH = "#!/usr/bin/env bash\nset -euo pipefail\ncd /app\nmkdir -p out\npython3 /solution/total.py\n"
TOTAL_PY = """import csv
import json

rows = [r for r in csv.DictReader(open("data.csv")) if not r["item"].startswith("#")]
with open("out/total.json", "w") as out:
    json.dump({"total": round(sum(float(r["amount"]) for r in rows), 2), "count": len(rows)}, out)
"""
PLAN = {
    "protected": ["data.csv"],
    "blueprint": {
        "goal": "Total a ledger export following the team's ledger rules.",
        "challenge": "The comment-row rule is only written in the skill.",
        "acceptance_criteria": ["out/total.json holds the total and count of counted rows"],
    },
}


def good_files() -> dict[str, str]:
    return {
        "instruction.md": INSTRUCTION,
        "environment/workspace/data.csv": DATA,
        "tests/test.sh": TEST_SH,
        "tests/verify.py": VERIFY,
        "tests/expected.json": json.dumps(EXPECTED),
        "tests/rubric.json": json.dumps(RUBRIC),
        "solution/solve.sh": SOLVE_SH,
        "solution/total.py": TOTAL_PY,
        "task_plan.json": json.dumps(PLAN),
    }


DEFECTS: dict[str, Callable[[dict[str, str]], None]] = {
    "too_lax": lambda f: f.update({"tests/test.sh": "#!/usr/bin/env bash\nmkdir -p /logs/verifier\necho 1 > /logs/verifier/reward.txt\n"}),
    "leakage": lambda f: f.update({"environment/workspace/notes/answer.json": json.dumps(EXPECTED, indent=1)}),
    "too_strict": lambda f: f.update({"tests/verify.py": VERIFY.replace(
        'return abs(float(read_json("out/total.json")["total"]) - E["total"]) < 0.005',
        'return open("/app/out/total.json").read() == json.dumps(E)').replace("import os\n", "import json\nimport os\n")}),
    "checker_error": lambda f: f.update({"tests/verify.py": "import ledger_helpers\n" + VERIFY}),
    "environment_error": lambda f: f.update({"solution/solve.sh": SOLVE_SH.replace("total.py", "totals.py")}),
    "weak_skill_dependence": lambda f: f.update({"instruction.md": INSTRUCTION + "\nSkip every row whose item begins with `#`.\n"}),
    "difficulty_mismatch": lambda f: f.update({"instruction.md": INSTRUCTION + "\nThis is a one-step warm-up.\n"}),
}


def writing_turns(files: dict[str, str], delete: tuple[str, ...] = ()) -> list[dict[str, Any]]:
    turns = [assistant("", [tool_call("list_files", {})])]
    turns += [assistant("", [tool_call("delete_file", {"path": p})]) for p in delete]
    turns += [assistant("", [tool_call("write_file", {"path": p, "content": c})]) for p, c in files.items()]
    turns.append(assistant("", [tool_call("run_command", {"command": "python3 -m py_compile tests/verify.py && echo compiled"})]))
    turns.append(assistant("", [tool_call("finish", {"summary": "task written"})]))
    return turns


def builder_model(defect: str | None) -> Rules:
    """First conversation: the task with ``defect``; once reviewer feedback is in the brief: the good task."""
    first = good_files()
    if defect is not None:
        DEFECTS[defect](first)
    return Rules(
        [("Reviewer feedback on the previous revision",
          Sequence(writing_turns(good_files(), delete=("environment/workspace/notes/answer.json",))))],
        default=Sequence(writing_turns(first)),
    )


def skipping_builder_model() -> Sequence:
    return Sequence([assistant("", [tool_call("skip", {"reason": "the skill has no checkable procedure"})])])


def _verdict(verdict: str, failure_type: str | None, reason: str) -> Callable[[dict[str, Any]], dict[str, Any]]:
    return lambda body: assistant(json.dumps({"verdict": verdict, "failure_type": failure_type, "reasons": [reason]}))


def reviewer_model() -> Rules:
    return Rules(
        [
            ("Skip every row whose item begins with", _verdict("reject", "weak_skill_dependence",
                                                               "the instruction restates the skill's comment-row rule")),
            ("one-step warm-up", _verdict("reject", "difficulty_mismatch", "far easier than the blueprint's challenge")),
        ],
        default=_verdict("approve", None, "matches the blueprint"),
    )


def requests_text(requests: list[dict[str, Any]]) -> str:
    return "\n".join(conversation_text(r) for r in requests)
