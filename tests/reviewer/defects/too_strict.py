"""Verifiers that reject valid answers: exact bytes, key order, float spelling, a trailing
newline, one way of solving where the instruction allows others (too strict). Where the
instruction allows another answer, ``solution/alternatives/`` holds a valid one."""

from __future__ import annotations

from tests.reviewer import handmade
from tests.reviewer.defects import domains
from tests.reviewer.defects.draft import Draft, replaced, solve_sh
from tests.reviewer.defects.library import LibraryTask, planted

KIND = "rejects-valid"
FAILURE = "too_strict"


def exact_bytes(draft: Draft) -> None:
    draft.checks = {
        "ranking": draft.checks["ranking"],
        "exact_report": """
def exact_report():
    want = {
        "regions": [{"region": r["region"], "revenue": r["revenue"], "orders": r["orders"]} for r in EXPECTED["regions"]],
        "grand_total": EXPECTED["grand_total"],
    }
    with open(app_path("out/region_totals.json"), encoding="utf-8") as handle:
        return handle.read() == json.dumps(want, indent=2)
""",
    }


def key_order(draft: Draft) -> None:
    draft.checks["field_order"] = """
def field_order():
    return list(read_json("report.json")) == ["requests", "status_counts", "top_paths", "error_rate"]
"""


TWO_DECIMALS_PY = """import json

with open("out/overtime.json") as handle:
    report = json.load(handle)
rows = ",\\n".join(
    f'    {{"name": {json.dumps(e["name"])}, "week": {json.dumps(e["week"])}, "overtime": {e["overtime"]:.2f}}}'
    for e in report["employees"]
)
with open("out/overtime.json", "w") as handle:
    handle.write(f'{{\\n  "limit": {report["limit"]},\\n  "employees": [\\n{rows}\\n  ]\\n}}\\n')
"""


def float_spelling(draft: Draft) -> None:
    draft.checks["overtime_hours"] = """
def overtime_hours():
    with open(app_path("out/overtime.json"), encoding="utf-8") as handle:
        text = handle.read()
    return all(
        re.search('"overtime": ' + re.escape(repr(e["overtime"])) + r"(?![0-9])", text) for e in EXPECTED["employees"]
    )
"""
    draft.solution["two_decimals.py"] = TWO_DECIMALS_PY
    draft.solution["alternatives/two-decimals.sh"] = solve_sh(
        "python3 /solution/solve.py", "python3 /solution/two_decimals.py"
    )


def final_newline(draft: Draft) -> None:
    draft.checks["listing"] = """
def listing():
    with open(app_path("out/invoices.txt"), encoding="utf-8") as handle:
        return handle.read() == "".join(f"{number}\\n" for number in EXPECTED["invoices"])
"""


CONFIGPARSER_PY = """import configparser
import json
import os
from urllib.parse import urlsplit

parser = configparser.ConfigParser(interpolation=None)
parser.read("service.ini")
changed = []


def put(section, key, value):
    if parser[section].get(key) != value:
        parser[section][key] = value
        changed.append(f"{section}.{key}")


put("server", "port", str(urlsplit(parser["deploy"]["public_url"]).port))
put("server", "workers", str(2 * int(parser["deploy"]["cpus"])))
timeout = parser["database"]["timeout_s"]
if not (timeout.isdigit() and int(timeout) > 0):
    put("database", "timeout_s", "30")
with open("service.ini", "w") as handle:
    parser.write(handle)
os.makedirs("out", exist_ok=True)
with open("out/changes.json", "w") as handle:
    json.dump(sorted(changed), handle)
"""


def repaired_ini() -> str:
    text = domains.SERVICE_INI
    for old, new in (
        ("port = 80443", "port = 8443"),
        ("workers = 0", "workers = 8"),
        ("timeout_s = -5", "timeout_s = 30"),
    ):
        text = replaced(text, old, new)
    return text


def exact_file(draft: Draft) -> None:
    draft.instruction = replaced(
        draft.instruction,
        "Fix it in place so\nthat it follows them, and change nothing else in it.",
        "Fix it in place so\nthat it follows them; every other setting keeps its value.",
    )
    draft.tests["repaired_service.ini"] = repaired_ini()
    draft.checks["untouched"] = """
def untouched():
    with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "repaired_service.ini"), encoding="utf-8") as handle:
        want = handle.read()
    with open(app_path("service.ini"), encoding="utf-8") as handle:
        return handle.read() == want
"""
    draft.solution["rewrite.py"] = CONFIGPARSER_PY
    draft.solution["alternatives/configparser.sh"] = solve_sh("python3 /solution/rewrite.py")


def full_id_only(draft: Draft) -> None:
    draft.instruction = replaced(
        draft.instruction,
        "- `commit`: its full 40-character commit id;",
        "- `commit`: its commit id (the full id, or an abbreviation of at least 7 characters);",
    )
    draft.solution["alternatives/short-id.sh"] = replaced(
        draft.solution["solve.sh"],
        "commit=$(git log -G '^retries:' --format=%H -n 1 -- config.yaml)\n",
        "commit=$(git log -G '^retries:' --format=%h -n 1 -- config.yaml)\n",
    )


SLUGIFY_FINDALL = '''"""URL slugs for article titles."""

import re
import unicodedata


def slugify(title: str) -> str:
    """Lowercase ASCII words joined by single hyphens: "Hello, World!" -> "hello-world"."""
    ascii_title = unicodedata.normalize("NFKD", title).encode("ascii", "ignore").decode("ascii")
    return "-".join(re.findall(r"[a-z0-9]+", ascii_title.lower()))
'''


def reference_text(draft: Draft) -> None:
    draft.tests["reference_slugify.py"] = domains.SLUGIFY_FIXED
    draft.checks["matches_reference"] = """
def matches_reference():
    with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "reference_slugify.py"), encoding="utf-8") as handle:
        want = handle.read()
    with open(app_path("slugify.py"), encoding="utf-8") as handle:
        return handle.read() == want
"""
    draft.solution["findall/slugify.py"] = SLUGIFY_FINDALL
    draft.solution["alternatives/findall.sh"] = solve_sh("cp /solution/findall/slugify.py /app/slugify.py")


TASKS = [
    LibraryTask(f"{KIND}/ledger-exact-bytes", KIND, FAILURE,
                "the answer must be byte-identical to json.dumps of the expected object",
                lambda root: handmade.write_task(root, handmade.rejects_valid_alternative)),
    planted(KIND, FAILURE, "sales-exact-bytes", domains.sales_by_region, exact_bytes,
            "the report must be byte-identical to the reference's two-space indentation"),
    planted(KIND, FAILURE, "access-log-key-order", domains.access_log_report, key_order,
            "the report's keys must come in the instruction's order"),
    planted(KIND, FAILURE, "overtime-float-spelling", domains.weekly_overtime, float_spelling,
            "hours are matched as text, so 6.50 fails where 6.5 passes"),
    planted(KIND, FAILURE, "invoices-final-newline", domains.invoice_ids, final_newline,
            "the list must end with exactly one newline"),
    planted(KIND, FAILURE, "config-exact-file", domains.service_config, exact_file,
            "the repaired file must match the reference byte for byte, comments and layout included"),
    planted(KIND, FAILURE, "git-full-id-only", domains.git_retries, full_id_only,
            "only the full commit id passes although the instruction allows an abbreviation"),
    planted(KIND, FAILURE, "slugify-reference-text", domains.slugify_fix, reference_text,
            "slugify.py must be the reference fix character for character"),
]  # fmt: skip
