"""The answer can be read: in the instruction, in a workspace file, in the skill (leakage)."""

from __future__ import annotations

import json

from tests.reviewer import handmade
from tests.reviewer.defects import domains
from tests.reviewer.defects.draft import Draft
from tests.reviewer.defects.library import LibraryTask, planted

KIND = "leaked-answer"
FAILURE = "leakage"


def example_is_the_answer(draft: Draft) -> None:
    example = json.dumps(domains.sales_report(), indent=2)
    draft.instruction += f"\nA finished report looks like this:\n\n```json\n{example}\n```\n"


def skill_example_is_the_answer(draft: Draft) -> None:
    listing = "\n".join(domains.invoice_numbers())
    draft.skills["invoice-ids/SKILL.md"] += (
        f"\n## Worked example\n\nFor last March's inbox the list came out as:\n\n```\n{listing}\n```\n"
    )


def previous_report(draft: Draft) -> None:
    draft.workspace["reports/2024-03-12.json"] = json.dumps(domains.access_report(), indent=1) + "\n"


def answer_in_prose(draft: Draft) -> None:
    draft.instruction += (
        "\nPayroll already flagged Dana (6.5 h) and Eli (2 h) in week 10, and Eli (2.25 h) and Gus (3.5 h)"
        " in week 11; your file should agree.\n"
    )


def commit_in_hint(draft: Draft) -> None:
    commit = draft.expected["commit"]
    draft.instruction += f"\nOps believe it was `{commit[:10]}`, but check.\n"


TASKS = [
    LibraryTask(f"{KIND}/ledger-answer-file", KIND, FAILURE,
                "the workspace ships the expected answer as notes/expected_total.json",
                lambda root: handmade.write_task(root, handmade.leaked_answer_in_workspace)),
    LibraryTask(f"{KIND}/ledger-answer-in-instruction", KIND, FAILURE,
                "the instruction quotes the correct answer file",
                lambda root: handmade.write_task(root, handmade.leaked_answer_in_instruction)),
    planted(KIND, FAILURE, "sales-example-is-the-answer", domains.sales_by_region, example_is_the_answer,
            "the instruction's example report is the answer"),
    planted(KIND, FAILURE, "invoices-skill-example", domains.invoice_ids, skill_example_is_the_answer,
            "the skill's worked example lists this inbox's invoice numbers"),
    planted(KIND, FAILURE, "access-log-previous-report", domains.access_log_report, previous_report,
            "a 'previous' report in the workspace is this log's report"),
    planted(KIND, FAILURE, "overtime-answer-in-prose", domains.weekly_overtime, answer_in_prose,
            "the instruction names every employee-week over the limit and its overtime"),
    planted(KIND, FAILURE, "git-commit-in-hint", domains.git_retries, commit_in_hint,
            "the instruction hints the commit id"),
]  # fmt: skip
