"""The solution or the verifier can be reached from the agent's side, or the answer follows
trivially from a file it is given (leakage)."""

from __future__ import annotations

import difflib
import json

from tests.reviewer import handmade
from tests.reviewer.defects import domains
from tests.reviewer.defects.draft import Draft
from tests.reviewer.defects.library import LibraryTask, planted

KIND = "reachable-solution"
FAILURE = "leakage"


def image_copies_solution(draft: Draft) -> None:
    draft.dockerfile += "COPY solution/ /opt/reference/\n"


def verifier_in_workspace(draft: Draft) -> None:
    draft.workspace["tools/check_settings.py"] = draft.verify_py()
    draft.instruction += "\n`/app/tools/check_settings.py` checks your work.\n"


def make_target_runs_tests(draft: Draft) -> None:
    draft.workspace["Makefile"] = "check:\n\tcd /app && python3 /tests/verify.py\n"


def solution_script_shipped(draft: Draft) -> None:
    draft.workspace["scripts/build_toc.py"] = domains.TOC_SOLVE_PY


def cached_result(draft: Draft) -> None:
    draft.workspace["cache/daily.json"] = json.dumps(domains.daily_stats(), indent=2) + "\n"


def fix_as_patch(draft: Draft) -> None:
    diff = difflib.unified_diff(
        domains.SLUGIFY_BUGGY.splitlines(keepends=True),
        domains.SLUGIFY_FIXED.splitlines(keepends=True),
        "a/slugify.py",
        "b/slugify.py",
    )
    draft.workspace["patches/0001-slug-separators.diff"] = "".join(diff)


TASKS = [
    LibraryTask(f"{KIND}/ledger-instruction-points-at-solution", KIND, FAILURE,
                "the instruction tells the agent to run /solution/solve.sh",
                lambda root: handmade.write_task(root, handmade.solution_reachable)),
    planted(KIND, FAILURE, "sales-image-copies-solution", domains.sales_by_region, image_copies_solution,
            "the Dockerfile copies solution/ into the agent's image"),
    planted(KIND, FAILURE, "config-verifier-in-workspace", domains.service_config, verifier_in_workspace,
            "a copy of the verifier ships in the workspace"),
    planted(KIND, FAILURE, "inventory-make-target", domains.inventory_dedupe, make_target_runs_tests,
            "a Makefile target in the workspace runs /tests/verify.py"),
    planted(KIND, FAILURE, "toc-solution-script", domains.markdown_toc, solution_script_shipped,
            "the reference solution ships in the workspace as scripts/build_toc.py"),
    planted(KIND, FAILURE, "sensor-cached-result", domains.sensor_daily, cached_result,
            "a cache file in the workspace holds the finished statistics"),
    planted(KIND, FAILURE, "slugify-fix-as-patch", domains.slugify_fix, fix_as_patch,
            "the fix ships in the workspace as a patch"),
]  # fmt: skip
