"""Rubric runner for task verifiers (python3 standard library only).

Each check is a function returning True/False or a score in [0, 1]; an exception raised while
reading the agent's output counts as a failed check, never as a checker crash. The weighted
rubric ``r = sum(w_c * q_c)`` (weights from rubric.json, summing to 1) goes to
/logs/verifier/reward.json with one entry per item, and to reward.txt.

The verdict is this process's: before the reward files are written, every other process of the
run but this one's ancestors (``test.sh`` and the sandbox's init) is stopped and killed, so no
code the checks ran (an agent's tool that daemonised, a writer that keeps replacing the files)
is alive at or after the write; what such code wrote before is replaced. The runner asks for this
with ``SKILLGYM_VERIFIER_SEAL=1``, set only where the verifier has a process namespace of its own
(a sandbox, a container, a pod): on a shared machine it would end the user's other processes."""

import contextlib
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
import traceback

LOGS = os.environ.get("SKILLGYM_VERIFIER_LOGS", "/logs/verifier")
RUN_UNTRUSTED = os.environ.get("SKILLGYM_RUN_UNTRUSTED", "/opt/skillgym/bin/run-untrusted")
TESTS = os.path.dirname(os.path.abspath(__file__))
APP = os.environ.get("SKILLGYM_APP_DIR", "/app")
SEAL = os.environ.get("SKILLGYM_VERIFIER_SEAL") == "1"


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


def _parent(pid):
    with open(f"/proc/{pid}/stat", encoding="ascii", errors="replace") as handle:
        fields = handle.read().rsplit(")", 1)[1].split()
    return int(fields[1]), fields[0]


def _ancestors():
    chain, pid = set(), os.getpid()
    while pid > 0 and pid not in chain:
        chain.add(pid)
        try:
            pid = _parent(pid)[0]
        except (OSError, ValueError, IndexError):
            break
    return chain


def _processes(keep):
    """``{pid: state}`` of the run's processes this one may signal, but ``keep``."""
    found = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit() or int(entry) in keep:
            continue
        try:
            state = _parent(int(entry))[1]
            os.kill(int(entry), 0)
        except (OSError, ValueError, IndexError):
            continue  # gone, or not ours to signal (then not the agent's either)
        found[int(entry)] = state
    return found


def end_other_processes(deadline_s=10.0):
    """Stop, then kill, every process of the run but this one and its ancestors. Done once two
    listings in a row show no live process and no new one: a process that forked between a
    listing and its signal left a child the next listing holds (a zombie seen by itself says
    nothing of the child it may have made first). Raises SystemExit when processes outlive
    ``deadline_s``: no verdict is then written."""
    keep = _ancestors()
    end = time.monotonic() + deadline_s
    previous = None
    while True:
        present = _processes(keep)
        live = [pid for pid, state in present.items() if state != "Z"]
        if not live and previous is not None and set(present) <= previous:
            return
        for sig in (signal.SIGSTOP, signal.SIGKILL):
            for pid in live:
                with contextlib.suppress(OSError):
                    os.kill(pid, sig)
        with contextlib.suppress(ChildProcessError):
            while os.waitpid(-1, os.WNOHANG)[0] > 0:
                pass
        previous = set(present)
        if time.monotonic() > end:
            raise SystemExit(f"checker error: processes of the run could not be ended: {live[:10]}")
        time.sleep(0.005)


def _clear_logs():
    """``LOGS`` as a plain, writable folder with no reward file in it, whatever was made of it."""
    if os.path.islink(LOGS) or (os.path.lexists(LOGS) and not os.path.isdir(LOGS)):
        os.unlink(LOGS)
    os.makedirs(LOGS, exist_ok=True)
    os.chmod(LOGS, 0o755)
    for name in ("reward.json", "reward.txt"):
        path = os.path.join(LOGS, name)
        if os.path.isdir(path) and not os.path.islink(path):
            shutil.rmtree(path)
        elif os.path.lexists(path):
            os.unlink(path)


def _write_new(name, text):
    fd = os.open(os.path.join(LOGS, name), os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o644)
    with os.fdopen(fd, "w", encoding="utf-8") as handle:
        handle.write(text)


PART = ":"  # a rubric item's part is reported as "item:part"
PARTS = {}


def _scored(check):
    """The check's score in [0, 1] and, when it raised, why."""
    try:
        value = check()
        score = float(value) if not isinstance(value, bool) else (1.0 if value else 0.0)
        detail = ""
    except Exception as exc:  # the agent's output is malformed: the check fails
        score, detail = 0.0, "".join(traceback.format_exception_only(type(exc), exc)).strip()
    return min(1.0, max(0.0, score)), detail


def share(item, checks):
    """The share of ``checks`` (list of (name, callable)) met, for a rubric item made of several
    checks. Each check's own score is reported beside the items as ``item:name``: a check that no
    wrong result ever fails is then seen by its name, not hidden in its item's share."""
    total = 0.0
    for name, check in checks:
        score, detail = _scored(check)
        PARTS[f"{item}{PART}{name}"] = score
        if detail:
            print(f"  {item}{PART}{name}: {detail}")
        total += score
    return total / len(checks) if checks else 1.0


def stated(checks, unstated):
    """``checks`` less those named in ``unstated``: rules this instance does not state (no banned
    terms, no sentence limit). Such a check has nothing to check and could never fail; left in,
    it would read as a check that accepts anything."""
    return [(name, check) for name, check in checks if name not in unstated]


def run(checks):
    """``checks``: list of (name, callable). Writes the reward files and exits 0."""
    weights = load_rubric()
    scores = {}
    for name, check in checks:
        score, detail = _scored(check)
        scores[name] = score
        print(f"[{'PASS' if score >= 1 else 'FAIL'}] {name} = {score:.3f} {detail}")
    missing = sorted(set(weights) - set(scores))
    if missing:
        print(f"checker error: rubric items without a check: {missing}", file=sys.stderr)
        sys.exit(2)
    reward = round(sum(weights[name] * scores.get(name, 0.0) for name in weights), 6)
    parts = {name: score for name, score in PARTS.items() if name.split(PART, 1)[0] in weights}
    if SEAL:
        end_other_processes()
    _clear_logs()
    _write_new("reward.json", json.dumps({"reward": reward, **{name: scores[name] for name in weights}, **parts},
                                         sort_keys=True))
    _write_new("reward.txt", f"{reward}\n")
    print(f"reward = {reward}")
