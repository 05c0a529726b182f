"""The container sandbox on a real engine (Podman's Docker Engine API): task Dockerfiles built and
cached, and every run a fresh, offline, unprivileged, read-only container under the run's limits."""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from skillgym_core.envbuild.image import ImageProvider
from skillgym_core.envbuild.provider import EnvironmentBuildError
from skillgym_core.sandbox.base import ImageRoot, Limits, Mount, Outcome
from skillgym_core.sandbox.container.backend import ContainerSandbox
from skillgym_core.sandbox.container.images import PYTHON_BASE, ImageBuilder
from skillgym_core.sandbox.owned_dirs import process_tag

from tests.support.podman import PodmanService, podman_cli

pytestmark = [pytest.mark.integration, pytest.mark.slow, pytest.mark.deferred_service]
UID = 2_000_000


@pytest.fixture(scope="module")
def sandbox(podman: PodmanService) -> Iterator[ContainerSandbox]:
    sandbox = ContainerSandbox(engine_url=podman.url, uid=UID)
    yield sandbox
    sandbox.client.close()


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    folder = tmp_path / "app"
    folder.mkdir()
    os.chown(folder, UID, UID)
    return folder


def context(root: Path, dockerfile: str, **files: str) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    (root / "Dockerfile").write_text(dockerfile)
    for name, text in files.items():
        (root / name).write_text(text)
    return root


def test_a_dockerfile_is_built_with_its_instructions_and_cached_by_content(sandbox: ContainerSandbox,
                                                                           tmp_path: Path) -> None:
    ctx = context(tmp_path / "ctx", "FROM python:3.11-slim\nARG LEVEL=3\nENV GREETING=hello LEVEL=$LEVEL\n"
                  "WORKDIR /srv/data\nCOPY table.csv ./\nRUN python -c \"print('built')\" > built.txt && "
                  "useradd -u 1234 worker\nUSER worker\nRUN id -u > /tmp/build-user\n", **{"table.csv": "a,b\n1,2\n"},
                  nonce=uuid.uuid4().hex)  # a new image on every run of the test
    builder = ImageBuilder(sandbox.client)
    built = builder.ensure(ctx)
    assert not built.cache_hit and built.substitutions == {"python:3.11-slim": PYTHON_BASE}
    assert "nearest local base" in built.warnings[0]
    result = sandbox.run(["sh", "-c", "echo $GREETING $LEVEL; pwd; cat table.csv built.txt"],
                         mounts=[ImageRoot(image=built.tag)], workdir="/srv/data")
    assert result.ok, result
    assert result.stdout.split("\n")[:5] == ["hello 3", "/srv/data", "a,b", "1,2", "built"]
    again = builder.ensure(ctx)
    assert again.cache_hit and again.tag == built.tag and again.build_seconds == 0.0
    (ctx / "table.csv").write_text("a,b\n3,4\n")
    assert builder.ensure(ctx).tag != built.tag


def test_a_broken_dockerfile_is_a_typed_error_with_the_build_log_tail(sandbox: ContainerSandbox, tmp_path: Path) -> None:
    ctx = context(tmp_path / "broken", "FROM python:3.11\nRUN echo preparing && exit 7\n")
    builder = ImageBuilder(sandbox.client)
    with pytest.raises(EnvironmentBuildError) as caught:
        builder.ensure(ctx)
    assert caught.value.reason == "environment_build_failed"
    assert "exit 7" in caught.value.log_tail and "preparing" in caught.value.log_tail
    builds: list[str] = []
    original = builder._build
    builder._build = lambda *args: builds.append("again") or original(*args)  # type: ignore[method-assign]
    with pytest.raises(EnvironmentBuildError) as again:
        builder.ensure(ctx)  # every run of the task asks: the failure is answered from memory
    assert (str(again.value), again.value.details) == (str(caught.value), caught.value.details) and builds == []
    with pytest.raises(EnvironmentBuildError) as missing:
        ImageBuilder(sandbox.client).ensure(context(tmp_path / "node", "FROM node:20\n"))
    assert missing.value.reason == "base_image_unavailable"


def test_runs_are_unprivileged_read_only_and_write_only_their_mounts(sandbox: ContainerSandbox, workspace: Path) -> None:
    result = sandbox.run(
        ["sh", "-c", "id -u; grep CapEff /proc/self/status; grep NoNewPrivs /proc/self/status; "
                     "grep Seccomp: /proc/self/status; echo made > out.txt; touch /etc/x /usr/x 2>&1; echo scratch > /tmp/t"],
        mounts=[Mount(workspace, "/app", writable=True)])
    lines = result.stdout.splitlines()
    assert lines[0] == str(UID)
    assert lines[1].split()[1] == "0000000000000000" and lines[2].split()[1] == "1" and lines[3].split()[1] == "2"
    assert "Read-only file system" in result.stdout + result.stderr
    assert (workspace / "out.txt").read_text() == "made\n" and (workspace / "out.txt").stat().st_uid == UID
    assert sandbox.run(["cat", "/tmp/t"], mounts=[]).exit_code != 0  # every run is a fresh container


def test_the_verifiers_confining_runner_works_in_containers(sandbox: ContainerSandbox, workspace: Path,
                                                            tmp_path: Path) -> None:
    logs = tmp_path / "logs"
    (logs / "verifier").mkdir(parents=True)
    os.chown(logs / "verifier", UID, UID)
    script = ('python3 "$SKILLGYM_RUN_UNTRUSTED" -- sh -c "echo 1 > /logs/verifier/reward.txt"; echo "denied=$?"; '
              'python3 "$SKILLGYM_RUN_UNTRUSTED" -- sh -c "echo ok > made.txt"; echo "allowed=$?"')
    result = sandbox.run(["sh", "-c", script], mounts=[Mount(workspace, "/app", writable=True),
                                                       Mount(logs, "/logs", writable=True)])
    assert "denied=0" not in result.stdout and "allowed=0" in result.stdout, result.stdout + result.stderr
    assert not (logs / "verifier" / "reward.txt").exists() and (workspace / "made.txt").read_text() == "ok\n"


def test_read_only_mounts_stay_read_only_and_the_host_is_not_visible(sandbox: ContainerSandbox, tmp_path: Path) -> None:
    data = tmp_path / "data"
    data.mkdir()
    (data / "input.txt").write_text("x")
    result = sandbox.run(["sh", "-c", "cat /data/input.txt; echo y > /data/input.txt; ls /work /root 2>&1"],
                         mounts=[Mount(data, "/data")])
    assert result.stdout.startswith("x") and (data / "input.txt").read_text() == "x"
    assert "No such file" in result.stdout + result.stderr or "Permission denied" in result.stdout + result.stderr


def test_the_network_is_off_at_run_time(sandbox: ContainerSandbox) -> None:
    result = sandbox.run(["python3", "-c", "import socket; socket.create_connection(('deb.debian.org', 80), 3)"], mounts=[])
    assert result.exit_code != 0
    interfaces = sandbox.run(["cat", "/proc/net/dev"], mounts=[]).stdout
    assert [line.split(":")[0].strip() for line in interfaces.splitlines()[2:]] == ["lo"]


def test_limits_end_runs_that_exceed_them(sandbox: ContainerSandbox) -> None:
    slow = sandbox.run(["sleep", "30"], mounts=[], limits=Limits(wall_s=1.5))
    assert slow.outcome is Outcome.TIMEOUT and slow.duration_s < 15
    hungry = sandbox.run(["python3", "-c", "b = bytearray(600 * 1024 * 1024); print(len(b))"], mounts=[],
                         limits=Limits(memory_mb=128))
    assert hungry.outcome is Outcome.OOM and hungry.exit_code == 137 and hungry.detail["limit"] == "memory_mb"
    forks = sandbox.run(["python3", "-c", "import os\nn=0\ntry:\n  while n<500:\n    if os.fork()==0:\n      import time; "
                         "time.sleep(5); os._exit(0)\n    n+=1\nexcept OSError: print('refused at', n)"], mounts=[],
                        limits=Limits(pids=20))
    assert "refused at" in forks.stdout and int(forks.stdout.split()[-1]) < 20
    chatty = sandbox.run(["sh", "-c", "yes | head -c 300000"], mounts=[], limits=Limits(output_bytes=10_000))
    assert chatty.outcome is Outcome.OUTPUT_LIMIT and chatty.truncated and len(chatty.stdout) <= 10_000


def test_out_of_memory_is_told_from_a_plain_sigkill(sandbox: ContainerSandbox) -> None:
    limits = Limits(memory_mb=64)
    hog = sandbox.run(["python3", "-c", "a = bytearray(10**9)"], mounts=[], limits=limits)
    assert hog.outcome is Outcome.OOM and hog.exit_code == 137, hog
    outlived = sandbox.run(["sh", "-c", "python3 -c 'a = bytearray(10**9)'; echo survived"], mounts=[], limits=limits)
    assert outlived.outcome is Outcome.OOM and outlived.exit_code == 0 and outlived.stdout == "survived\n"
    # the shell stays PID 1: the kernel ignores a signal PID 1 of a namespace sends itself
    shot = sandbox.run(["sh", "-c", "python3 -c 'import os; a = bytearray(16 << 20); os.kill(os.getpid(), 9)'; exit $?"],
                       mounts=[], limits=limits)
    assert shot.outcome is Outcome.KILLED and shot.exit_code == 137 and "limit" not in shot.detail, shot


def test_stdin_reaches_the_command(sandbox: ContainerSandbox) -> None:
    result = sandbox.run(["python3", "-c", "import sys; print(sys.stdin.read()[::-1])"], mounts=[], stdin=b"abc")
    assert result.stdout.strip() == "cba"


def test_a_runs_files_are_removed_and_those_of_a_killed_process_swept(
    sandbox: ContainerSandbox, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    code = "from skillgym_core.sandbox.owned_dirs import process_tag; print(process_tag())"
    dead = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip()
    left = tmp_path / f"skillgym-ctr-{dead}" / "run-killed"
    left.mkdir(parents=True)
    (left / "run-untrusted").write_text("")
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    assert sandbox.run(["cat", "/.skillgym-stdin"], mounts=[], stdin=b"in").stdout == "in"
    assert [(path.name, list(path.iterdir())) for path in tmp_path.iterdir()] == [(f"skillgym-ctr-{process_tag()}", [])]


def test_no_container_outlives_its_run(sandbox: ContainerSandbox) -> None:
    # Other test processes run containers on the same engine at the same time: only this test's
    # runs, told by a marker in their command, are looked for.
    marker = f"outlives-{uuid.uuid4().hex[:12]}"

    def listed() -> set[str]:
        done = podman_cli("ps", "-a", "--no-trunc", "--filter", "label=io.skillgym.sandbox-run",
                          "--format", "{{.ID}} {{.Command}}")
        assert done.returncode == 0, done.stderr
        return {line.split()[0] for line in done.stdout.splitlines() if marker in line}

    ran = sandbox.run(["sh", "-c", f"(sleep 60 &) ; echo started # {marker}"], mounts=[])
    assert ran.stdout == "started\n"
    assert listed() == set()
    killed = sandbox.run(["sh", "-c", f"sleep 60 # {marker}"], mounts=[], limits=Limits(wall_s=1))
    assert killed.outcome is not Outcome.OK
    assert listed() == set()
    # the marker is seen while such a run is alive: the check above can fail
    created = sandbox.client.containers.create(PYTHON_BASE, ["sh", "-c", f"sleep 60 # {marker}"],
                                               labels={"io.skillgym.sandbox-run": "1"})
    try:
        assert listed() == {created.id}
    finally:
        created.remove(force=True)


def test_a_task_without_a_dockerfile_runs_on_the_default_base(sandbox: ContainerSandbox, tmp_path: Path) -> None:
    from skillgym_core.contracts.task import TaskDir

    (tmp_path / "task" / "environment").mkdir(parents=True)
    assert ImageProvider(sandbox.client).prepare(TaskDir(tmp_path / "task")) is None
    assert sandbox.run(["python3", "--version"], mounts=[]).stdout.startswith("Python 3.11")
