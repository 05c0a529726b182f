"""Rubric runner for task verifiers (python3 standard library only).

Each check is a function returning True/False or a score in [0, 1]; an exception raised while
reading the agent's output counts as a failed check, never as a checker crash. The weighted
rubric ``r = sum(w_c * q_c)`` (weights from rubric.json, summing to 1) goes to
/logs/verifier/reward.json with one entry per item, and to reward.txt."""

import json
import os
import re
import subprocess
import sys
import traceback

LOGS = os.environ.get("SKILLGYM_VERIFIER_LOGS", "/logs/verifier")
RUN_UNTRUSTED = os.environ.get("SKILLGYM_RUN_UNTRUSTED", "/opt/skillgym/bin/run-untrusted")
TESTS = os.path.dirname(os.path.abspath(__file__))
APP = os.environ.get("SKILLGYM_APP_DIR", "/app")


def load_expected():
    with open(os.path.join(TESTS, "expected.json"), encoding="utf-8") as handle:
        return json.load(handle)


def load_rubric():
    with open(os.path.join(TESTS, "rubric.json"), encoding="utf-8") as handle:
        items = json.load(handle)
    weights = {item["name"]: float(item["weight"]) for item in items if item.get("kind", "programmatic") == "programmatic"}
    if not weights:
        raise SystemExit("rubric.json has no programmatic items")
    total = sum(weights.values())
    return {name: weight / total for name, weight in weights.items()}


def app_path(rel):
    return os.path.join(APP, rel)


def read_json(rel):
    with open(app_path(rel), encoding="utf-8") as handle:
        return json.load(handle)


def read_lines(rel):
    with open(app_path(rel), encoding="utf-8") as handle:
        return [line.strip() for line in handle.read().splitlines() if line.strip()]


def run_untrusted(argv, timeout=60, writable=("/tmp",), cwd=None):
    """Run the solver's code (its script, its tests) without the verifier's rights: it cannot read
    tests/ or write /logs, writes only below ``writable``, and nothing it starts outlives it.
    Returns the CompletedProcess (text output); exit status 125 means it could not be confined."""
    command = [sys.executable, RUN_UNTRUSTED, "--timeout", str(timeout)]
    for directory in writable:
        command += ["--writable", directory]
    return subprocess.run(
        [*command, "--", *argv], cwd=cwd or APP, capture_output=True, text=True, timeout=timeout + 30,
        stdin=subprocess.DEVNULL,
    )


def git(*args, timeout=60):
    """``git ARGS`` on the solver's repository, confined like :func:`run_untrusted` (its config
    and hooks are the solver's). Returns stdout; raises on a non-zero exit."""
    done = run_untrusted(["git", "-c", "core.fsmonitor=false", "-c", "core.hooksPath=/dev/null", *args],
                         timeout=timeout)
    if done.returncode != 0:
        raise RuntimeError(f"git {' '.join(args)} failed: {done.stderr.strip()[-300:]}")
    return done.stdout


def number(value):
    """A JSON number (not a bool, not a string); raises otherwise so the check fails."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise TypeError(f"expected a number, got {type(value).__name__}")
    return float(value)


def close(got, expected, rel=1e-6, abs_tol=1e-9):
    """``got`` is a number within the tolerance of ``expected``."""
    value = number(got)
    return abs(value - expected) <= max(abs_tol, rel * abs(expected))


def exact_int(got, expected):
    return not isinstance(got, bool) and isinstance(got, int) and got == expected


def norm(text):
    """Compare headings and labels leniently: case, spacing, markup and trailing colons."""
    text = re.sub(r"[*_`#]+", "", str(text))
    text = re.sub(r"\s+", " ", text).strip().rstrip(":").strip()
    return text.casefold()


def run(checks):
    """``checks``: list of (name, callable). Writes the reward files and exits 0."""
    weights = load_rubric()
    scores = {}
    for name, check in checks:
        try:
            value = check()
            score = float(value) if not isinstance(value, bool) else (1.0 if value else 0.0)
            detail = ""
        except Exception as exc:  # the agent's output is malformed: the check fails
            score, detail = 0.0, "".join(traceback.format_exception_only(type(exc), exc)).strip()
        score = min(1.0, max(0.0, score))
        scores[name] = score
        print(f"[{'PASS' if score >= 1 else 'FAIL'}] {name} = {score:.3f} {detail}")
    missing = sorted(set(weights) - set(scores))
    if missing:
        print(f"checker error: rubric items without a check: {missing}", file=sys.stderr)
        sys.exit(2)
    reward = round(sum(weights[name] * scores.get(name, 0.0) for name in weights), 6)
    os.makedirs(LOGS, exist_ok=True)
    with open(os.path.join(LOGS, "reward.json"), "w", encoding="utf-8") as handle:
        json.dump({"reward": reward, **{name: scores[name] for name in weights}}, handle, sort_keys=True)
    with open(os.path.join(LOGS, "reward.txt"), "w", encoding="utf-8") as handle:
        handle.write(f"{reward}\n")
    print(f"reward = {reward}")
