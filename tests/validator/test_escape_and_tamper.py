"""Escape-and-tamper suite: each case is a real task directory whose "agent" tries one attack
through the real sandbox; the attack must fail, be reported with the right outcome, and the
verifier must not pass the run."""

from __future__ import annotations

import os
import socket
import threading
import time
from pathlib import Path

import pytest
from skillgym_core.contracts.task import TaskDir
from skillgym_core.sandbox import Outcome
from skillgym_core.sandbox.cgroups import available_controllers
from skillgym_core.sandbox.local import LocalSandbox
from skillgym_core.taskrun import TaskRunner

from tests.validator.tasks import make_task


@pytest.fixture(scope="module")
def runner() -> TaskRunner:
    return TaskRunner(LocalSandbox())


@pytest.fixture
def task(tmp_path: Path) -> TaskDir:
    return make_task(tmp_path / "task", memory_mb=256)


def attack(runner: TaskRunner, task: TaskDir, tmp_path: Path, command: str, timeout_s: float = 20):
    workspace = runner.fresh_workspace(task, tmp_path)
    result = runner.run_agent_command(task, workspace, command, timeout_s=timeout_s)
    return workspace, result, runner.verify(task, workspace)


def _alive(marker: str) -> list[int]:
    alive = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if marker.encode() in (entry / "cmdline").read_bytes():
                    alive.append(int(entry.name))
            except OSError:
                pass
    return alive


def test_network_access(runner: TaskRunner, task: TaskDir, tmp_path: Path) -> None:
    connections: list[object] = []
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen()
    listener.settimeout(0.2)
    port = listener.getsockname()[1]
    stop = threading.Event()

    def accept() -> None:
        while not stop.is_set():
            try:
                connections.append(listener.accept())
            except OSError:
                continue

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    try:
        command = (
            f"python3 -c \"import socket; socket.create_connection(('127.0.0.1', {port}), 2)\" && echo 7 > answer.txt;"
            f" (exec 3<>/dev/tcp/127.0.0.1/{port}) 2>/dev/null && echo 7 > answer.txt; true"
        )
        _, result, verdict = attack(runner, task, tmp_path, command)
    finally:
        stop.set()
        thread.join()
        listener.close()
    assert connections == []
    assert "Network is unreachable" in result.stderr or "Connection refused" in result.stderr
    assert not verdict.passed and verdict.failure_type == "verifier_rejected"


def test_writing_outside_the_workspace(runner: TaskRunner, task: TaskDir, tmp_path: Path) -> None:
    host_target = tmp_path / "host-file"
    command = (
        f"echo 7 > {host_target}; echo pwned > {task.root}/tests/test.sh; echo pwned > /etc/skillgym-pwned;"
        " mkdir -p /tests && echo 'echo 1 > /logs/verifier/reward.txt' > /tests/test.sh; true"
    )
    _, result, verdict = attack(runner, task, tmp_path, command)
    assert result.outcome is Outcome.OK
    assert not host_target.exists() and not Path("/etc/skillgym-pwned").exists()
    assert "pwned" not in (task.tests / "test.sh").read_text()
    assert not verdict.passed


def test_reading_tests_or_solution(runner: TaskRunner, task: TaskDir, tmp_path: Path) -> None:
    command = (
        "cat /tests/test.sh /solution/solve.sh "
        f"{task.root}/tests/test.sh {task.root}/solution/solve.sh > leaked.txt 2>&1;"
        " grep -o 'expected=\"[0-9]*\"' leaked.txt | grep -o '[0-9]*' > answer.txt; true"
    )
    workspace, _, verdict = attack(runner, task, tmp_path, command)
    assert "expected" not in (workspace / "leaked.txt").read_text()
    assert (workspace / "answer.txt").read_text() == ""
    assert not verdict.passed


def test_prewriting_the_reward_file(runner: TaskRunner, task: TaskDir, tmp_path: Path) -> None:
    command = (
        "mkdir -p /logs/verifier logs/verifier; echo 1 > /logs/verifier/reward.txt;"
        " echo 1 > logs/verifier/reward.txt; echo '{\"reward\": 1}' > logs/verifier/reward.json;"
        " ln -s /app/logs/verifier/reward.txt reward.txt; true"
    )
    _, _, verdict = attack(runner, task, tmp_path, command)
    assert verdict.reward == 0.0 and verdict.failure_type == "verifier_rejected"


def test_editing_protected_inputs(runner: TaskRunner, task: TaskDir, tmp_path: Path) -> None:
    _, _, verdict = attack(runner, task, tmp_path, "echo '3 4' > input.txt; echo ' ' >> input.txt; echo 7 > answer.txt")
    assert verdict.failure_type == "tampered_inputs" and verdict.tampered == ["input.txt"]
    _, _, verdict = attack(runner, task, tmp_path, "rm input.txt; echo 7 > answer.txt")
    assert verdict.failure_type == "tampered_inputs" and not verdict.passed


@pytest.mark.skipif("pids" not in available_controllers(), reason="needs the cgroup v1 pids controller")
def test_fork_bomb(runner: TaskRunner, task: TaskDir, tmp_path: Path) -> None:
    started = time.monotonic()
    _, result, verdict = attack(runner, task, tmp_path, "bomb() { bomb | bomb & }; bomb; sleep 60", timeout_s=4)
    assert result.outcome is Outcome.TIMEOUT
    assert result.detail["pids_limit_hit"] and result.detail["pids_peak"] <= 256
    assert time.monotonic() - started < 30
    assert not verdict.passed


@pytest.mark.skipif("memory" not in available_controllers(), reason="needs the cgroup v1 memory controller")
def test_memory_bomb(runner: TaskRunner, task: TaskDir, tmp_path: Path) -> None:
    command = "python3 -c 'x = [bytearray(16 << 20) for _ in range(64)]' && echo 7 > answer.txt"
    _, result, verdict = attack(runner, task, tmp_path, command)
    assert result.outcome is Outcome.OOM and result.detail["limit"] == "memory_mb"
    assert not verdict.passed


def test_runaway_output(runner: TaskRunner, task: TaskDir, tmp_path: Path) -> None:
    _, result, verdict = attack(runner, task, tmp_path, "yes pwned; echo 7 > answer.txt")
    assert result.outcome is Outcome.OUTPUT_LIMIT and result.truncated
    assert len(result.stdout) == 1_000_000
    assert not verdict.passed


def test_sleeping_past_the_timeout(runner: TaskRunner, task: TaskDir, tmp_path: Path) -> None:
    started = time.monotonic()
    workspace, result, verdict = attack(runner, task, tmp_path, "sleep 30; echo 7 > answer.txt", timeout_s=1)
    assert result.outcome is Outcome.TIMEOUT and time.monotonic() - started < 10
    assert not (workspace / "answer.txt").exists() and not verdict.passed


def test_leaving_background_processes(runner: TaskRunner, task: TaskDir, tmp_path: Path) -> None:
    marker = f"linger-{os.getpid()}-{time.monotonic_ns()}"
    command = (
        f"(exec -a {marker} sleep 300) & "
        f"nohup setsid bash -c 'sleep 1; echo 7 > /app/answer.txt; exec -a {marker} sleep 300' >/dev/null 2>&1 & "
        "disown -a; echo left"
    )
    workspace, result, _ = attack(runner, task, tmp_path, command)
    assert result.ok and result.stdout == "left\n"
    time.sleep(1.5)
    assert _alive(marker) == []
    assert not (workspace / "answer.txt").exists()
    assert not runner.verify(task, workspace).passed


def test_verifier_escape_attempts_are_contained(runner: TaskRunner, tmp_path: Path) -> None:
    """A verifier (task code, untrusted too) gets the same sandbox: no network, no host writes."""
    host_target = tmp_path / "verifier-wrote-here"
    test_sh = (
        f"#!/bin/bash\necho x > {host_target}\n"
        "python3 -c \"import socket; socket.create_connection(('1.1.1.1', 53), 1)\" 2>/dev/null && net=1\n"
        "echo ${net:-0} > /logs/verifier/reward.txt\n"
    )
    task = make_task(tmp_path / "task", test_sh=test_sh)
    verdict = runner.verify(task, runner.fresh_workspace(task, tmp_path))
    assert verdict.reward == 0.0 and not host_target.exists()
