"""A small task whose verifier can be assembled from good and lax checks, for the mutation-probe
tests: from ``/app/items.csv`` write ``/app/out/report.json`` with the distinct categories, the
total price and the number of items. The reference solution takes two steps."""

from __future__ import annotations

import hashlib
import json
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

ITEMS = "name,category,price\napple,fruit,1.25\nleek,vegetable,2.50\npear,fruit,0.75\nalmond,nut,4.00\nkale,vegetable,3.10\n"
EXPECTED = {"categories": ["fruit", "vegetable", "nut"], "total": 11.6, "count": 5}

INSTRUCTION = """# Summarise the catalogue

`/app/items.csv` lists items with a `category` and a `price`. Write `/app/out/report.json`, a
JSON object with `categories` (the distinct categories, in any order), `total` (the sum of the
prices, two decimals) and `count` (the number of items). Do not modify `/app/items.csv`.
"""

SKILL_MD = """---
name: catalogue-basics
description: Summarise small CSV catalogues.
---

# Catalogue basics

Prices use a dot as the decimal separator. Round totals to two decimals after summing.
"""

CATEGORIES_PY = """import csv, json
seen = []
for row in csv.DictReader(open("items.csv")):
    if row["category"] not in seen:
        seen.append(row["category"])
json.dump({"categories": seen}, open("out/report.json", "w"), indent=2)
"""

TOTALS_PY = """import csv, json
rows = list(csv.DictReader(open("items.csv")))
report = json.load(open("out/report.json"))
report["total"] = round(sum(float(r["price"]) for r in rows), 2)
report["count"] = len(rows)
json.dump(report, open("out/report.json", "w"), indent=2)
"""

SOLVE_SH = """#!/usr/bin/env bash
set -euo pipefail
cd /app
mkdir -p out
python3 /solution/categories.py
python3 /solution/totals.py
"""

TEST_SH = "#!/usr/bin/env bash\nmkdir -p /logs/verifier\npython3 /tests/verify.py\n"

VERIFY = """import csv, json, os
HERE = os.path.dirname(os.path.abspath(__file__))
EXPECTED = json.load(open(os.path.join(HERE, "expected.json")))


def report():
    with open("/app/out/report.json") as handle:
        return json.load(handle)


{checks}

scores = {{}}
for name, check in CHECKS:
    try:
        scores[name] = 1.0 if check() else 0.0
    except Exception as exc:  # a malformed answer fails the check
        print(name, "failed:", exc)
        scores[name] = 0.0
reward = round(sum(scores.values()) / len(scores), 6)
json.dump({{"reward": reward, **scores}}, open("/logs/verifier/reward.json", "w"))
"""

CATEGORIES = {
    "any_order": "got = report()['categories']\n    return isinstance(got, list) and len(got) == len(set(got)) "
                 "and sorted(got) == sorted(EXPECTED['categories'])",
    "in_order": "return report()['categories'] == EXPECTED['categories']",
}
TOTAL = {
    "exact": "value = report()['total']\n    return not isinstance(value, bool) and abs(float(value) - EXPECTED['total']) < 0.005",
    "may_be_missing": "value = report().get('total', EXPECTED['total'])\n"
                      "    return not isinstance(value, bool) and abs(float(value) - EXPECTED['total']) < 0.005",
    "from_workspace": "rows = list(csv.DictReader(open('/app/items.csv')))\n"
                      "    return abs(float(report()['total']) - sum(float(r['price']) for r in rows)) < 0.005",
    "is_number": "return isinstance(report()['total'], (int, float))",
}
COUNT = {
    "exact": "value = report()['count']\n    return not isinstance(value, bool) and value == EXPECTED['count']",
    "is_int": "return isinstance(report().get('count'), int)",
    "anything": "return True",
    "may_be_missing": "value = report().get('count', EXPECTED['count'])\n"
                      "    return not isinstance(value, bool) and value == EXPECTED['count']",
}


def verify_py(categories: str = "any_order", total: str = "exact", count: str = "exact") -> str:
    checks = "\n\n".join(
        f"def {name}():\n    {body}"
        for name, body in (("categories", CATEGORIES[categories]), ("total", TOTAL[total]), ("count", COUNT[count]))
    )
    checks += '\n\n\nCHECKS = [("categories", categories), ("total", total), ("count", count)]'
    return VERIFY.format(checks=checks)


def write_task(
    root: Path,
    *,
    categories: str = "any_order",
    total: str = "exact",
    count: str = "exact",
    equivalences: dict[str, list[str]] | None = None,
    protect: bool = True,
) -> TaskDir:
    files = {
        "instruction.md": INSTRUCTION,
        "environment/Dockerfile": "FROM python:3.11-slim\nWORKDIR /app\nCOPY workspace/ /app/\nCOPY skills/ /skills/\n",
        "environment/workspace/items.csv": ITEMS,
        "environment/skills/catalogue-basics/SKILL.md": SKILL_MD,
        "tests/test.sh": TEST_SH,
        "tests/verify.py": verify_py(categories, total, count),
        "tests/expected.json": json.dumps(EXPECTED),
        "solution/solve.sh": SOLVE_SH,
        "solution/categories.py": CATEGORIES_PY,
        "solution/totals.py": TOTALS_PY,
    }
    if equivalences is not None:
        files["tests/equivalences.json"] = json.dumps(equivalences)
    write_files(root, files)
    protected = [ProtectedInput(path="items.csv", sha256=hashlib.sha256(ITEMS.encode()).hexdigest())] if protect else []
    task = TaskDir(root)
    task.write_config(TaskConfig(
        task=TaskSection(name=f"tests/{root.name}"),
        metadata=SkillGymMetadata(task_id=f"task-{root.name}", skill_id="skill-catalogue", skill_name="catalogue-basics",
                                  template="catalogue", protected_inputs=protected),
        verifier=TimeoutSection(timeout_sec=30),
        agent=TimeoutSection(timeout_sec=60),
        environment=EnvironmentSection(skills_dir="/skills"),
    ))  # fmt: skip
    return task
