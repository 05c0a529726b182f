"""Verifiers that run past their time limit: waiting on agent code with no budget, on a marker
nothing writes, or sleeping longer than the limit (a checker error)."""

from __future__ import annotations

from tests.reviewer.defects import domains
from tests.reviewer.defects.draft import BUILDER_TEST_SH, Draft, replaced
from tests.reviewer.defects.library import planted

KIND = "verifier-timeout"
FAILURE = "checker_error"
VERIFIER_TIMEOUT_S = 3

SLUGIFY_LOOPING = '''"""URL slugs for article titles."""

import re
import unicodedata


def slugify(title: str) -> str:
    """Lowercase ASCII words joined by single hyphens: "Hello, World!" -> "hello-world"."""
    text = unicodedata.normalize("NFKD", title).encode("ascii", "ignore").decode("ascii")
    text = re.sub(r"[^a-z0-9]", "-", text.lower())
    while "--" in text:
        text.replace("--", "-")
    return text.strip("-")
'''


def no_budget_for_agent_code(draft: Draft) -> None:
    draft.workspace["slugify.py"] = SLUGIFY_LOOPING
    draft.prelude = replaced(draft.prelude, "timeout=20)", "timeout=600)")
    draft.checks["shipped_tests"] = replaced(draft.checks["shipped_tests"], "timeout=30)", "timeout=600)")
    draft.verifier_timeout_s = VERIFIER_TIMEOUT_S


def waits_for_marker(draft: Draft) -> None:
    draft.prelude = """
import time

# the export job writes this marker once the report is complete
while not os.path.exists(app_path("out/.done")):
    time.sleep(0.2)
"""
    draft.verifier_timeout_s = VERIFIER_TIMEOUT_S


def settle_sleep(draft: Draft) -> None:
    draft.tests["test.sh"] = replaced(
        BUILDER_TEST_SH, "python3 /tests/verify.py\n", "sleep 5  # let late writes settle\npython3 /tests/verify.py\n"
    )
    draft.verifier_timeout_s = VERIFIER_TIMEOUT_S


TASKS = [
    planted(KIND, FAILURE, "slugify-no-budget-for-agent-code", domains.slugify_fix, no_budget_for_agent_code,
            "the shipped slugify loops forever and the verifier gives agent code 600 s inside a 3 s limit"),
    planted(KIND, FAILURE, "sales-waits-for-marker", domains.sales_by_region, waits_for_marker,
            "the verifier waits for a completion marker that nothing writes"),
    planted(KIND, FAILURE, "sensor-settle-sleep", domains.sensor_daily, settle_sleep,
            "test.sh sleeps 5 s inside a 3 s verifier limit"),
]  # fmt: skip
