"""Fuzzing the trusted verifier runtime with generated hostile workspaces.

Each case is a workspace an agent could have left: answers that are links into ``/tests`` and
``/logs``, relative escapes, loops, FIFOs, deep chains, sparse files, odd names, forged reward
files, agent scripts the verifier runs (through ``run-untrusted``) that try to write the
verdict or leave writers behind, and git configs with hooks. An independent oracle says
whether the workspace truly holds the right answer; the verifier must agree with it on every
case, never crash, and leave no scratch directory or mount behind."""

from __future__ import annotations

import json
import os
import random
import re
import tempfile
from pathlib import Path

import pytest
from skillgym_core.sandbox.janitor import mount_points_below, remove_tree, wait_idle
from skillgym_core.sandbox.local import LocalSandbox
from skillgym_core.taskrun import TaskRunner

from tests.support import verdict_attacks
from tests.validator.tasks import make_task

pytestmark = [pytest.mark.slow, pytest.mark.skipif(os.geteuid() != 0, reason="needs the root-started sandbox")]

CASES = int(os.environ.get("SKILLGYM_FUZZ_CASES", "1000"))
ANSWER = "7"
VERIFIER = """#!/bin/bash
cd /app
if [ -f /app/check.sh ] && [ ! -L /app/check.sh ]; then
  "$SKILLGYM_RUN_UNTRUSTED" --timeout 5 --writable /tmp -- bash /app/check.sh >/dev/null 2>&1
fi
git status >/dev/null 2>&1
if [ -f /app/answer.txt ] && [ ! -L /app/answer.txt ] && [ "$(cat /app/answer.txt)" = "7" ]; then
  echo 1 > /logs/verifier/reward.txt
else
  echo 0 > /logs/verifier/reward.txt
fi
"""
AGENT_SCRIPTS = [
    "echo 1 > /logs/verifier/reward.txt",
    "echo '{\"reward\": 1}' > /logs/verifier/reward.json",
    "(sleep 0.2; echo 1 > /logs/verifier/reward.txt) & disown",
    "setsid bash -c 'for i in $(seq 50); do echo 1 > /logs/verifier/reward.json; sleep 0.02; done' &",
    "cp /tests/expected.txt /app/answer.txt",
    "echo 7 > /app/answer.txt",
    "ln -sf /tests/expected.txt /app/answer.txt",
    "kill -9 $PPID",
    "cat /tests/test.sh > /tmp/leak; echo 1 > /proc/1/fd/1",
]
FORGED_REWARDS = ["1", "1.0", '{"reward": 1}', "1" + "0" * 400, "[" * 3000, "NaN", "\x00\xff", "2"]


def _write(path: Path, data: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)


def _answer(ws: Path, rng: random.Random) -> bool:
    """Plant /app/answer.txt in one of many forms; True when it truly holds the answer."""
    kind = rng.choice(
        ["right", "wrong", "empty", "link_tests", "link_logs", "link_rel_escape", "link_inside_right",
         "link_inside_wrong", "link_loop", "fifo", "dir", "link_dangling", "link_proc", "hardlink_right",
         "abs_inside_right", "missing", "link_chain_right", "binary"]
    )  # fmt: skip
    target = ws / "answer.txt"
    if kind == "right":
        target.write_text(ANSWER + "\n")
        return True
    if kind == "wrong":
        target.write_text(str(rng.randint(8, 10**6)) + "\n")
    elif kind == "empty":
        target.write_text("")
    elif kind == "binary":
        target.write_bytes(bytes(rng.randrange(256) for _ in range(rng.randint(1, 64))))
    elif kind == "link_tests":
        target.symlink_to(rng.choice(["/tests/expected.txt", "/tests", "/tests/../tests/expected.txt"]))
    elif kind == "link_logs":
        target.symlink_to("/logs/verifier/reward.txt")
    elif kind == "link_rel_escape":
        target.symlink_to("../" * rng.randint(1, 8) + "tests/expected.txt")
    elif kind in ("link_inside_right", "link_inside_wrong"):
        _write(ws / "sub" / "real.txt", (ANSWER if kind == "link_inside_right" else "8").encode() + b"\n")
        target.symlink_to("sub/real.txt")
        return kind == "link_inside_right"
    elif kind == "abs_inside_right":
        _write(ws / "real.txt", ANSWER.encode() + b"\n")
        target.symlink_to("/app/real.txt")
        return True
    elif kind == "link_chain_right":
        _write(ws / "c" / "final.txt", ANSWER.encode() + b"\n")
        (ws / "c" / "hop").symlink_to("final.txt")
        target.symlink_to("c/hop")
        return True
    elif kind == "link_loop":
        target.symlink_to("answer.txt")
    elif kind == "link_dangling":
        target.symlink_to("nowhere/at/all")
    elif kind == "link_proc":
        target.symlink_to("/proc/self/root/tests/expected.txt")
    elif kind == "fifo":
        os.mkfifo(target)
    elif kind == "dir":
        target.mkdir()
    elif kind == "hardlink_right":
        _write(ws / "orig.txt", ANSWER.encode() + b"\n")
        os.link(ws / "orig.txt", target)
        return True
    return False


def _chain(ws: Path, depth: int) -> None:
    """``d/d/d/...`` ``depth`` levels deep (past PATH_MAX, so built with directory descriptors)."""
    fd = os.open(ws, os.O_RDONLY | os.O_DIRECTORY)
    try:
        for _ in range(depth):
            if not os.path.lexists(f"/proc/self/fd/{fd}/d"):
                os.mkdir("d", dir_fd=fd)
            inner = os.open("d", os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW, dir_fd=fd)
            os.close(fd)
            fd = inner
    finally:
        os.close(fd)


def _noise(ws: Path, rng: random.Random) -> None:
    for _ in range(rng.randint(0, 4)):
        choice = rng.randrange(7)
        if choice == 0:
            forged = rng.choice(FORGED_REWARDS).encode("utf-8", "surrogateescape")
            _write(ws / "logs" / "verifier" / rng.choice(["reward.txt", "reward.json"]), forged)
        elif choice == 1:
            _chain(ws, rng.randint(50, 1300))
        elif choice == 2:
            with open(ws / f"sparse-{rng.randrange(10**6)}", "wb") as handle:
                handle.truncate(rng.randint(1, 64) << 20)
        elif choice == 3:
            name = "".join(rng.choice("aé\u2603 -_.") for _ in range(rng.randint(1, 40))).strip(".") or "x"
            _write(ws / "odd" / name, b"x")
        elif choice == 4:
            (ws / f"esc-{rng.randrange(10**6)}").symlink_to(rng.choice(["/etc/shadow", "/root", "../..", "/logs"]))
        elif choice == 5:
            _write(ws / ".git" / "config", b"[core]\n\tfsmonitor = echo 1 > /logs/verifier/reward.txt\n")
            _write(ws / ".git" / "HEAD", b"ref: refs/heads/main\n")
            (ws / ".git" / "objects").mkdir(exist_ok=True)
            (ws / ".git" / "refs").mkdir(exist_ok=True)
        else:
            _write(ws / "check.sh", "\n".join(rng.sample(AGENT_SCRIPTS, rng.randint(1, 3))).encode())


def test_no_hostile_workspace_earns_an_unwritten_reward(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    task = make_task(tmp_path / "task", test_sh=VERIFIER, extra_tests={"expected.txt": ANSWER + "\n"}, protected=())
    config = task.config()
    config.environment.storage_mb = 128
    task.write_config(config)
    runner = TaskRunner(LocalSandbox(), environment=None, judge=None, max_workspace_files=20_000)
    rng = random.Random(20261201)
    parent = tmp_path / "workspaces"
    parent.mkdir()
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(scratch))  # the verifier's scratch lands here
    mismatches, failures = [], {}
    for case in range(CASES):
        workspace = runner.fresh_workspace(task, parent)
        truly_right = _answer(workspace, rng)
        _noise(workspace, rng)
        verdict = runner.verify(task, workspace)
        failures[verdict.failure_type] = failures.get(verdict.failure_type, 0) + 1
        if verdict.passed != truly_right or (verdict.reward >= 1.0) != truly_right:
            mismatches.append((case, truly_right, verdict.to_dict()))
        assert remove_tree(workspace)
    wait_idle()
    assert mismatches == [], json.dumps(mismatches[:2], default=str)[:3000]
    # every verifier scratch removed: only this process's (empty) directory for them remains
    assert [(entry.name.startswith("skillgym-verify-"), list(entry.iterdir())) for entry in scratch.iterdir()] == [
        (True, [])
    ]
    assert mount_points_below(tmp_path) == []  # every volume detached
    assert failures.get(None, 0) > CASES // 20  # the oracle's right answers did pass


UNCONFINED_CASES = int(os.environ.get("SKILLGYM_FUZZ_UNCONFINED_CASES", "60"))


def test_no_tool_a_checker_runs_unconfined_earns_an_unwritten_reward(tmp_path: Path) -> None:
    """The built-in checker runs the agent's ``tool.sh`` with its own rights (the shape the
    reviewer refuses): tools made of one to three forging attacks and agent scripts, in any
    order, with a right or wrong answer. Such a tool may change the answer the checker reads, or
    kill the checker (the agent then loses its own reward), but a recorded pass is always the
    one the checker computed and printed, never one the tool wrote."""
    task = verdict_attacks.unconfined_checker_task(tmp_path / "task")
    runner = TaskRunner(LocalSandbox(), environment=None, judge=None)
    rng = random.Random(20261206)
    parts = [*verdict_attacks.ATTACKS.values(), *(line + "\n" for line in AGENT_SCRIPTS)]
    forged = []
    for case in range(UNCONFINED_CASES):
        tool = "".join(rng.sample(parts, rng.randint(1, 3)))
        workspace = runner.fresh_workspace(task, tmp_path)
        (workspace / "answer.txt").write_text(("7" if rng.random() < 0.5 else str(rng.randint(8, 99))) + "\n")
        (workspace / "tool.sh").write_text(tool)
        verdict = runner.verify(task, workspace)
        printed = re.search(r"^reward = ([0-9.]+)$", verdict.result.stdout if verdict.result else "", re.MULTILINE)
        checkers = float(printed.group(1)) if printed else None
        if verdict_attacks.FORGED_KEY in verdict.rewards or (verdict.passed and verdict.reward != checkers):
            forged.append((case, tool[:300], verdict.to_dict()))
        runner.discard_workspace(workspace)
    wait_idle()
    assert forged == [], json.dumps(forged[:2], default=str)[:3000]
