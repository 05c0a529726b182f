"""Verifier for test-repair: the package imports, its protected suite passes and fresh hidden
cases (regenerated from the seed in expected.json) match the reference implementation. The
agent's code runs only through run_untrusted; results are compared here."""

import json
import os
import random
import secrets
import shutil
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from checks import TESTS, load_expected, run, run_untrusted

EXPECTED = load_expected()
PROJECT = "/app/project"
PACKAGE = EXPECTED["package"]


def drop_bytecode(root):
    """Compiled files the agent's runs left behind must not stand in for its final sources: a
    cached file claims the source's timestamp and size, and Python trusts that claim. The agent's
    code runs here with /tmp its only writable place, so it cannot leave new ones."""
    for folder, subfolders, files in os.walk(root):
        for name in subfolders:
            path = os.path.join(folder, name)
            if name == "__pycache__" and os.path.islink(path):
                os.unlink(path)
            elif name == "__pycache__":
                shutil.rmtree(path, ignore_errors=True)
        subfolders[:] = [name for name in subfolders if name != "__pycache__"]
        for name in files:
            if name.endswith((".pyc", ".pyo")):
                os.unlink(os.path.join(folder, name))


drop_bytecode(PROJECT)
with open(os.path.join(TESTS, "reference.json"), encoding="utf-8") as handle:
    REFERENCE = json.load(handle)


def imports():
    names = ", ".join(EXPECTED["exports"])  # the package's API: every function from its root
    code = f"import sys; sys.path.insert(0, {PROJECT!r}); from {PACKAGE} import {names}"
    done = run_untrusted(["python3", "-c", code], cwd=PROJECT, timeout=60)
    return done.returncode == 0


def visible_suite():
    if not imports():
        print("the package does not import its functions")
        return False
    done = run_untrusted(["python3", "-m", "pytest", "-q", "-p", "no:cacheprovider", "tests"], cwd=PROJECT,
                         timeout=120)
    print(done.stdout[-1500:])
    return done.returncode == 0


def outcome(function, args):
    try:
        return {"ok": json.loads(json.dumps(function(*args)))}
    except ValueError:
        return {"error": "ValueError"}


def matches(mine, want):
    if "error" in want:
        return isinstance(mine.get("error"), list) and want["error"] in mine["error"]
    return "ok" in mine and mine["ok"] == want["ok"]


def hidden_cases():
    work = tempfile.mkdtemp(prefix="hidden-")
    shutil.copy(os.path.join(TESTS, "probe.py"), work)
    passed = 0
    for index, item in enumerate(REFERENCE):
        namespace = {}
        exec(item["source"], namespace)
        generator = {}
        exec(item["generator"], generator)
        cases = generator["cases"](random.Random(EXPECTED["seed"] * 1000 + index))
        want = [outcome(namespace[item["function"]], args) for args in cases]
        inputs = os.path.join(work, f"inputs-{index}.json")
        with open(inputs, "w", encoding="utf-8") as handle:
            json.dump(cases, handle)
        marker = secrets.token_hex(8)
        done = run_untrusted(["python3", os.path.join(work, "probe.py"), PROJECT, PACKAGE, item["module"],
                              item["function"], inputs, marker], cwd=PROJECT, timeout=60)
        lines = [line for line in done.stdout.splitlines() if line.startswith(marker)]
        if done.returncode != 0 or not lines:
            print(f"{item['function']}: probe failed: {done.stderr.strip()[-300:]}")
            continue
        mine = json.loads(lines[-1][len(marker):])
        wrong = [i for i, (m, w) in enumerate(zip(mine, want, strict=False)) if not matches(m, w)]
        if len(mine) == len(want) and not wrong:
            passed += 1
        else:
            print(f"{item['function']}: {len(wrong)} of {len(want)} hidden cases differ, e.g. {cases[wrong[0]] if wrong else ''}")
    return passed / len(REFERENCE)


run([("visible_suite", visible_suite), ("hidden_cases", hidden_cases)])
