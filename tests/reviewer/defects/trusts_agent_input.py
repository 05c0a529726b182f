"""Verifiers that take their ground truth from files the agent can edit: unprotected inputs
they recompute the answer from, the agent's own tests, a settings file in the workspace
(too lax: a forged input makes a forged answer pass)."""

from __future__ import annotations

import json

from tests.reviewer import handmade
from tests.reviewer.defects import domains
from tests.reviewer.defects.draft import Draft, replaced
from tests.reviewer.defects.library import LibraryTask, planted

KIND = "trusts-agent-input"
FAILURE = "too_lax"


def sales_from_workspace(draft: Draft) -> None:
    draft.protected = []
    draft.prelude = '''
import csv
from collections import defaultdict


def recomputed():
    """The report, recomputed from the export."""
    revenue, orders = defaultdict(float), defaultdict(int)
    with open(app_path("sales.csv"), newline="", encoding="utf-8") as handle:
        for row in csv.DictReader(handle):
            if row["status"] != "void":
                revenue[row["region"]] += int(row["units"]) * float(row["unit_price"])
                orders[row["region"]] += 1
    ranked = sorted(revenue, key=lambda region: (-revenue[region], region))
    return {
        "regions": [{"region": r, "revenue": round(revenue[r], 2), "orders": orders[r]} for r in ranked],
        "grand_total": round(sum(revenue.values()), 2),
    }


EXPECTED = recomputed()
'''


def log_from_workspace(draft: Draft) -> None:
    draft.protected = []
    draft.prelude = '''
from collections import Counter

LINE = re.compile(r'"\\S+ (\\S+) [^"]*" (\\d{3}) ')


def recomputed():
    """The report, recomputed from the log."""
    requests = []
    with open(app_path("logs/access.log"), encoding="utf-8") as handle:
        for line in handle:
            match = LINE.search(line)
            if match and match.group(1) != "/healthz":
                requests.append((match.group(1), int(match.group(2))))
    paths = Counter(path for path, _ in requests)
    return {
        "requests": len(requests),
        "status_counts": dict(Counter(str(status) for _, status in requests)),
        "top_paths": sorted(paths, key=lambda path: (-paths[path], path))[:3],
        "error_rate": round(sum(status >= 400 for _, status in requests) / len(requests), 4),
    }


EXPECTED = recomputed()
'''


def agents_tests_as_truth(draft: Draft) -> None:
    draft.protected = []
    draft.checks = {"shipped_tests": domains.SLUGIFY_CHECKS["shipped_tests"]}


POLICY = {"currency": "EUR", "weekly_limit": domains.WEEKLY_LIMIT}


def limit_from_policy(draft: Draft) -> None:
    draft.workspace["policy.json"] = json.dumps(POLICY, indent=2) + "\n"
    draft.instruction = replaced(
        draft.instruction,
        f"The weekly limit is {domains.WEEKLY_LIMIT} hours.",
        "The weekly limit is set in `/app/policy.json`.",
    )
    draft.solution["solve.py"] = replaced(
        domains.OVERTIME_SOLVE_PY,
        "LIMIT = 40\n",
        'with open("policy.json") as handle:\n    LIMIT = json.load(handle)["weekly_limit"]\n',
    )
    draft.prelude = '''
import csv
from collections import defaultdict
from datetime import date


def recomputed():
    """Overtime per employee-week under the limit the policy file sets."""
    with open(app_path("policy.json"), encoding="utf-8") as handle:
        limit = json.load(handle)["weekly_limit"]
    weeks = defaultdict(float)
    with open(app_path("timesheet.csv"), newline="", encoding="utf-8") as handle:
        for row in csv.DictReader(handle):
            year, week, _ = date.fromisoformat(row["date"]).isocalendar()
            weeks[(row["employee"], f"{year}-W{week:02d}")] += float(row["hours"])
    employees = [
        {"name": name, "week": week, "overtime": round(total - limit, 2)}
        for (name, week), total in sorted(weeks.items())
        if total > limit
    ]
    return {"limit": limit, "employees": employees}


EXPECTED = recomputed()
'''


def readings_from_workspace(draft: Draft) -> None:
    draft.protected = []
    draft.prelude = '''
from collections import defaultdict


def recomputed():
    """Daily statistics, recomputed from the readings."""
    days = defaultdict(list)
    with open(app_path("readings.jsonl"), encoding="utf-8") as handle:
        for line in handle:
            reading = json.loads(line)
            if reading["status"] == "ok" and reading["celsius"] is not None:
                days[(reading["sensor"], reading["ts"][:10])].append(reading["celsius"])
    stats = defaultdict(dict)
    for (sensor, day), values in days.items():
        stats[sensor][day] = {
            "min": min(values), "max": max(values), "mean": round(sum(values) / len(values), 2), "count": len(values),
        }
    return stats


EXPECTED = recomputed()
'''


TASKS = [
    LibraryTask(f"{KIND}/ledger-unprotected-input", KIND, FAILURE,
                "the verifier recomputes the total from the ledger in the workspace, which nothing protects",
                lambda root: handmade.write_task(root, handmade.trusts_agent_inputs, protect=False)),
    planted(KIND, FAILURE, "sales-recomputed-from-workspace", domains.sales_by_region, sales_from_workspace,
            "the expected report is recomputed from the unprotected export in the workspace"),
    planted(KIND, FAILURE, "access-log-recomputed-from-workspace", domains.access_log_report, log_from_workspace,
            "the expected report is recomputed from the unprotected log in the workspace"),
    planted(KIND, FAILURE, "slugify-agents-tests-as-truth", domains.slugify_fix, agents_tests_as_truth,
            "the only check is the agent's own (editable) test file"),
    planted(KIND, FAILURE, "overtime-limit-from-workspace", domains.weekly_overtime, limit_from_policy,
            "the weekly limit the verifier grades against comes from an unprotected file in the workspace"),
    planted(KIND, FAILURE, "sensor-recomputed-from-workspace", domains.sensor_daily, readings_from_workspace,
            "the expected statistics are recomputed from the unprotected readings"),
]  # fmt: skip
