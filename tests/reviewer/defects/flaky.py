"""Verifiers whose verdict on the same correct answer changes from run to run: ties ordered by
hash seed, random spot checks with a wrong oracle entry, set order (a checker error)."""

from __future__ import annotations

import json
from collections import Counter

from tests.reviewer.defects import domains
from tests.reviewer.defects.draft import Draft
from tests.reviewer.defects.library import planted

KIND = "flaky"
FAILURE = "checker_error"


def ties_in_set_order(draft: Draft) -> None:
    counted = [path for path, _ in domains.ACCESS_REQUESTS if path != "/healthz"]
    draft.expected["path_counts"] = dict(Counter(counted))
    draft.checks["top_paths"] = """
def top_paths():
    counts = EXPECTED["path_counts"]
    ranked = sorted(set(counts), key=lambda path: -counts[path])
    return read_json("report.json")["top_paths"] == ranked[:3]
"""


def random_spot_check(draft: Draft) -> None:
    cases = draft.expected["cases"]
    # the oracle's author thought apostrophes vanish instead of separating words
    draft.expected["cases"] = [[title, "zoes-cafe" if title == "Zoë's café" else slug] for title, slug in cases]
    draft.prelude += "\nimport random\n"
    draft.checks["hidden_titles"] = """
def hidden_titles():
    cases = random.sample(EXPECTED["cases"], 3)
    return slugs([title for title, _ in cases]) == [slug for _, slug in cases]
"""


def unrounded_spot_check(draft: Draft) -> None:
    raw = {
        sensor: {day: sum(values) / len(values) for day, values in days.items()}
        for sensor, days in _readings_by_day().items()
    }
    draft.tests["raw_means.json"] = json.dumps(raw, indent=2) + "\n"
    draft.prelude += """
import random

with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "raw_means.json"), encoding="utf-8") as handle:
    RAW_MEANS = json.load(handle)
"""
    draft.checks["means"] = """
def means():
    got = read_json("out/daily.json")
    sensor = random.choice(sorted(RAW_MEANS))
    day = random.choice(sorted(RAW_MEANS[sensor]))
    return number(got[sensor][day]["mean"]) == RAW_MEANS[sensor][day]
"""


def _readings_by_day() -> dict[str, dict[str, list[float]]]:
    days: dict[str, dict[str, list[float]]] = {}
    for sensor, ts, value, status in domains.READINGS:
        if value is not None and status == "ok":
            days.setdefault(sensor, {}).setdefault(ts[:10], []).append(value)
    return days


def changes_in_set_order(draft: Draft) -> None:
    draft.checks["changes"] = """
def changes():
    return read_json("out/changes.json") == list(set(EXPECTED["changes"]))
"""


TASKS = [
    planted(KIND, FAILURE, "access-log-ties-by-hash-seed", domains.access_log_report, ties_in_set_order,
            "tied paths are ranked in set order, which changes with Python's hash seed"),
    planted(KIND, FAILURE, "slugify-random-spot-check", domains.slugify_fix, random_spot_check,
            "three random hidden titles are checked and one of the oracle's slugs is wrong"),
    planted(KIND, FAILURE, "sensor-random-day", domains.sensor_daily, unrounded_spot_check,
            "one random day's mean is compared unrounded, which holds only for the days that need no rounding"),
    planted(KIND, FAILURE, "config-changes-set-order", domains.service_config, changes_in_set_order,
            "the expected list of changes is a set turned into a list, in hash-seed order"),
]  # fmt: skip
