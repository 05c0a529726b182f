"""Verifiers that the untouched workspace already satisfies (caught as too lax: v(x0) = 1)."""

from __future__ import annotations

import json

from tests.reviewer import handmade
from tests.reviewer.defects import domains
from tests.reviewer.defects.draft import Draft, replaced
from tests.reviewer.defects.library import LibraryTask, planted

KIND = "passes-untouched"
FAILURE = "too_lax"


def loose_ranges(draft: Draft) -> None:
    draft.checks = {
        "repaired": """
def repaired():
    got = settings(app_path("service.ini"))
    return 0 < int(got["server.port"]) < 100000 and int(got["server.workers"]) >= 0 and int(got["database.timeout_s"]) != 0
""",
        "untouched": domains.CONFIG_CHECKS["untouched"],
    }


def titles_miss_the_bug(draft: Draft) -> None:
    titles = ["Release", "Changelog", "Crème", "v2"]
    draft.expected = {"cases": [[title, domains.reference_slug(title)] for title in titles]}
    draft.checks = {"hidden_titles": domains.SLUGIFY_CHECKS["hidden_titles"]}


def header_stub(draft: Draft) -> None:
    draft.workspace["out/inventory_clean.csv"] = "sku,name,qty,updated\n"
    draft.instruction = replaced(
        draft.instruction,
        "write the result to `/app/out/inventory_clean.csv`",
        "write the result to `/app/out/inventory_clean.csv` (it already holds the header)",
    )
    draft.checks["records"] = """
def records():
    rows = cleaned()[1]
    return all(row in EXPECTED["rows"] for row in rows)
"""


def placeholder_answer(draft: Draft) -> None:
    draft.workspace["out/answer.json"] = json.dumps({"commit": "", "author": "", "files_changed": []}, indent=2)
    draft.instruction = replaced(
        draft.instruction, "and write `/app/out/answer.json`:", "and fill in `/app/out/answer.json`:"
    )
    draft.checks = {
        "answer_shape": """
def answer_shape():
    got = read_json("out/answer.json")
    return isinstance(got["commit"], str) and isinstance(got["author"], str) and isinstance(got["files_changed"], list)
""",
    }


TASKS = [
    LibraryTask(f"{KIND}/ledger-missing-output-passes", KIND, FAILURE,
                "the verifier writes reward 1 when the answer file does not exist",
                lambda root: handmade.write_task(root, handmade.passes_initial_state)),
    planted(KIND, FAILURE, "config-loose-ranges", domains.service_config, loose_ranges,
            "the file is edited in place and the range checks already hold for the broken values"),
    planted(KIND, FAILURE, "slugify-titles-miss-the-bug", domains.slugify_fix, titles_miss_the_bug,
            "the hidden titles have no punctuation or spaces, so the buggy slugify already passes them"),
    planted(KIND, FAILURE, "inventory-header-stub", domains.inventory_dedupe, header_stub,
            "the shipped header-only stub passes a check that only the rows present are right"),
    planted(KIND, FAILURE, "git-placeholder-answer", domains.git_retries, placeholder_answer,
            "the shipped placeholder answer passes a check of key names and types"),
]  # fmt: skip
