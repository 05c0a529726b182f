"""Verifiers that accept wrong values: presence or type checks, tolerances far too wide, fields
never compared (too lax)."""

from __future__ import annotations

from tests.reviewer import handmade
from tests.reviewer.defects import domains
from tests.reviewer.defects.draft import Draft
from tests.reviewer.defects.library import LibraryTask, planted

KIND = "accepts-wrong-value"
FAILURE = "too_lax"


def wide_tolerance(draft: Draft) -> None:
    draft.checks["region_figures"] = """
def region_figures():
    # exports lose cents to rounding, so amounts get some slack
    got = {row["region"]: row for row in read_json("out/region_totals.json")["regions"]}
    return all(
        close(got[want["region"]]["revenue"], want["revenue"], 25) and number(got[want["region"]]["orders"]) == want["orders"]
        for want in EXPECTED["regions"]
    )
"""
    draft.checks["grand_total"] = """
def grand_total():
    return close(read_json("out/region_totals.json")["grand_total"], EXPECTED["grand_total"], 25)
"""


def types_only(draft: Draft) -> None:
    draft.checks = {
        "report_shape": """
def report_shape():
    got = read_json("report.json")
    return (
        isinstance(got["requests"], int)
        and isinstance(got["status_counts"], dict)
        and isinstance(got["top_paths"], list) and len(got["top_paths"]) == 3
        and isinstance(got["error_rate"], float)
    )
""",
    }


def truncated_means(draft: Draft) -> None:
    draft.checks["means"] = """
def means():
    got = read_json("out/daily.json")
    return all(
        int(number(got[sensor][day]["mean"])) == int(stats["mean"])
        for sensor, days in EXPECTED.items() for day, stats in days.items()
    )
"""


def hours_unchecked(draft: Draft) -> None:
    draft.checks["overtime_hours"] = """
def overtime_hours():
    return all(number(e["overtime"]) > 0 for e in read_json("out/overtime.json")["employees"])
"""


def anchors_unchecked(draft: Draft) -> None:
    draft.checks["anchors"] = """
def anchors():
    return all(isinstance(e["anchor"], str) and e["anchor"] for e in read_json("toc.json"))
"""


def slugs_typed_only(draft: Draft) -> None:
    draft.checks["hidden_titles"] = """
def hidden_titles():
    got = slugs([title for title, _ in EXPECTED["cases"]])
    return len(got) == len(EXPECTED["cases"]) and all(isinstance(slug, str) for slug in got)
"""


TASKS = [
    LibraryTask(f"{KIND}/ledger-keys-only", KIND, FAILURE,
                "the verifier checks that the keys exist, not their values",
                lambda root: handmade.write_task(root, handmade.accepts_any_value)),
    planted(KIND, FAILURE, "sales-wide-tolerance", domains.sales_by_region, wide_tolerance,
            "revenues may be off by 25 currency units"),
    planted(KIND, FAILURE, "access-log-types-only", domains.access_log_report, types_only,
            "the report is checked for field types only"),
    planted(KIND, FAILURE, "sensor-truncated-means", domains.sensor_daily, truncated_means,
            "means are compared after truncation to whole degrees"),
    planted(KIND, FAILURE, "overtime-hours-unchecked", domains.weekly_overtime, hours_unchecked,
            "overtime hours only have to be positive"),
    planted(KIND, FAILURE, "toc-anchors-unchecked", domains.markdown_toc, anchors_unchecked,
            "anchors only have to be non-empty strings"),
    planted(KIND, FAILURE, "slugify-hidden-types-only", domains.slugify_fix, slugs_typed_only,
            "the hidden titles' slugs are checked to be strings, not compared"),
]  # fmt: skip
