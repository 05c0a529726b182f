"""Checks weakened where the item's score hides them, and text values compared loosely (too
lax): a composite item one of whose checks accepts anything, and identifiers or anchors the
spec asks for exactly but the verifier compares by prefix or without separators. A sound
composite item sits beside them among the good tasks."""

from __future__ import annotations

from pathlib import Path

from skillgym_core.contracts.task import TaskDir

from tests.reviewer.defects import domains
from tests.reviewer.defects.draft import Draft
from tests.reviewer.defects.library import GOOD, LibraryTask, planted

KIND = "weakened-check"
FAILURE = "too_lax"


def _composite_report(draft: Draft, top_paths: str) -> None:
    """The access report graded as one item, the share of its four checks."""
    checks = dict(draft.checks)
    checks["top_paths"] = top_paths
    draft.prelude = "\n\n".join(source.strip("\n") for source in checks.values())
    draft.checks = {"report": """
def report():
    return share("report", [("requests", requests), ("status_counts", status_counts),
                            ("top_paths", top_paths), ("error_rate", error_rate)])
"""}


def top_paths_any_list(draft: Draft) -> None:
    _composite_report(draft, """
def top_paths():
    return isinstance(read_json("report.json")["top_paths"], list)
""")


def sound_composite(draft: Draft) -> None:
    _composite_report(draft, draft.checks["top_paths"])


def invoices_by_prefix(draft: Draft) -> None:
    draft.checks["invoices"] = """
def invoices():
    # numbers are long; the year part identifies the batch
    return {n[:8] for n in read_lines("out/invoices.txt")} == {n[:8] for n in EXPECTED["invoices"]}
"""


def anchors_loosely(draft: Draft) -> None:
    draft.checks["anchors"] = """
def anchors():
    loose = lambda anchor: re.sub(r"[-_ ]", "", str(anchor))
    return [loose(e["anchor"]) for e in read_json("toc.json")] == [loose(e["anchor"]) for e in EXPECTED]
"""


TASKS = [
    planted(KIND, FAILURE, "access-composite-top-paths-any-list", domains.access_log_report, top_paths_any_list,
            "inside the one composite item, the top paths only have to be a list"),
    planted(KIND, FAILURE, "invoices-by-prefix", domains.invoice_ids, invoices_by_prefix,
            "invoice numbers are compared by their first eight characters"),
    planted(KIND, FAILURE, "toc-anchors-loosely", domains.markdown_toc, anchors_loosely,
            "anchors are compared without their separators although the skill fixes them"),
]  # fmt: skip



def _sound_composite_task(root: Path) -> TaskDir:
    draft = domains.access_log_report()
    sound_composite(draft)
    return draft.write(root)


GOOD_TASKS = [LibraryTask(f"{GOOD}/access-composite", GOOD, None, "", _sound_composite_task)]
