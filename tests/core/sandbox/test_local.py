"""The local sandbox, run for real: isolation, limits and typed outcomes."""

from __future__ import annotations

import contextlib
import os
import socket
import threading
import time
from pathlib import Path

import pytest
from skillgym_core.metrics import SANDBOX_RUNS
from skillgym_core.sandbox import Limits, Mount, Outcome, Sandbox
from skillgym_core.sandbox.cgroups import available_controllers
from skillgym_core.sandbox.local import LocalSandbox


@pytest.fixture(scope="module")
def sandbox() -> LocalSandbox:
    return LocalSandbox()


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "input.txt").write_text("hello\n")
    return ws


def app(ws: Path) -> list[Mount]:
    return [Mount(ws, "/app", writable=True)]


def test_satisfies_protocol_and_describes_itself(sandbox: LocalSandbox) -> None:
    assert isinstance(sandbox, Sandbox)
    info = sandbox.describe()
    assert info["backend"] == "local"
    assert info["enforcement"]["memory"] in ("cgroup_v1", "rlimit_as")


def test_runs_bash_and_python_in_workspace(sandbox: LocalSandbox, workspace: Path) -> None:
    result = sandbox.run(
        ["bash", "-c", "cat input.txt; python3 -c 'print(6*7)' > out.txt; pwd; echo $HOME $FOO"],
        mounts=app(workspace),
        env={"FOO": "bar"},
    )
    assert result.ok, result
    assert result.stdout.split() == ["hello", "/app", "/tmp", "bar"]
    assert (workspace / "out.txt").read_text() == "42\n"


def test_environment_is_cleared(sandbox: LocalSandbox, workspace: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SKILLGYM_SECRET_FOR_TEST", "s3cr3t")
    result = sandbox.run(["env"], mounts=app(workspace))
    assert result.ok
    assert "s3cr3t" not in result.stdout
    assert {line.split("=")[0] for line in result.stdout.splitlines()} <= {
        "PATH", "HOME", "LANG", "TMPDIR", "PWD", "SHLVL", "_", "USER", "LOGNAME", "SKILLGYM_RUN_UNTRUSTED",
    }  # fmt: skip


def test_stdin_is_fed(sandbox: LocalSandbox, workspace: Path) -> None:
    payload = b"x" * 300_000
    result = sandbox.run(["wc", "-c"], mounts=app(workspace), stdin=payload)
    assert result.ok and result.stdout.strip() == str(len(payload))


def test_no_network(sandbox: LocalSandbox, workspace: Path) -> None:
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen()
    port = listener.getsockname()[1]
    try:
        script = (
            "import socket\n"
            f"s=socket.socket(); s.settimeout(2)\n"
            f"try:\n s.connect(('127.0.0.1',{port})); print('CONNECTED')\n"
            "except OSError as e: print('BLOCKED', e)\n"
        )
        result = sandbox.run(["python3", "-c", script], mounts=app(workspace))
        ifaces = sandbox.run(["cat", "/proc/net/dev"], mounts=app(workspace))
    finally:
        listener.close()
    assert "BLOCKED" in result.stdout
    assert [ln.split(":")[0].strip() for ln in ifaces.stdout.splitlines()[2:]] == ["lo"]


def test_no_write_outside_workspace(sandbox: LocalSandbox, workspace: Path, tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    result = sandbox.run(
        [
            "bash", "-c",
            f"for p in /etc/pwned /usr/pwned /pwned {outside}/pwned /root/pwned; do "
            "touch $p 2>/dev/null && echo WROTE $p; done; "
            "mount -o remount,rw / 2>/dev/null && echo REMOUNTED; "
            "echo private > /tmp/scratch; echo ok > /app/inside",
        ],
        mounts=app(workspace),
    )  # fmt: skip
    assert result.ok, result
    assert "WROTE" not in result.stdout and "REMOUNTED" not in result.stdout
    assert (workspace / "inside").read_text() == "ok\n"
    assert not (outside / "pwned").exists() and not Path("/etc/pwned").exists()


def test_reads_only_what_is_mounted(sandbox: LocalSandbox, workspace: Path, tmp_path: Path) -> None:
    secret = tmp_path / "secret"
    secret.mkdir()
    (secret / "answer.txt").write_text("42")
    readonly = tmp_path / "ro"
    readonly.mkdir()
    (readonly / "data.txt").write_text("data")
    result = sandbox.run(
        ["bash", "-c", f"cat {secret}/answer.txt; ls /root /work /home 2>&1; cat /ro/data.txt; echo x > /ro/w"],
        mounts=[*app(workspace), Mount(readonly, "/ro")],
    )
    assert "42" not in result.stdout
    assert "data" in result.stdout
    assert not (readonly / "w").exists()
    assert "Read-only file system" in result.stderr


def test_host_secrets_under_etc_are_masked(sandbox: LocalSandbox, workspace: Path) -> None:
    result = sandbox.run(
        ["bash", "-c", "cat /etc/shadow /etc/gshadow; ls -A /etc/ssh | wc -l; head -c 5 /etc/passwd"],
        mounts=app(workspace),
    )
    assert result.stdout.split() == ["0", "root:"]
    assert "/etc/shadow: Permission denied" in result.stderr


def _pids_alive(marker: str) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if marker in (entry / "cmdline").read_bytes().decode(errors="replace"):
                    found.append(int(entry.name))
            except OSError:
                continue
    return found


def test_timeout_kills_the_whole_process_tree(sandbox: LocalSandbox, workspace: Path) -> None:
    marker = f"sleep-marker-{os.getpid()}-{time.monotonic_ns()}"
    script = f"(exec -a {marker} sleep 60) & (setsid bash -c 'exec -a {marker} sleep 60' &) ; exec -a {marker} sleep 60"
    started = time.monotonic()
    result = sandbox.run(["bash", "-c", script], mounts=app(workspace), limits=Limits(wall_s=1))
    assert result.outcome is Outcome.TIMEOUT and result.exit_code is None
    assert time.monotonic() - started < 5
    deadline = time.monotonic() + 2
    while _pids_alive(marker) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert _pids_alive(marker) == []


def test_background_processes_die_with_the_command(sandbox: LocalSandbox, workspace: Path) -> None:
    marker = f"bg-marker-{os.getpid()}-{time.monotonic_ns()}"
    result = sandbox.run(
        ["bash", "-c", f"(exec -a {marker} sleep 60) >/dev/null 2>&1 & echo started"],
        mounts=app(workspace),
        limits=Limits(wall_s=10),
    )
    assert result.ok and result.duration_s < 5
    time.sleep(0.2)
    assert _pids_alive(marker) == []


def test_output_is_capped(sandbox: LocalSandbox, workspace: Path) -> None:
    result = sandbox.run(["yes"], mounts=app(workspace), limits=Limits(output_bytes=10_000, wall_s=10))
    assert result.outcome is Outcome.OUTPUT_LIMIT and result.truncated
    assert len(result.stdout) == 10_000


def test_nonzero_exit_is_ok_outcome(sandbox: LocalSandbox, workspace: Path) -> None:
    result = sandbox.run(["bash", "-c", "echo err >&2; exit 3"], mounts=app(workspace))
    assert result.outcome is Outcome.OK and result.exit_code == 3 and not result.ok
    assert result.stderr == "err\n"


def test_bad_mounts_are_sandbox_errors(sandbox: LocalSandbox, workspace: Path) -> None:
    for mounts in ([Mount(workspace, "relative")], [Mount(workspace, "/usr")], [Mount(workspace, "//usr")],
                   [Mount(workspace, "//tmp/")], [Mount(workspace / "nope", "/x")]):
        result = sandbox.run(["true"], mounts=mounts)
        assert result.outcome is Outcome.SANDBOX_ERROR
        assert result.detail["reason"] == "bad_mount"


def test_missing_command_fails_inside(sandbox: LocalSandbox, workspace: Path) -> None:
    result = sandbox.run(["definitely-not-a-command"], mounts=app(workspace))
    assert result.outcome is Outcome.OK and result.exit_code != 0
    assert "definitely-not-a-command" in result.stderr


@pytest.mark.skipif("memory" not in available_controllers(), reason="needs the cgroup v1 memory controller")
def test_memory_bomb_is_oom(sandbox: LocalSandbox, workspace: Path) -> None:
    result = sandbox.run(
        ["python3", "-c", "x = bytearray(400 * 1024 * 1024); print(len(x))"],
        mounts=app(workspace),
        limits=Limits(memory_mb=128, wall_s=20),
    )
    assert result.outcome is Outcome.OOM, result


@pytest.mark.skipif("pids" not in available_controllers(), reason="needs the cgroup v1 pids controller")
def test_fork_bomb_is_contained(sandbox: LocalSandbox, workspace: Path) -> None:
    result = sandbox.run(
        ["bash", "-c", "bomb() { bomb | bomb & }; bomb; sleep 30"],
        mounts=app(workspace),
        limits=Limits(pids=64, wall_s=3),
    )
    assert result.outcome in (Outcome.TIMEOUT, Outcome.OK)
    assert result.detail["pids_peak"] <= 64
    assert result.detail["pids_limit_hit"]


def test_cpu_time_limit_kills(sandbox: LocalSandbox, workspace: Path) -> None:
    result = sandbox.run(
        ["python3", "-c", "while True: pass"], mounts=app(workspace), limits=Limits(cpu_s=1, wall_s=20)
    )
    assert result.outcome is Outcome.KILLED
    assert result.duration_s < 10


def test_concurrent_runs_get_their_own_cgroups(sandbox: LocalSandbox, tmp_path: Path) -> None:
    controllers = available_controllers()
    if "memory" not in controllers:
        pytest.skip("needs the cgroup v1 memory controller")
    own_before = Path("/proc/thread-self/cgroup").read_text()
    inside: dict[int, str] = {}

    def work(index: int) -> None:
        ws = tmp_path / f"ws{index}"
        ws.mkdir()
        result = sandbox.run(["bash", "-c", "cat /proc/self/cgroup; sleep 0.6"], mounts=app(ws))
        assert result.ok
        inside[index] = next(line for line in result.stdout.splitlines() if ":memory:" in line)
        assert "skillgym-run-" not in Path("/proc/thread-self/cgroup").read_text()

    threads = [threading.Thread(target=work, args=(i,)) for i in range(4)]
    for thread in threads:
        thread.start()
    occupied: set[str] = set()
    while any(thread.is_alive() for thread in threads):
        for group in controllers["memory"].glob(f"skillgym-run-{os.getpid()}-*"):
            with contextlib.suppress(OSError):
                if (group / "cgroup.procs").read_text().split():
                    occupied.add(group.name)
        time.sleep(0.02)
    for thread in threads:
        thread.join()
    assert len(occupied) == 4  # each run in a cgroup of its own, seen from the host
    # inside, the cgroup namespace hides the host's cgroup paths
    assert set(inside.values()) == {"4:memory:/"} or all(line.endswith(":/") for line in inside.values())
    assert Path("/proc/thread-self/cgroup").read_text() == own_before


def test_runs_are_counted_in_metrics(sandbox: LocalSandbox, workspace: Path) -> None:
    before = SANDBOX_RUNS.labels("local", "timeout")._value.get()
    sandbox.run(["sleep", "5"], mounts=app(workspace), limits=Limits(wall_s=0.2))
    assert SANDBOX_RUNS.labels("local", "timeout")._value.get() == before + 1


def test_the_wall_clock_counts_the_command_not_the_sandbox_set_up(sandbox: LocalSandbox, workspace: Path) -> None:
    # bwrap needs longer than 10 ms to build the namespaces; the limit still ends the command, not the set-up
    result = sandbox.run(["sleep", "5"], mounts=app(workspace), limits=Limits(wall_s=0.01))
    assert result.outcome is Outcome.TIMEOUT and result.duration_s < 5


def test_rlimit_fallback_without_cgroups(workspace: Path) -> None:
    fallback = LocalSandbox(use_cgroups=False)
    info = fallback.describe()
    assert info["enforcement"]["memory"] == "rlimit_as" and info["cgroup_v1"] == {}
    bomb = fallback.run(
        ["python3", "-c", "x = bytearray(400 * 1024 * 1024)"], mounts=app(workspace), limits=Limits(memory_mb=128)
    )
    assert bomb.exit_code != 0 and "MemoryError" in bomb.stderr
    spin = fallback.run(["python3", "-c", "while True: pass"], mounts=app(workspace), limits=Limits(cpu_s=1, wall_s=20))
    assert spin.outcome is Outcome.KILLED and spin.detail["signal"] in ("SIGXCPU", "SIGKILL")
    slow = fallback.run(["bash", "-c", "sleep 30 & sleep 30"], mounts=app(workspace), limits=Limits(wall_s=0.5))
    assert slow.outcome is Outcome.TIMEOUT


def test_file_size_limit(sandbox: LocalSandbox, workspace: Path) -> None:
    result = sandbox.run(
        ["bash", "-c", "head -c 3000000 /dev/zero > big.bin"], mounts=app(workspace), limits=Limits(file_size_mb=1)
    )
    assert result.outcome is Outcome.KILLED and result.detail["signal"] == "SIGXFSZ"
    assert (workspace / "big.bin").stat().st_size <= 1024 * 1024


@pytest.mark.skipif(os.geteuid() != 0, reason="ownership hand-over needs root")
def test_files_the_host_adds_between_runs_stay_writable(sandbox: LocalSandbox, workspace: Path) -> None:
    assert sandbox.run(["bash", "-c", "echo one > first.txt"], mounts=app(workspace)).ok
    (workspace / "added" / "deeper").mkdir(parents=True)
    (workspace / "added" / "deeper" / "note.txt").write_text("from the host\n")
    result = sandbox.run(
        ["bash", "-c", "echo more >> added/deeper/note.txt && touch added/new.txt && rm first.txt"], mounts=app(workspace)
    )
    assert result.ok, result
    assert (workspace / "added" / "deeper" / "note.txt").read_text() == "from the host\nmore\n"
    assert (workspace / "added" / "new.txt").exists() and not (workspace / "first.txt").exists()
