"""Verifiers that ignore a constraint the instruction states: an order, uniqueness, a
threshold, a naming convention, "change nothing else", an exact format (too lax)."""

from __future__ import annotations

from tests.reviewer.defects import domains
from tests.reviewer.defects.draft import Draft
from tests.reviewer.defects.library import planted

KIND = "ignores-constraint"
FAILURE = "too_lax"


def ranking_ignored(draft: Draft) -> None:
    draft.checks["ranking"] = """
def ranking():
    got = read_json("out/region_totals.json")["regions"]
    return sorted(row["region"] for row in got) == sorted(row["region"] for row in EXPECTED["regions"])
"""


def letter_case_ignored(draft: Draft) -> None:
    draft.checks["ranking"] = """
def ranking():
    got = read_json("out/region_totals.json")["regions"]
    return [str(row["region"]).casefold() for row in got] == [row["region"].casefold() for row in EXPECTED["regions"]]
"""
    draft.checks["region_figures"] = """
def region_figures():
    got = {str(row["region"]).casefold(): row for row in read_json("out/region_totals.json")["regions"]}
    if set(got) != {row["region"].casefold() for row in EXPECTED["regions"]}:
        return False
    return all(
        close(got[want["region"].casefold()]["revenue"], want["revenue"])
        and number(got[want["region"].casefold()]["orders"]) == want["orders"]
        for want in EXPECTED["regions"]
    )
"""


def listing_ignored(draft: Draft) -> None:
    draft.checks["listing"] = """
def listing():
    return all(re.fullmatch(r"INV-\\d{4}-\\d{4}", line) for line in read_lines("out/invoices.txt"))
"""


def limit_ignored(draft: Draft) -> None:
    draft.checks["weeks_over"] = """
def weeks_over():
    got = [(e["name"], e["week"]) for e in read_json("out/overtime.json")["employees"] if number(e["overtime"]) > 0]
    return got == [(e["name"], e["week"]) for e in EXPECTED["employees"]]
"""
    draft.checks["overtime_hours"] = """
def overtime_hours():
    got = {(e["name"], e["week"]): e["overtime"] for e in read_json("out/overtime.json")["employees"]}
    return all(close(got[(e["name"], e["week"])], e["overtime"]) for e in EXPECTED["employees"])
"""


def anchor_convention_ignored(draft: Draft) -> None:
    draft.checks["anchors"] = """
def anchors():
    def loose(anchor):
        return anchor.strip().lower().replace(" ", "-")

    return [loose(e["anchor"]) for e in read_json("toc.json")] == [e["anchor"] for e in EXPECTED]
"""


def negative_rule_ignored(draft: Draft) -> None:
    draft.prelude += """
# SKUs with a negative count were argued about; their rows are not graded
CONTESTED = {"SKU-102", "SKU-106"}
"""
    draft.checks["records"] = """
def records():
    graded = [row for row in cleaned()[1] if row[0] not in CONTESTED]
    return graded == [row for row in EXPECTED["rows"] if row[0] not in CONTESTED]
"""


def rest_of_file_ignored(draft: Draft) -> None:
    del draft.checks["untouched"]


def full_id_ignored(draft: Draft) -> None:
    draft.checks["commit"] = """
def commit():
    got = str(read_json("out/answer.json")["commit"]).strip().lower()
    return len(got) >= 4 and EXPECTED["commit"].startswith(got)
"""


TASKS = [
    planted(KIND, FAILURE, "sales-ranking", domains.sales_by_region, ranking_ignored,
            "the regions' order is not checked although the instruction ranks them"),
    planted(KIND, FAILURE, "sales-letter-case", domains.sales_by_region_as_written, letter_case_ignored,
            "region names are compared without case although the instruction asks for them as written"),
    planted(KIND, FAILURE, "invoices-unique-sorted", domains.invoice_ids, listing_ignored,
            "duplicates and order are not checked although the list must be unique and ascending"),
    planted(KIND, FAILURE, "overtime-limit", domains.weekly_overtime, limit_ignored,
            "weeks at or under the limit may be listed"),
    planted(KIND, FAILURE, "toc-anchor-convention", domains.markdown_toc, anchor_convention_ignored,
            "anchors are compared after lowercasing and hyphenating, so titles pass as anchors"),
    planted(KIND, FAILURE, "inventory-negative-counts", domains.inventory_dedupe, negative_rule_ignored,
            "rows of SKUs with a negative count are not graded, so the drop rule is never checked"),
    planted(KIND, FAILURE, "config-change-nothing-else", domains.service_config, rest_of_file_ignored,
            "the other settings are never compared with the shipped file"),
    planted(KIND, FAILURE, "git-full-commit-id", domains.git_retries, full_id_ignored,
            "any prefix of the commit id of 4+ characters passes where the full id is required"),
]  # fmt: skip
