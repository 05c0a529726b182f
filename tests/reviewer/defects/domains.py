"""Ten sound tasks from different domains, each with a skill, its inputs protected, a reference
solution and a strong verifier that compares exact values computed when the task is built.

Defects are planted into copies of these drafts (and into the ledger task of
:mod:`tests.reviewer.handmade`)."""

from __future__ import annotations

import csv
import io
import json
import os
import re
import shutil
import subprocess
import tempfile
import unicodedata
from collections import Counter, defaultdict
from datetime import date
from decimal import ROUND_HALF_UP, Decimal
from pathlib import Path

from tests.reviewer.defects.draft import Draft, solve_sh


def _cents(value: Decimal) -> float:
    return float(value.quantize(Decimal("0.01"), rounding=ROUND_HALF_UP))


# --- CSV aggregates: revenue per region ---------------------------------------------------------

SALES_CSV = """order_id,region,product,units,unit_price,status
1001,north,widget,4,12.50,ok
1002,south,gadget,2,30.00,ok
1003,north,gizmo,1,99.99,void
1004,east,widget,10,12.50,ok
1005,south,widget,3,12.50,ok
1006,west,gizmo,2,99.99,ok
1007,east,gadget,1,30.00,void
1008,north,gadget,5,30.00,ok
1009,west,widget,6,12.50,ok
1010,east,gizmo,1,99.99,ok
1011,south,gizmo,1,99.99,ok
1012,north,widget,2,12.50,ok
"""

SALES_SKILL = """---
name: sales-ledger
description: Summarise order exports from the shop's ledger.
---

# Sales ledger

- An order's revenue is `units * unit_price`.
- Orders with status `void` were cancelled: they count nowhere, neither in revenue nor in
  order counts.
- Sum exact amounts and round to cents only at the end.
- Rank regions by revenue, highest first; equal revenues rank alphabetically by region.
"""

SALES_INSTRUCTION = """# Revenue by region

`/app/sales.csv` is this month's order export. Using the sales-ledger skill, write
`/app/out/region_totals.json`: a JSON object with

- `regions`: a list with one object per region, `{"region": ..., "revenue": ..., "orders": ...}`
  (revenue in currency units rounded to cents, orders = number of counted orders), ranked by
  revenue, highest first;
- `grand_total`: the revenue of all regions together, rounded to cents.

Do not modify `/app/sales.csv`.
"""

SALES_SOLVE_PY = """import csv
import json
import os
from collections import defaultdict
from decimal import Decimal

revenue, orders = defaultdict(Decimal), defaultdict(int)
with open("sales.csv", newline="") as handle:
    for row in csv.DictReader(handle):
        if row["status"] == "void":
            continue
        revenue[row["region"]] += int(row["units"]) * Decimal(row["unit_price"])
        orders[row["region"]] += 1
ranked = sorted(revenue, key=lambda region: (-revenue[region], region))
report = {
    "regions": [{"region": r, "revenue": float(round(revenue[r], 2)), "orders": orders[r]} for r in ranked],
    "grand_total": float(round(sum(revenue.values()), 2)),
}
os.makedirs("out", exist_ok=True)
with open("out/region_totals.json", "w") as handle:
    json.dump(report, handle, indent=2)
"""

SALES_CHECKS = {
    "ranking": """
def ranking():
    got = read_json("out/region_totals.json")["regions"]
    return [row["region"] for row in got] == [row["region"] for row in EXPECTED["regions"]]
""",
    "region_figures": """
def region_figures():
    got = {row["region"]: row for row in read_json("out/region_totals.json")["regions"]}
    if set(got) != {row["region"] for row in EXPECTED["regions"]}:
        return False
    return all(
        close(got[want["region"]]["revenue"], want["revenue"]) and number(got[want["region"]]["orders"]) == want["orders"]
        for want in EXPECTED["regions"]
    )
""",
    "grand_total": """
def grand_total():
    return close(read_json("out/region_totals.json")["grand_total"], EXPECTED["grand_total"])
""",
}


def sales_report(rows_csv: str = SALES_CSV) -> dict[str, object]:
    revenue: dict[str, Decimal] = defaultdict(Decimal)
    orders: Counter[str] = Counter()
    for row in csv.DictReader(io.StringIO(rows_csv)):
        if row["status"] != "void":
            revenue[row["region"]] += int(row["units"]) * Decimal(row["unit_price"])
            orders[row["region"]] += 1
    ranked = sorted(revenue, key=lambda region: (-revenue[region], region))
    return {
        "regions": [{"region": r, "revenue": _cents(revenue[r]), "orders": orders[r]} for r in ranked],
        "grand_total": _cents(sum(revenue.values(), Decimal(0))),
    }


def sales_by_region() -> Draft:
    return Draft(
        slug="sales-by-region",
        skill_name="sales-ledger",
        instruction=SALES_INSTRUCTION,
        workspace={"sales.csv": SALES_CSV},
        skills={"sales-ledger/SKILL.md": SALES_SKILL},
        solution={"solve.sh": solve_sh("python3 /solution/solve.py"), "solve.py": SALES_SOLVE_PY},
        expected=sales_report(),
        checks=dict(SALES_CHECKS),
        protected=["sales.csv"],
    )


def sales_by_region_as_written() -> Draft:
    """The same report where the instruction makes the regions' spelling part of the answer."""
    draft = sales_by_region()
    draft.slug = "sales-by-region-as-written"
    draft.instruction = draft.instruction.replace(
        "Do not modify", "Write each region's name exactly as it appears in the CSV, letter case included.\n\nDo not modify")
    return draft


# --- JSON report from an access log ---------------------------------------------------------------

ACCESS_REQUESTS = [
    ("/search", 200), ("/healthz", 200), ("/cart", 200), ("/login", 200), ("/search", 200),
    ("/api/items", 200), ("/login", 401), ("/healthz", 200), ("/cart", 200), ("/search", 500),
    ("/checkout", 200), ("/login", 200), ("/api/items", 404), ("/search", 200), ("/healthz", 503),
    ("/cart", 200), ("/login", 200), ("/checkout", 502), ("/search", 200), ("/api/items", 200),
    ("/cart", 404), ("/healthz", 200),
]  # fmt: skip


def access_log(requests: list[tuple[str, int]] = ACCESS_REQUESTS) -> str:
    lines = []
    for index, (path, status) in enumerate(requests):
        client = f"203.0.113.{10 + index % 7}"
        size = 200 + 37 * index
        lines.append(
            f'{client} - - [12/Mar/2024:10:{index // 6:02d}:{index * 7 % 60:02d} +0000] "GET {path} HTTP/1.1" {status} {size}'
        )
    return "\n".join(lines) + "\n"


def access_report(requests: list[tuple[str, int]] = ACCESS_REQUESTS) -> dict[str, object]:
    counted = [(path, status) for path, status in requests if path != "/healthz"]
    statuses = Counter(str(status) for _, status in counted)
    paths = Counter(path for path, _ in counted)
    errors = sum(1 for _, status in counted if status >= 400)
    return {
        "requests": len(counted),
        "status_counts": dict(sorted(statuses.items())),
        "top_paths": sorted(paths, key=lambda path: (-paths[path], path))[:3],
        "error_rate": round(errors / len(counted), 4),
    }


ACCESS_SKILL = """---
name: log-triage
description: Read web server access logs in the common log format and summarise traffic.
---

# Log triage

- One request per line: `client - - [time] "METHOD path PROTOCOL" status bytes`.
- `/healthz` requests come from the load balancer's health checks: they are not traffic and are
  left out of every figure.
- An error is any status of 400 or above; the error rate is errors / requests.
- Rank paths by request count; equal counts rank alphabetically.
"""

ACCESS_INSTRUCTION = """# Access log report

Summarise `/app/logs/access.log` with the log-triage skill. Write `/app/report.json`, a JSON
object with:

- `requests`: the number of requests;
- `status_counts`: an object mapping each status code (as a string) to its number of requests;
- `top_paths`: the three most requested paths, most requested first;
- `error_rate`: the share of requests that failed, rounded to 4 decimals.

Do not modify the log.
"""

ACCESS_SOLVE_PY = """import json
import re
from collections import Counter

LINE = re.compile(r'"\\S+ (\\S+) [^"]*" (\\d{3}) ')
statuses, paths, errors, total = Counter(), Counter(), 0, 0
with open("logs/access.log") as handle:
    for line in handle:
        match = LINE.search(line)
        if not match or match.group(1) == "/healthz":
            continue
        path, status = match.group(1), int(match.group(2))
        total += 1
        statuses[str(status)] += 1
        paths[path] += 1
        errors += status >= 400
report = {
    "requests": total,
    "status_counts": dict(sorted(statuses.items())),
    "top_paths": sorted(paths, key=lambda p: (-paths[p], p))[:3],
    "error_rate": round(errors / total, 4),
}
with open("report.json", "w") as handle:
    json.dump(report, handle, indent=2)
"""

ACCESS_CHECKS = {
    "requests": """
def requests():
    return number(read_json("report.json")["requests"]) == EXPECTED["requests"]
""",
    "status_counts": """
def status_counts():
    got = read_json("report.json")["status_counts"]
    return {str(code): number(count) for code, count in got.items()} == EXPECTED["status_counts"]
""",
    "top_paths": """
def top_paths():
    return read_json("report.json")["top_paths"] == EXPECTED["top_paths"]
""",
    "error_rate": """
def error_rate():
    return close(read_json("report.json")["error_rate"], EXPECTED["error_rate"], 0.00005)
""",
}


def access_log_report() -> Draft:
    return Draft(
        slug="access-log-report",
        skill_name="log-triage",
        instruction=ACCESS_INSTRUCTION,
        workspace={"logs/access.log": access_log()},
        skills={"log-triage/SKILL.md": ACCESS_SKILL},
        solution={"solve.sh": solve_sh("python3 /solution/solve.py"), "solve.py": ACCESS_SOLVE_PY},
        expected=access_report(),
        checks=dict(ACCESS_CHECKS),
        protected=["logs/access.log"],
    )


# --- config repair (INI) -----------------------------------------------------------------------------

SERVICE_INI = """# Payments API: service settings
[server]
host = 0.0.0.0
port = 80443
workers = 0

[database]
url = postgres://db.internal:5432/payments
pool_size = 10
timeout_s = -5

[deploy]
public_url = https://payments.internal:8443
cpus = 4

[logging]
level = info
format = json
"""

CONFIG_SKILL = """---
name: service-config
description: House rules for the INI settings files of our services.
---

# Service configuration rules

- `[server] port` must be the port of `[deploy] public_url`.
- `[server] workers` is twice `[deploy] cpus`.
- `[database] timeout_s` is a positive whole number of seconds; when it is not, the default
  is 30.
- Repair only what breaks a rule; every other setting, comment and line stays as it is.
"""

CONFIG_INSTRUCTION = """# Repair the service settings

`/app/service.ini` breaks some of the rules in the service-config skill. Fix it in place so
that it follows them, and change nothing else in it. Then write `/app/out/changes.json`: a JSON
list of the settings you changed, each written as `section.key`, sorted alphabetically.
"""

CONFIG_SOLVE_PY = """import configparser
import json
import os
import re
from urllib.parse import urlsplit

parser = configparser.ConfigParser(interpolation=None)
parser.read("service.ini")
wanted = {
    ("server", "port"): str(urlsplit(parser["deploy"]["public_url"]).port),
    ("server", "workers"): str(2 * int(parser["deploy"]["cpus"])),
}
timeout = parser["database"]["timeout_s"]
if not (timeout.isdigit() and int(timeout) > 0):
    wanted[("database", "timeout_s")] = "30"
fixes = {key: value for key, value in wanted.items() if parser[key[0]].get(key[1]) != value}

lines, section = [], None
with open("service.ini") as handle:
    for line in handle.read().splitlines():
        header = re.match(r"\\s*\\[(.+)\\]\\s*$", line)
        if header:
            section = header.group(1)
        elif "=" in line and (section, line.split("=", 1)[0].strip()) in fixes:
            key = line.split("=", 1)[0].strip()
            line = f"{key} = {fixes[(section, key)]}"
        lines.append(line)
with open("service.ini", "w") as handle:
    handle.write("\\n".join(lines) + "\\n")
os.makedirs("out", exist_ok=True)
with open("out/changes.json", "w") as handle:
    json.dump(sorted(f"{section}.{key}" for section, key in fixes), handle)
"""

CONFIG_PRELUDE = '''
import configparser

# the settings file as shipped; its first line only says so
BASELINE_PATH = os.path.join(os.path.dirname(os.path.abspath(__file__)), "baseline.ini")


def settings(path):
    parser = configparser.ConfigParser(interpolation=None)
    with open(path, encoding="utf-8") as handle:
        parser.read_file(handle)
    return {f"{section}.{key}": value for section in parser.sections() for key, value in parser.items(section)}


def other_lines(path):
    """The file's lines except those setting a repaired key, without trailing spaces or blank lines."""
    lines, section = [], None
    with open(path, encoding="utf-8") as handle:
        for line in handle.read().splitlines():
            header = re.match(r"\\s*\\[(.+)\\]\\s*$", line)
            if header:
                section = header.group(1).strip()
            elif "=" in line and f"{section}.{line.split('=', 1)[0].strip()}" in EXPECTED["repaired"]:
                continue
            lines.append(line.rstrip())
    while lines and not lines[-1]:
        lines.pop()
    return lines


BASELINE = settings(BASELINE_PATH)
BASELINE_LINES = other_lines(BASELINE_PATH)[1:]
'''

CONFIG_CHECKS = {
    "repaired": """
def repaired():
    got = settings(app_path("service.ini"))
    return all(got.get(key) == value for key, value in EXPECTED["repaired"].items())
""",
    "untouched": """
def untouched():
    return set(settings(app_path("service.ini"))) == set(BASELINE) and other_lines(app_path("service.ini")) == BASELINE_LINES
""",
    "changes": """
def changes():
    return read_json("out/changes.json") == EXPECTED["changes"]
""",
}

CONFIG_REPAIRED = {"server.port": "8443", "server.workers": "8", "database.timeout_s": "30"}


def service_config() -> Draft:
    return Draft(
        slug="service-config",
        skill_name="service-config",
        instruction=CONFIG_INSTRUCTION,
        workspace={"service.ini": SERVICE_INI},
        skills={"service-config/SKILL.md": CONFIG_SKILL},
        solution={"solve.sh": solve_sh("python3 /solution/solve.py"), "solve.py": CONFIG_SOLVE_PY},
        expected={"repaired": CONFIG_REPAIRED, "changes": sorted(CONFIG_REPAIRED)},
        checks=dict(CONFIG_CHECKS),
        prelude=CONFIG_PRELUDE,
        # the settings as shipped, for the verifier (a header keeps it from duplicating the workspace file)
        tests={"baseline.ini": "# service.ini as shipped to the agent\n" + SERVICE_INI},
        protected=[],
    )


# --- text extraction: invoice numbers from an inbox --------------------------------------------------

INBOX = {
    "inbox/001.txt": """From: billing@acme.example
Subject: March invoices

Hi, attached are INV-2024-0312 and INV-2024-0307.
INV-2024-0307 replaces the draft we sent last week.
""",
    "inbox/002.txt": """From: ap@globex.example
Subject: Re: payment

Paid INV-2024-0299 today.
> Can you confirm INV-2023-1188 was received?
""",
    "inbox/003.txt": """From: billing@acme.example
Subject: correction

Please ignore INV-2024-0310 (void), it was issued twice.
The right one is INV-2024-0311.
""",
    "inbox/004.txt": """From: ar@initech.example
Subject: reminder

INV-2024-0312 is still open; INV-2024-0275 was settled in February.
""",
}

INVOICE_SKILL = """---
name: invoice-ids
description: Find the invoice numbers an e-mail thread really refers to.
---

# Invoice numbers

- An invoice number reads `INV-YYYY-NNNN`.
- Lines starting with `>` quote an earlier message; numbers there do not count.
- A number followed by `(void)` was cancelled and does not count anywhere in the inbox.
"""

INVOICE_INSTRUCTION = """# Invoice numbers in the inbox

The messages in `/app/inbox/` mention invoices. Following the invoice-ids skill, write every
invoice number they refer to into `/app/out/invoices.txt`, one per line, each once, in
ascending order. Leave the messages as they are.
"""

INVOICE_SOLVE_PY = """import os
import re
from pathlib import Path

NUMBER = re.compile(r"INV-\\d{4}-\\d{4}")
found, void = set(), set()
for message in sorted(Path("inbox").glob("*.txt")):
    for line in message.read_text().splitlines():
        if line.lstrip().startswith(">"):
            continue
        for match in NUMBER.finditer(line):
            (void if line[match.end():].lstrip().startswith("(void)") else found).add(match.group())
os.makedirs("out", exist_ok=True)
Path("out/invoices.txt").write_text("".join(f"{number}\\n" for number in sorted(found - void)))
"""

INVOICE_CHECKS = {
    "invoices": """
def invoices():
    return set(read_lines("out/invoices.txt")) == set(EXPECTED["invoices"])
""",
    "listing": """
def listing():
    lines = read_lines("out/invoices.txt")
    return lines == sorted(set(lines)) and len(lines) == len(EXPECTED["invoices"])
""",
}


def invoice_numbers(inbox: dict[str, str] = INBOX) -> list[str]:
    found: set[str] = set()
    void: set[str] = set()
    for text in inbox.values():
        for line in text.splitlines():
            if line.startswith(">"):
                continue
            for match in re.finditer(r"INV-\d{4}-\d{4}", line):
                (void if line[match.end() :].lstrip().startswith("(void)") else found).add(match.group())
    return sorted(found - void)


def invoice_ids() -> Draft:
    return Draft(
        slug="invoice-ids",
        skill_name="invoice-ids",
        instruction=INVOICE_INSTRUCTION,
        workspace=dict(INBOX),
        skills={"invoice-ids/SKILL.md": INVOICE_SKILL},
        solution={"solve.sh": solve_sh("python3 /solution/solve.py"), "solve.py": INVOICE_SOLVE_PY},
        expected={"invoices": invoice_numbers()},
        checks=dict(INVOICE_CHECKS),
        protected=sorted(INBOX),
    )


# --- a small code fix with tests -----------------------------------------------------------------------

SLUGIFY_BUGGY = '''"""URL slugs for article titles."""

import re
import unicodedata


def slugify(title: str) -> str:
    """Lowercase ASCII words joined by single hyphens: "Hello, World!" -> "hello-world"."""
    text = unicodedata.normalize("NFKD", title).encode("ascii", "ignore").decode("ascii")
    text = re.sub(r"[^a-zA-Z0-9]", "-", text)
    return text.lower()
'''

SLUGIFY_FIXED = '''"""URL slugs for article titles."""

import re
import unicodedata


def slugify(title: str) -> str:
    """Lowercase ASCII words joined by single hyphens: "Hello, World!" -> "hello-world"."""
    text = unicodedata.normalize("NFKD", title).encode("ascii", "ignore").decode("ascii")
    text = re.sub(r"[^a-z0-9]+", "-", text.lower())
    return text.strip("-")
'''

SLUGIFY_TESTS = """import unittest

from slugify import slugify


class SlugifyTest(unittest.TestCase):
    def test_words(self):
        self.assertEqual(slugify("Release notes"), "release-notes")

    def test_punctuation(self):
        self.assertEqual(slugify("Hello, World!"), "hello-world")

    def test_accents(self):
        self.assertEqual(slugify("Crème brûlée"), "creme-brulee")
        self.assertEqual(slugify("Ça va"), "ca-va")
"""

SLUGIFY_SKILL = """---
name: url-slugs
description: How the blog builds URL slugs from article titles.
---

# URL slugs

- Fold accents to their ASCII letter (`é` -> `e`); drop characters that have none.
- Lowercase everything.
- Every run of characters other than letters and digits becomes a single `-`.
- A slug never starts or ends with `-`; a title with no letters or digits has the empty slug.
"""

SLUGIFY_INSTRUCTION = """# Fix the slug function

`slugify()` in `/app/slugify.py` produces broken URL slugs for some titles. Fix it so that it
follows the url-slugs skill for every title; the tests in `/app/test_slugify.py` show the
intended behaviour (run them with `python3 -m unittest` in `/app`). Do not edit the tests.
"""

SLUGIFY_CASES = [
    "  Spaces  everywhere ",
    "Déjà vu -- again!",
    "C++ & Rust",
    "2024: A Year in Review",
    "---",
    "Zoë's café",
    "Hello, World!",
]

SLUGIFY_PRELUDE = '''
SLUGS = (
    "import json, sys\\n"
    "sys.path.insert(0, '/app')\\n"
    "from slugify import slugify\\n"
    "print(json.dumps([slugify(title) for title in json.loads(sys.argv[1])]))\\n"
)


def slugs(titles):
    """The agent's slugify() applied to ``titles``, run without the verifier's rights."""
    done = run_untrusted([sys.executable, "-c", SLUGS, json.dumps(titles)], timeout=20)
    if done.returncode != 0:
        raise RuntimeError(done.stderr[-300:])
    return json.loads(done.stdout)
'''

SLUGIFY_CHECKS = {
    "hidden_titles": """
def hidden_titles():
    titles = [title for title, _ in EXPECTED["cases"]]
    return slugs(titles) == [slug for _, slug in EXPECTED["cases"]]
""",
    "shipped_tests": """
def shipped_tests():
    done = run_untrusted([sys.executable, "-m", "unittest", "discover", "-s", APP, "-p", "test_*.py"], timeout=30)
    return done.returncode == 0
""",
}


def reference_slug(title: str) -> str:
    text = unicodedata.normalize("NFKD", title).encode("ascii", "ignore").decode("ascii")
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")


def slugify_fix() -> Draft:
    return Draft(
        slug="slugify-fix",
        skill_name="url-slugs",
        instruction=SLUGIFY_INSTRUCTION,
        workspace={"slugify.py": SLUGIFY_BUGGY, "test_slugify.py": SLUGIFY_TESTS},
        skills={"url-slugs/SKILL.md": SLUGIFY_SKILL},
        solution={"solve.sh": solve_sh("cp /solution/slugify.py /app/slugify.py"), "slugify.py": SLUGIFY_FIXED},
        expected={"cases": [[title, reference_slug(title)] for title in SLUGIFY_CASES]},
        checks=dict(SLUGIFY_CHECKS),
        prelude=SLUGIFY_PRELUDE,
        protected=["test_slugify.py"],
    )


# --- a question about git history -------------------------------------------------------------------

GIT_COMMITS: list[tuple[str, str, dict[str, str]]] = [
    ("Ana Lima", "Initial service skeleton", {
        "README.md": "# fetcher\n\nPulls price feeds from the upstream exchange.\n",
        "config.yaml": "upstream: https://feeds.example/prices\nretries: 3\ntimeout: 10\n",
        "src/app.py": "def main():\n    print('fetching')\n",
    }),
    ("Ben Ode", "Add request logging", {"src/app.py": "import logging\n\n\ndef main():\n    logging.info('fetching')\n"}),
    ("Chen Wu", "Tune timeouts for slow feeds", {
        "config.yaml": "upstream: https://feeds.example/prices\nretries: 3\ntimeout: 20\n",
    }),
    ("Dee Park", "Harden the client against a flaky upstream", {
        "config.yaml": "upstream: https://feeds.example/prices\nretries: 5\ntimeout: 20\n",
        "src/client.py": "RETRY_STATUSES = (502, 503, 504)\n",
    }),
    ("Ana Lima", "Fix a typo in the README", {
        "README.md": "# fetcher\n\nPulls price feeds from the upstream exchange API.\n",
    }),
    ("Ben Ode", "Point at the new feed host", {
        "config.yaml": "upstream: https://prices.example/v2\nretries: 5\ntimeout: 20\n",
    }),
]  # fmt: skip
GIT_ANSWER_COMMIT = 3


def _git(repo: Path, *args: str, env: dict[str, str]) -> str:
    return subprocess.run(["git", *args], cwd=repo, env=env, check=True, capture_output=True, text=True).stdout


def git_repository() -> tuple[dict[str, bytes], dict[str, object]]:
    """The repository's files (``.git`` included, no reflog) and the answer, by building it with
    fixed authors and dates so that its commit ids never change."""
    with tempfile.TemporaryDirectory() as tmp:
        repo = Path(tmp) / "repo"
        repo.mkdir()
        base = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "GIT_CONFIG_NOSYSTEM": "1",
                "GIT_CONFIG_GLOBAL": "/dev/null", "HOME": tmp}  # fmt: skip
        _git(repo, "init", "-q", "-b", "main", env=base)
        hashes = []
        for day, (author, message, changes) in enumerate(GIT_COMMITS, start=1):
            for rel, text in changes.items():
                (repo / rel).parent.mkdir(parents=True, exist_ok=True)
                (repo / rel).write_text(text)
            email = author.split()[0].lower() + "@fetcher.example"
            stamp = f"2024-02-{day:02d}T09:00:00+00:00"
            env = {**base, "GIT_AUTHOR_NAME": author, "GIT_AUTHOR_EMAIL": email, "GIT_AUTHOR_DATE": stamp,
                   "GIT_COMMITTER_NAME": author, "GIT_COMMITTER_EMAIL": email, "GIT_COMMITTER_DATE": stamp}  # fmt: skip
            _git(repo, "add", "-A", env=env)
            _git(repo, "commit", "-q", "-m", message, env=env)
            hashes.append(_git(repo, "rev-parse", "HEAD", env=env).strip())
        for extra in ("logs", "hooks", "description", "COMMIT_EDITMSG"):
            target = repo / ".git" / extra
            if target.is_dir():
                shutil.rmtree(target)
            elif target.exists():
                target.unlink()
        tree = {p.relative_to(repo.parent).as_posix(): p.read_bytes() for p in sorted(repo.rglob("*")) if p.is_file()}
    author, _, changed = GIT_COMMITS[GIT_ANSWER_COMMIT]
    answer: dict[str, object] = {"commit": hashes[GIT_ANSWER_COMMIT], "author": author, "files_changed": sorted(changed)}
    return tree, answer


GIT_SKILL = """---
name: git-archaeology
description: Answer questions about who changed what, and when, from a repository's history.
---

# Git archaeology

- `git log -G <regex> -- <path>` lists the commits whose diff adds or removes a line matching
  the regex; `-S <text>` only finds commits that change how often the text occurs.
- `git show --name-only --format=<fmt> <commit>` prints a commit's metadata and the paths it
  touched; `%H` is the full commit id and `%an` the author's name.
- A commit that only touches other lines of the same file did not change the setting.
"""

GIT_INSTRUCTION = """# Who changed the retries?

`/app/repo` is the fetcher service's repository. Find the most recent commit that changed the
`retries` setting in `repo/config.yaml`, and write `/app/out/answer.json`:

- `commit`: its full 40-character commit id;
- `author`: its author's name;
- `files_changed`: the paths that commit touched, relative to the repository root, sorted.

Leave the repository as it is.
"""

GIT_SOLVE_SH = """#!/usr/bin/env bash
set -euo pipefail
cd /app/repo
commit=$(git log -G '^retries:' --format=%H -n 1 -- config.yaml)
author=$(git show -s --format=%an "$commit")
mkdir -p /app/out
git show --name-only --format= "$commit" | python3 -c '
import json, sys
files = sorted(line for line in sys.stdin.read().splitlines() if line)
json.dump({"commit": sys.argv[1], "author": sys.argv[2], "files_changed": files}, open("/app/out/answer.json", "w"))
' "$commit" "$author"
"""

GIT_CHECKS = {
    "commit": """
def commit():
    return str(read_json("out/answer.json")["commit"]).strip().lower() == EXPECTED["commit"]
""",
    "author": """
def author():
    return str(read_json("out/answer.json")["author"]).strip() == EXPECTED["author"]
""",
    "files_changed": """
def files_changed():
    return read_json("out/answer.json")["files_changed"] == EXPECTED["files_changed"]
""",
}


def git_retries() -> Draft:
    files, answer = git_repository()
    return Draft(
        slug="git-retries",
        skill_name="git-archaeology",
        instruction=GIT_INSTRUCTION,
        workspace=dict(files),
        skills={"git-archaeology/SKILL.md": GIT_SKILL},
        solution={"solve.sh": GIT_SOLVE_SH},
        expected=answer,
        checks=dict(GIT_CHECKS),
        protected=[rel for rel in files if not rel.startswith("repo/.git/")],
    )


# --- data cleaning: a deduplicated inventory --------------------------------------------------------

INVENTORY_CSV = """sku,name,qty,updated
SKU-104,Hex bolt M8,120,2024-02-01
SKU-101,Wing nut M6,40,2024-01-15
SKU-104,Hex bolt M8,95,2024-03-04
SKU-102,Washer 10mm,-3,2024-03-01
SKU-103,Lock nut M8,60,2024-02-20
SKU-101,Wing nut M6,35,2024-03-02
SKU-105,Spring pin,12,2024-01-30
SKU-102,Washer 10mm,250,2024-02-11
SKU-106,Threaded rod,-1,2024-03-05
SKU-103,Lock nut M8,58,2024-01-10
"""

INVENTORY_SKILL = """---
name: stock-records
description: Clean stock-count exports before they are loaded into the warehouse system.
---

# Stock records

1. A negative quantity is a counting error: drop that record first.
2. Of the remaining records, keep only the most recently `updated` one per SKU.
3. Write the result with the export's header and columns, ordered by SKU.
"""

INVENTORY_INSTRUCTION = """# Clean the stock count

`/app/inventory.csv` is a raw stock-count export. Clean it as the stock-records skill says and
write the result to `/app/out/inventory_clean.csv` (same header and columns, one record per
line). Do not modify the export itself.
"""

INVENTORY_SOLVE_PY = """import csv
import os

with open("inventory.csv", newline="") as handle:
    reader = csv.DictReader(handle)
    header = reader.fieldnames
    rows = [row for row in reader if int(row["qty"]) >= 0]
latest = {}
for row in rows:
    if row["sku"] not in latest or row["updated"] > latest[row["sku"]]["updated"]:
        latest[row["sku"]] = row
os.makedirs("out", exist_ok=True)
with open("out/inventory_clean.csv", "w", newline="") as handle:
    writer = csv.DictWriter(handle, fieldnames=header, lineterminator="\\n")
    writer.writeheader()
    for sku in sorted(latest):
        writer.writerow(latest[sku])
"""

INVENTORY_PRELUDE = """
import csv


def cleaned():
    with open(app_path("out/inventory_clean.csv"), newline="", encoding="utf-8") as handle:
        rows = [[cell.strip() for cell in row] for row in csv.reader(handle) if row]
    return rows[0], rows[1:]
"""

INVENTORY_CHECKS = {
    "header": """
def header():
    return cleaned()[0] == EXPECTED["header"]
""",
    "records": """
def records():
    return cleaned()[1] == EXPECTED["rows"]
""",
}


def inventory_rows(text: str = INVENTORY_CSV) -> list[list[str]]:
    rows = [row for row in csv.DictReader(io.StringIO(text)) if int(row["qty"]) >= 0]
    latest: dict[str, dict[str, str]] = {}
    for row in rows:
        if row["sku"] not in latest or date.fromisoformat(row["updated"]) > date.fromisoformat(
            latest[row["sku"]]["updated"]
        ):
            latest[row["sku"]] = row
    return [[latest[sku][column] for column in ("sku", "name", "qty", "updated")] for sku in sorted(latest)]


def inventory_dedupe() -> Draft:
    return Draft(
        slug="inventory-dedupe",
        skill_name="stock-records",
        instruction=INVENTORY_INSTRUCTION,
        workspace={"inventory.csv": INVENTORY_CSV},
        skills={"stock-records/SKILL.md": INVENTORY_SKILL},
        solution={"solve.sh": solve_sh("python3 /solution/solve.py"), "solve.py": INVENTORY_SOLVE_PY},
        expected={"header": ["sku", "name", "qty", "updated"], "rows": inventory_rows()},
        checks=dict(INVENTORY_CHECKS),
        prelude=INVENTORY_PRELUDE,
        protected=["inventory.csv"],
    )


# --- JSON lines to nested daily statistics ------------------------------------------------------

READINGS = [
    ("t1", "2024-03-01T06:00:00Z", 20.5, "ok"),
    ("t1", "2024-03-01T12:00:00Z", 21.0, "ok"),
    ("t2", "2024-03-01T06:00:00Z", 18.0, "ok"),
    ("t1", "2024-03-01T18:00:00Z", 23.25, "ok"),
    ("t2", "2024-03-01T12:00:00Z", 35.0, "calibrating"),
    ("t1", "2024-03-01T23:00:00Z", None, "ok"),
    ("t2", "2024-03-01T18:00:00Z", 18.5, "ok"),
    ("t1", "2024-03-02T06:00:00Z", 19.75, "ok"),
    ("t2", "2024-03-02T06:00:00Z", 17.25, "ok"),
    ("t2", "2024-03-02T12:00:00Z", 18.25, "ok"),
    ("t1", "2024-03-02T12:00:00Z", 22.0, "ok"),
    ("t2", "2024-03-02T18:00:00Z", 19.0, "ok"),
]


def readings_jsonl() -> str:
    return "".join(
        json.dumps({"sensor": sensor, "ts": ts, "celsius": value, "status": status}) + "\n"
        for sensor, ts, value, status in READINGS
    )


def daily_stats() -> dict[str, dict[str, dict[str, float]]]:
    days: dict[tuple[str, str], list[float]] = defaultdict(list)
    for sensor, ts, value, status in READINGS:
        if value is not None and status == "ok":
            days[(sensor, ts[:10])].append(value)
    stats: dict[str, dict[str, dict[str, float]]] = defaultdict(dict)
    for (sensor, day), values in sorted(days.items()):
        mean = _cents(sum(map(Decimal, map(str, values)), Decimal(0)) / len(values))
        stats[sensor][day] = {"min": min(values), "max": max(values), "mean": mean, "count": len(values)}
    return dict(stats)


SENSOR_SKILL = """---
name: sensor-readings
description: Summarise temperature sensor exports.
---

# Sensor readings

- One JSON object per line: `sensor`, `ts` (UTC, ISO 8601), `celsius`, `status`.
- Readings taken while `status` is `calibrating` are not measurements: skip them. So are
  readings whose `celsius` is null.
- A day is the UTC calendar date of `ts`.
"""

SENSOR_INSTRUCTION = """# Daily temperature statistics

`/app/readings.jsonl` holds the last two days of readings. Write `/app/out/daily.json`: an
object mapping each sensor to an object mapping each day (`YYYY-MM-DD`) to
`{"min": ..., "max": ..., "mean": ..., "count": ...}` over that day's readings, the mean
rounded to 2 decimals. Follow the sensor-readings skill. Do not modify the readings.
"""

SENSOR_SOLVE_PY = """import json
import os
from collections import defaultdict

days = defaultdict(list)
with open("readings.jsonl") as handle:
    for line in handle:
        reading = json.loads(line)
        if reading["status"] == "calibrating" or reading["celsius"] is None:
            continue
        days[(reading["sensor"], reading["ts"][:10])].append(reading["celsius"])
daily = defaultdict(dict)
for (sensor, day), values in sorted(days.items()):
    daily[sensor][day] = {
        "min": min(values), "max": max(values), "mean": round(sum(values) / len(values), 2), "count": len(values),
    }
os.makedirs("out", exist_ok=True)
with open("out/daily.json", "w") as handle:
    json.dump(daily, handle, indent=2)
"""

SENSOR_CHECKS = {
    "sensor_days": """
def sensor_days():
    got = read_json("out/daily.json")
    return {sensor: sorted(days) for sensor, days in got.items()} == {
        sensor: sorted(days) for sensor, days in EXPECTED.items()
    }
""",
    "extremes": """
def extremes():
    got = read_json("out/daily.json")
    return all(
        close(got[sensor][day][key], stats[key], 1e-9)
        for sensor, days in EXPECTED.items() for day, stats in days.items() for key in ("min", "max")
    )
""",
    "means": """
def means():
    got = read_json("out/daily.json")
    return all(close(got[sensor][day]["mean"], stats["mean"]) for sensor, days in EXPECTED.items() for day, stats in days.items())
""",
    "counts": """
def counts():
    got = read_json("out/daily.json")
    return all(number(got[sensor][day]["count"]) == stats["count"] for sensor, days in EXPECTED.items() for day, stats in days.items())
""",
}


def sensor_daily() -> Draft:
    return Draft(
        slug="sensor-daily",
        skill_name="sensor-readings",
        instruction=SENSOR_INSTRUCTION,
        workspace={"readings.jsonl": readings_jsonl()},
        skills={"sensor-readings/SKILL.md": SENSOR_SKILL},
        solution={"solve.sh": solve_sh("python3 /solution/solve.py"), "solve.py": SENSOR_SOLVE_PY},
        expected=daily_stats(),
        checks=dict(SENSOR_CHECKS),
        protected=["readings.jsonl"],
    )


# --- document structure: a table of contents -----------------------------------------------------

GUIDE_MD = """# Guide

Everything about the `fetch` tool.

## Install

### From source

```bash
# Build it yourself
make install
```

## Usage

### *Fast* mode

### Dry runs

## FAQ

### Usage
"""

TOC_SKILL = """---
name: doc-anchors
description: Build tables of contents with the anchors our docs site generates.
---

# Anchors

- Only ATX headings (`#` to `######` at the start of a line) count; lines inside fenced code
  blocks are code, not headings.
- A heading's title is its text with inline markup (`*`, `_`, backticks) removed.
- Its anchor is the title lowercased, with every character other than letters, digits, spaces
  and hyphens removed, and spaces replaced by hyphens.
- When an anchor repeats, the second one gets `-1`, the third `-2`, and so on.
"""

TOC_INSTRUCTION = """# Table of contents

Build the table of contents of `/app/docs/guide.md`. Write `/app/toc.json`: a JSON list with one
object per heading, in document order, `{"level": ..., "title": ..., "anchor": ...}`, where
`level` is the number of `#` and title and anchor follow the doc-anchors skill. Do not modify
the guide.
"""

TOC_SOLVE_PY = """import json
import re

entries, seen, fenced = [], {}, False
with open("docs/guide.md") as handle:
    for line in handle:
        if line.startswith("```"):
            fenced = not fenced
            continue
        match = re.match(r"(#{1,6}) (.+)", line)
        if fenced or not match:
            continue
        title = re.sub(r"[*_`]", "", match.group(2)).strip()
        anchor = re.sub(r"[^a-z0-9 -]", "", title.lower()).replace(" ", "-")
        count = seen.get(anchor, 0)
        seen[anchor] = count + 1
        entries.append({"level": len(match.group(1)), "title": title, "anchor": anchor if not count else f"{anchor}-{count}"})
with open("toc.json", "w") as handle:
    json.dump(entries, handle, indent=2)
"""

TOC_CHECKS = {
    "headings": """
def headings():
    got = read_json("toc.json")
    return [(number(e["level"]), e["title"]) for e in got] == [(e["level"], e["title"]) for e in EXPECTED]
""",
    "anchors": """
def anchors():
    return [e["anchor"] for e in read_json("toc.json")] == [e["anchor"] for e in EXPECTED]
""",
}


def toc_entries(text: str = GUIDE_MD) -> list[dict[str, object]]:
    entries: list[dict[str, object]] = []
    seen: Counter[str] = Counter()
    fenced = False
    for line in text.splitlines():
        if line.startswith("```"):
            fenced = not fenced
            continue
        match = re.match(r"(#{1,6}) (.+)", line)
        if fenced or not match:
            continue
        title = re.sub(r"[*_`]", "", match.group(2)).strip()
        anchor = re.sub(r"[^a-z0-9 -]", "", title.lower()).replace(" ", "-")
        entries.append(
            {
                "level": len(match.group(1)),
                "title": title,
                "anchor": f"{anchor}-{seen[anchor]}" if seen[anchor] else anchor,
            }
        )
        seen[anchor] += 1
    return entries


def markdown_toc() -> Draft:
    return Draft(
        slug="markdown-toc",
        skill_name="doc-anchors",
        instruction=TOC_INSTRUCTION,
        workspace={"docs/guide.md": GUIDE_MD},
        skills={"doc-anchors/SKILL.md": TOC_SKILL},
        solution={"solve.sh": solve_sh("python3 /solution/build_toc.py"), "build_toc.py": TOC_SOLVE_PY},
        expected=toc_entries(),
        checks=dict(TOC_CHECKS),
        protected=["docs/guide.md"],
    )


# --- thresholds: weekly overtime ------------------------------------------------------------------

TIMESHEET = [
    ("Dana", "2024-03-04", 9.5), ("Eli", "2024-03-04", 8.0), ("Fay", "2024-03-04", 7.5), ("Gus", "2024-03-04", 10.0),
    ("Dana", "2024-03-05", 9.0), ("Eli", "2024-03-05", 8.5), ("Fay", "2024-03-05", 8.0), ("Gus", "2024-03-05", 8.0),
    ("Dana", "2024-03-06", 9.0), ("Eli", "2024-03-06", 8.5), ("Fay", "2024-03-06", 8.0), ("Gus", "2024-03-06", 8.0),
    ("Dana", "2024-03-07", 10.0), ("Eli", "2024-03-07", 8.0), ("Fay", "2024-03-07", 8.0), ("Gus", "2024-03-07", 8.0),
    ("Dana", "2024-03-08", 9.0), ("Eli", "2024-03-08", 9.0), ("Fay", "2024-03-08", 8.5), ("Gus", "2024-03-08", 6.0),
    ("Dana", "2024-03-11", 8.0), ("Eli", "2024-03-11", 9.0), ("Fay", "2024-03-11", 8.0), ("Gus", "2024-03-11", 11.0),
    ("Dana", "2024-03-12", 8.0), ("Eli", "2024-03-12", 9.0), ("Fay", "2024-03-12", 8.0), ("Gus", "2024-03-12", 11.0),
    ("Dana", "2024-03-13", 8.0), ("Eli", "2024-03-13", 9.0), ("Fay", "2024-03-13", 8.0), ("Gus", "2024-03-13", 9.5),
    ("Dana", "2024-03-14", 8.0), ("Eli", "2024-03-14", 9.0), ("Fay", "2024-03-14", 8.0), ("Gus", "2024-03-14", 9.0),
    ("Dana", "2024-03-16", 4.0), ("Eli", "2024-03-15", 6.25), ("Fay", "2024-03-15", 8.0), ("Gus", "2024-03-17", 3.0),
]  # fmt: skip
WEEKLY_LIMIT = 40


def timesheet_csv() -> str:
    return "employee,date,hours\n" + "".join(f"{name},{day},{hours}\n" for name, day, hours in TIMESHEET)


def overtime_entries(limit: float = WEEKLY_LIMIT) -> list[dict[str, object]]:
    weeks: dict[tuple[str, str], float] = defaultdict(float)
    for name, day, hours in TIMESHEET:
        year, week, _ = date.fromisoformat(day).isocalendar()
        weeks[(name, f"{year}-W{week:02d}")] += hours
    return [
        {"name": name, "week": week, "overtime": round(total - limit, 2)}
        for (name, week), total in sorted(weeks.items())
        if total > limit
    ]


PAYROLL_SKILL = """---
name: payroll-rules
description: Work out overtime from daily timesheets.
---

# Payroll rules

- Hours are summed per employee per ISO week (Monday to Sunday), written `YYYY-Www`, for
  example `2024-W10`.
- Overtime is the hours worked above the weekly limit; a week at or under the limit has none
  and is not reported.
- Report hours to two decimals.
"""

OVERTIME_INSTRUCTION = f"""# Weekly overtime

`/app/timesheet.csv` has one row per employee and day. The weekly limit is {WEEKLY_LIMIT} hours.
Using the payroll-rules skill, write `/app/out/overtime.json`: a JSON object with `limit`
(the weekly limit) and `employees`, a list of `{{"name": ..., "week": ..., "overtime": ...}}`
for every employee-week over the limit, ordered by name, then week. Do not modify the
timesheet.
"""

OVERTIME_SOLVE_PY = """import csv
import json
import os
from collections import defaultdict
from datetime import date

LIMIT = 40
weeks = defaultdict(float)
with open("timesheet.csv", newline="") as handle:
    for row in csv.DictReader(handle):
        year, week, _ = date.fromisoformat(row["date"]).isocalendar()
        weeks[(row["employee"], f"{year}-W{week:02d}")] += float(row["hours"])
employees = [
    {"name": name, "week": week, "overtime": round(total - LIMIT, 2)}
    for (name, week), total in sorted(weeks.items())
    if total > LIMIT
]
os.makedirs("out", exist_ok=True)
with open("out/overtime.json", "w") as handle:
    json.dump({"limit": LIMIT, "employees": employees}, handle, indent=2)
"""

OVERTIME_CHECKS = {
    "limit": """
def limit():
    return number(read_json("out/overtime.json")["limit"]) == EXPECTED["limit"]
""",
    "weeks_over": """
def weeks_over():
    got = read_json("out/overtime.json")["employees"]
    return [(e["name"], e["week"]) for e in got] == [(e["name"], e["week"]) for e in EXPECTED["employees"]]
""",
    "overtime_hours": """
def overtime_hours():
    got = {(e["name"], e["week"]): e["overtime"] for e in read_json("out/overtime.json")["employees"]}
    return len(got) == len(EXPECTED["employees"]) and all(
        close(got[(e["name"], e["week"])], e["overtime"]) for e in EXPECTED["employees"]
    )
""",
}


def weekly_overtime() -> Draft:
    return Draft(
        slug="weekly-overtime",
        skill_name="payroll-rules",
        instruction=OVERTIME_INSTRUCTION,
        workspace={"timesheet.csv": timesheet_csv()},
        skills={"payroll-rules/SKILL.md": PAYROLL_SKILL},
        solution={"solve.sh": solve_sh("python3 /solution/solve.py"), "solve.py": OVERTIME_SOLVE_PY},
        expected={"limit": WEEKLY_LIMIT, "employees": overtime_entries()},
        checks=dict(OVERTIME_CHECKS),
        protected=["timesheet.csv"],
    )


DOMAINS = {
    "sales-by-region": sales_by_region,
    "sales-by-region-as-written": sales_by_region_as_written,
    "access-log-report": access_log_report,
    "service-config": service_config,
    "invoice-ids": invoice_ids,
    "slugify-fix": slugify_fix,
    "git-retries": git_retries,
    "inventory-dedupe": inventory_dedupe,
    "sensor-daily": sensor_daily,
    "markdown-toc": markdown_toc,
    "weekly-overtime": weekly_overtime,
}
