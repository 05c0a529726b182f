"""Verifier for security-audit: the reported findings against those planted in the generated
repository (exact file and line, category from the fixed vocabulary), no extra finding (decoys,
out-of-scope files, duplicates), severities by the stated rule, and the unauditable files."""

import json
import os
import stat
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from checks import app_path, load_expected, run

E = load_expected()
OUTPUT = "out/findings.json"
MAX_BYTES = 1 << 20
FIELDS = {"file", "line", "category", "severity"}


def bounded_json(rel):
    """The agent's JSON, read without following a link and refused beyond MAX_BYTES."""
    fd = os.open(app_path(rel), os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
    with os.fdopen(fd, "rb") as handle:
        if not stat.S_ISREG(os.fstat(handle.fileno()).st_mode):
            raise ValueError(f"{rel} is not a regular file")
        data = handle.read(MAX_BYTES + 1)
    if len(data) > MAX_BYTES:
        raise ValueError(f"{rel} is larger than {MAX_BYTES} bytes")
    return json.loads(data.decode("utf-8"))


def path_of(value):
    if not isinstance(value, str):
        raise TypeError("file must be a string")
    text = value.strip()
    for prefix in ("/app/", "./"):
        if text.startswith(prefix):
            text = text[len(prefix):]
    return text


def line_of(value):
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError("line must be an integer")
    return value


def word(value, allowed):
    if not isinstance(value, str) or value.strip().lower() not in allowed:
        raise ValueError(f"{value!r} is not one of {sorted(allowed)}")
    return value.strip().lower()


def report():
    """(findings as (file, line, category, severity) in reported order, skipped paths); any
    malformed entry fails every item."""
    got = bounded_json(OUTPUT)
    if not isinstance(got, dict) or not isinstance(got.get("findings"), list) or not isinstance(got.get("skipped"), list):
        raise ValueError("expected an object with the lists findings and skipped")
    rows = []
    for entry in got["findings"]:
        if not isinstance(entry, dict) or not set(entry) >= FIELDS:
            raise ValueError(f"a finding needs {sorted(FIELDS)}")
        rows.append((path_of(entry["file"]), line_of(entry["line"]), word(entry["category"], set(E["categories"])),
                     word(entry["severity"], set(E["severities"]))))
    return rows, [path_of(p) for p in got["skipped"]]


PLANTED = {(f["file"], f["line"]): f for f in E["findings"]}


def findings():
    rows, _ = report()
    reported = {(file, line, category) for file, line, category, _ in rows}
    hit = sum((f["file"], f["line"], f["category"]) in reported for f in E["findings"])
    return hit / len(E["findings"])


def no_false_positives():
    rows, _ = report()
    seen, extra = set(), 0
    for file, line, _, _ in rows:
        if (file, line) not in PLANTED or (file, line) in seen:
            extra += 1
        seen.add((file, line))
    return max(0.0, 1 - extra / len(E["findings"])) if extra < len(E["findings"]) else 0.0


def severity():
    rows, _ = report()
    given = {(file, line, category): sev for file, line, category, sev in rows}
    right = sum(given.get((f["file"], f["line"], f["category"])) == f["severity"] for f in E["findings"])
    return right / len(E["findings"])


def skipped():
    _, paths = report()
    return len(paths) == len(set(paths)) and sorted(paths) == sorted(E["skipped"])


checks = [("findings", findings), ("no_false_positives", no_false_positives), ("severity", severity)]
if E["skipped"]:
    checks.append(("skipped", skipped))
run(checks)
