"""Verifiers that pass whatever the agent leaves behind (caught as too lax: the untouched
workspace passes)."""

from __future__ import annotations

from tests.reviewer import handmade
from tests.reviewer.defects import domains
from tests.reviewer.defects.draft import BUILDER_TEST_SH, Draft, replaced
from tests.reviewer.defects.library import LibraryTask, planted

KIND = "always-pass"
FAILURE = "too_lax"

STATUS_OF_ECHO_SH = """#!/usr/bin/env bash
mkdir -p /logs/verifier
python3 -c 'import json; print("\\n".join(json.load(open("/tests/expected.json"))["invoices"]))' > /tmp/expected.txt
diff -q /tmp/expected.txt /app/out/invoices.txt > /dev/null 2>&1
echo "diff exit status: $?"
if [ $? -eq 0 ]; then
  echo 1 > /logs/verifier/reward.txt
else
  echo 0 > /logs/verifier/reward.txt
fi
"""


def status_of_echo(draft: Draft) -> None:
    draft.tests["test.sh"] = STATUS_OF_ECHO_SH


def tests_ran_means_passed(draft: Draft) -> None:
    draft.checks = {
        "shipped_tests": """
def shipped_tests():
    done = run_untrusted([sys.executable, "-m", "unittest", "discover", "-s", APP, "-p", "test_*.py"], timeout=30)
    return done.returncode in (0, 1)  # 0: all passed, 1: failures reported
""",
    }


def asserts_under_optimize(draft: Draft) -> None:
    draft.tests["test.sh"] = replaced(BUILDER_TEST_SH, "python3 /tests/verify.py", "python3 -O /tests/verify.py")
    draft.prelude = """
def same_statistics(got):
    return {s: sorted(d) for s, d in got.items()} == {s: sorted(d) for s, d in EXPECTED.items()} and all(
        close(got[sensor][day][key], stats[key]) for sensor, days in EXPECTED.items()
        for day, stats in days.items() for key in stats
    )
"""
    draft.checks = {
        "daily": """
def daily():
    assert os.path.isfile(app_path("out/daily.json")), "out/daily.json is missing"
    assert same_statistics(read_json("out/daily.json")), "the statistics differ"
    return True
""",
    }


PIPELINE_SH = """#!/usr/bin/env bash
mkdir -p /logs/verifier
cd /app
python3 /tests/verify.py | tee /logs/verifier/verify.log
if [ $? -eq 0 ]; then
  echo 1 > /logs/verifier/reward.txt
else
  echo 0 > /logs/verifier/reward.txt
fi
"""

PIPELINE_VERIFY_PY = '''"""Exit 0 when service.ini is repaired and nothing else changed."""

import configparser
import json
import sys


def settings(path):
    parser = configparser.ConfigParser(interpolation=None)
    parser.read(path)
    return {f"{s}.{k}": v for s in parser.sections() for k, v in parser.items(s)}


expected = json.load(open("/tests/expected.json"))
got = settings("/app/service.ini")
baseline = settings("/tests/baseline.ini")
problems = [key for key, value in expected["repaired"].items() if got.get(key) != value]
problems += [key for key, value in baseline.items() if key not in expected["repaired"] and got.get(key) != value]
try:
    if json.load(open("/app/out/changes.json")) != expected["changes"]:
        problems.append("changes.json")
except (OSError, ValueError):
    problems.append("changes.json")
print("problems:", problems)
sys.exit(1 if problems else 0)
'''


def status_of_tee(draft: Draft) -> None:
    draft.tests["test.sh"] = PIPELINE_SH
    draft.tests["verify.py"] = PIPELINE_VERIFY_PY


TASKS = [
    LibraryTask(f"{KIND}/ledger-overwritten-reward", KIND, FAILURE,
                "test.sh writes reward 1 whatever the checker found",
                lambda root: handmade.write_task(root, handmade.always_pass)),
    planted(KIND, FAILURE, "invoices-status-of-echo", domains.invoice_ids, status_of_echo,
            "test.sh tests $? after an echo, so the diff's status is never seen"),
    planted(KIND, FAILURE, "slugify-tests-ran", domains.slugify_fix, tests_ran_means_passed,
            "the verifier counts 'the tests ran' (exit 0 or 1) as 'the tests passed'"),
    planted(KIND, FAILURE, "sensor-asserts-optimized-away", domains.sensor_daily, asserts_under_optimize,
            "the checks are assert statements and test.sh runs python3 -O, which strips them"),
    planted(KIND, FAILURE, "config-status-of-tee", domains.service_config, status_of_tee,
            "test.sh reads the exit status of tee, not of the verifier piped into it"),
]  # fmt: skip
