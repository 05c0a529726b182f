"""Bind mounts that make host sources reachable by the sandbox uid."""

from __future__ import annotations

import errno
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from skillgym_core.sandbox import hostmounts
from skillgym_core.sandbox.hostmounts import Staging, reach_persistently
from skillgym_core.sandbox.janitor import mount_points_below

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="bind mounts need root")


def test_a_persistent_stage_is_read_only_so_a_recursive_delete_cannot_reach_the_source(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    source = tmp_path / "private" / "python"
    (source / "lib").mkdir(parents=True)
    (source / "lib" / "os.py").write_text("# the host's interpreter\n")
    (tmp_path / "private").chmod(0o700)  # the sandbox uid cannot reach it: it has to be staged
    monkeypatch.setenv("SKILLGYM_SANDBOX_STAGING", str(tmp_path / "staging"))
    monkeypatch.setattr(hostmounts, "_persistent", {})
    hostmounts._staging_root.cache_clear()
    try:
        staged = reach_persistently(source, 65534, 65534)
        assert staged != source and (staged / "lib" / "os.py").read_text() == "# the host's interpreter\n"
        for attempt in (lambda: (staged / "lib" / "os.py").unlink(), lambda: (staged / "new").write_text("x")):
            with pytest.raises(OSError) as refused:
                attempt()
            assert refused.value.errno == errno.EROFS
        assert (source / "lib" / "os.py").exists()
        (source / "lib" / "added.py").write_text("")  # the source itself stays writable
    finally:
        hostmounts._release_persistent()
        hostmounts._staging_root.cache_clear()
    assert not staged.exists()


def test_a_run_in_flight_at_exit_leaves_no_bind_mount_behind(tmp_path: Path) -> None:
    source = tmp_path / "private" / "workspace"
    source.mkdir(parents=True)
    (source / "kept.txt").write_text("the run's own files\n")
    (tmp_path / "private").chmod(0o700)
    staging_parent = tmp_path / "staging"
    child = textwrap.dedent(f"""
        import threading, time
        from pathlib import Path
        from skillgym_core.sandbox.hostmounts import Staging

        def run():  # a run on a daemon thread, still going when the process exits
            staged = Staging(65534, 65534).reach(Path({str(source)!r}))
            print(staged, flush=True)
            time.sleep(60)

        threading.Thread(target=run, daemon=True).start()
        time.sleep(1)
    """)
    env = {**os.environ, "SKILLGYM_SANDBOX_STAGING": str(staging_parent)}
    done = subprocess.run([sys.executable, "-c", child], env=env, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    staged = Path(done.stdout.strip())
    assert staged.is_relative_to(staging_parent)
    assert not mount_points_below(staging_parent)
    assert not list(staging_parent.iterdir())  # the process's staging folder went with it
    assert (source / "kept.txt").read_text() == "the run's own files\n"


def test_a_forked_child_leaves_its_parents_stages_alone_when_it_exits(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    source = tmp_path / "private" / "workspace"
    source.mkdir(parents=True)
    (tmp_path / "private").chmod(0o700)
    monkeypatch.setenv("SKILLGYM_SANDBOX_STAGING", str(tmp_path / "staging"))
    monkeypatch.setattr(hostmounts, "_persistent", {})
    hostmounts._staging_root.cache_clear()
    staging = Staging(65534, 65534)
    try:
        staged = staging.reach(source)
        persistent = reach_persistently(source, 65534, 65534)
        pid = os.fork()
        if pid == 0:  # what the child's exit handlers do
            hostmounts._release_live()
            hostmounts._release_persistent()
            os._exit(0)
        assert os.waitpid(pid, 0)[1] == 0
        assert {str(staged), str(persistent)} <= set(mount_points_below(tmp_path / "staging"))
    finally:
        staging.release()
        hostmounts._release_persistent()
        hostmounts._staging_root.cache_clear()
    assert not mount_points_below(tmp_path / "staging")
