"""Waiting for the components ``install-services.sh --defer-builds`` builds in the background."""

from __future__ import annotations

import subprocess
import threading
import time
from pathlib import Path

import pytest

from tests.support.services import ServiceStartError, await_deferred_install


def _job(directory: Path, component: str, status: str) -> subprocess.Popen[bytes]:
    directory.mkdir(exist_ok=True)
    (directory / f"{component}.status").write_text(f"{status}\n")
    (directory / f"{component}.log").write_text("go: building ...\nerror: out of disk\n")
    job = subprocess.Popen(["sleep", "30"])
    (directory / "job.pid").write_text(str(job.pid))
    return job


def test_a_component_never_deferred_is_not_waited_for(tmp_path: Path) -> None:
    await_deferred_install("s3", timeout=0.1, directory=tmp_path)


def test_waits_until_the_background_job_finishes(tmp_path: Path) -> None:
    job = _job(tmp_path, "s3", "running")
    finish = threading.Timer(0.5, lambda: (tmp_path / "s3.status").write_text("ok\n"))
    finish.start()
    started = time.monotonic()
    try:
        await_deferred_install("s3", timeout=30, directory=tmp_path)
    finally:
        job.kill()
        job.wait()
    assert time.monotonic() - started >= 0.4


def test_a_failed_build_is_a_typed_error_with_its_log(tmp_path: Path) -> None:
    job = _job(tmp_path, "llama-server", "failed (exit 1)")
    try:
        with pytest.raises(ServiceStartError, match="background install failed") as raised:
            await_deferred_install("llama-server", directory=tmp_path)
    finally:
        job.kill()
        job.wait()
    assert raised.value.service == "llama-server"
    assert "out of disk" in str(raised.value)


def test_a_job_that_died_while_running_is_an_error_not_a_hang(tmp_path: Path) -> None:
    job = _job(tmp_path, "s3", "running")
    job.kill()
    job.wait()
    with pytest.raises(ServiceStartError, match="stopped before finishing"):
        await_deferred_install("s3", timeout=60, directory=tmp_path)


def test_a_build_past_the_timeout_is_an_error(tmp_path: Path) -> None:
    job = _job(tmp_path, "s3", "running")
    try:
        with pytest.raises(ServiceStartError, match="still runs after"):
            await_deferred_install("s3", timeout=0.5, directory=tmp_path)
    finally:
        job.kill()
        job.wait()
