"""Sessions on the local sandbox: each command a sandbox run of its own on the same host folders."""

from __future__ import annotations

from pathlib import Path

import pytest
from skillgym_core.sandbox.base import Limits, Mount, Outcome
from skillgym_core.sandbox.local import LocalSandbox
from skillgym_core.sandbox.session import SequentialSession, open_session, resume_session

pytestmark = pytest.mark.integration


@pytest.fixture
def session(tmp_path: Path) -> SequentialSession:
    (tmp_path / "ws").mkdir()
    opened = open_session(LocalSandbox(), mounts=[Mount(tmp_path / "ws", "/app", writable=True)], workdir="/app",
                          env=None, limits=Limits(wall_s=600), idle_s=60)  # fmt: skip
    assert isinstance(opened, SequentialSession)
    return opened


def test_files_persist_between_commands_and_stdin_reaches_the_command(session: SequentialSession, tmp_path: Path) -> None:
    assert session.run("cat > note.txt", timeout_s=10, stdin=b"from stdin\n").exit_code == 0
    result = session.run("cat note.txt; echo oops >&2; exit 4", timeout_s=10)
    assert (result.outcome, result.exit_code, result.stdout, result.stderr) == (Outcome.OK, 4, "from stdin\n", "oops\n")
    assert (tmp_path / "ws" / "note.txt").read_text() == "from stdin\n"


def test_each_command_has_its_own_timeout(session: SequentialSession) -> None:
    assert session.run("sleep 30", timeout_s=1).outcome is Outcome.TIMEOUT
    assert session.run("echo alive", timeout_s=5).stdout == "alive\n"


def test_a_sequential_session_resumes_from_its_record(session: SequentialSession, tmp_path: Path) -> None:
    session.run("echo 1 > n", timeout_s=10)
    again = resume_session(LocalSandbox(), session.record(), mounts=session.mounts, workdir="/app", env=None,
                           limits=session.limits)  # fmt: skip
    assert again.run("cat n", timeout_s=10).stdout == "1\n"
    again.close()
