"""Bind mounts that make host sources reachable by the sandbox uid."""

from __future__ import annotations

import errno
import os
from pathlib import Path

import pytest
from skillgym_core.sandbox import hostmounts
from skillgym_core.sandbox.hostmounts import reach_persistently

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
