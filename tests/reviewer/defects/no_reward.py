"""Verifiers that leave no usable reward: a crash, a wrong path, a missing script, a rubric
item without a check (a checker error)."""

from __future__ import annotations

import json

from tests.reviewer import handmade
from tests.reviewer.defects import domains
from tests.reviewer.defects.draft import BUILDER_TEST_SH, Draft, replaced
from tests.reviewer.defects.library import LibraryTask, planted

KIND = "no-reward"
FAILURE = "checker_error"


def logs_dir_typo(draft: Draft) -> None:
    draft.tests["test.sh"] = replaced(
        BUILDER_TEST_SH,
        "mkdir -p /logs/verifier\n",
        "mkdir -p /logs/verifier\nexport SKILLGYM_VERIFIER_LOGS=/logs/verifiers\n",
    )


def missing_script(draft: Draft) -> None:
    draft.tests["test.sh"] = (
        "#!/usr/bin/env bash\nmkdir -p /logs/verifier\ncd /app\npython3 /tests/verify_invoices.py\n"
    )


def rubric_out_of_sync(draft: Draft) -> None:
    rubric = [*draft.rubric(), {"name": "anchors_unique", "weight": 0.0, "kind": "programmatic"}]
    weight = 1 / len(rubric)
    draft.tests["rubric.json"] = json.dumps([{**item, "weight": weight} for item in rubric], indent=2) + "\n"


TASKS = [
    LibraryTask(f"{KIND}/ledger-no-reward-file", KIND, FAILURE,
                "test.sh never writes a reward file",
                lambda root: handmade.write_task(root, handmade.no_reward_file)),
    LibraryTask(f"{KIND}/ledger-crashing-checker", KIND, FAILURE,
                "the checker crashes before it writes a reward",
                lambda root: handmade.write_task(root, handmade.crashing_checker)),
    planted(KIND, FAILURE, "sales-logs-dir-typo", domains.sales_by_region, logs_dir_typo,
            "the rubric runner is pointed at /logs/verifiers, so only the fallback reward 0 reaches /logs/verifier"),
    planted(KIND, FAILURE, "invoices-missing-script", domains.invoice_ids, missing_script,
            "test.sh runs a verifier script that does not exist"),
    planted(KIND, FAILURE, "toc-rubric-out-of-sync", domains.markdown_toc, rubric_out_of_sync,
            "rubric.json lists an item the verifier has no check for, so the runner stops before writing"),
]  # fmt: skip
