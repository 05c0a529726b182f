"""The tar data filter's rules, applied the same way whether or not tarfile has the filter."""

from __future__ import annotations

import io
import tarfile
from pathlib import Path

import pytest
from skillgym_core.sandbox.container import tarsafe


def _archive(*members: tuple[str, bytes | None, str | None]) -> tarfile.TarFile:
    """(name, file content or None, symlink target or None) each."""
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w") as archive:
        for name, data, link in members:
            info = tarfile.TarInfo(name)
            if link is not None:
                info.type, info.linkname = tarfile.SYMTYPE, link
                archive.addfile(info)
            else:
                info.size, info.mode = len(data or b""), 0o6777
                archive.addfile(info, io.BytesIO(data or b""))
    buffer.seek(0)
    return tarfile.open(fileobj=buffer)


@pytest.fixture(params=["filter", "fallback"])
def extract(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    if request.param == "fallback":
        monkeypatch.delattr(tarfile, "data_filter", raising=False)
    elif not hasattr(tarfile, "data_filter"):
        pytest.skip("this tarfile predates the data filter: the fallback is all there is")
    return str(request.param)


def test_plain_files_and_inner_links_are_kept_without_set_id_bits(tmp_path: Path, extract: str) -> None:
    tarsafe.extract_data(_archive(("app/a.txt", b"a", None), ("app/b", None, "a.txt")), tmp_path)
    assert (tmp_path / "app" / "b").read_text() == "a"
    assert (tmp_path / "app" / "a.txt").stat().st_mode & 0o7777 == 0o755


@pytest.mark.parametrize("member", [("../escape", b"x", None), ("/abs", b"x", None), ("app/l", None, "/etc/passwd"),
                                    ("app/l", None, "../../etc/passwd")])
def test_names_and_links_out_of_the_tree_refuse_the_archive(
    tmp_path: Path, extract: str, member: tuple[str, bytes | None, str | None]
) -> None:
    with pytest.raises(tarfile.TarError):
        tarsafe.extract_data(_archive(member), tmp_path / "dest")
    assert not (tmp_path / "escape").exists()


def test_a_link_that_escapes_through_an_earlier_link_refuses_the_archive(tmp_path: Path, extract: str) -> None:
    # "up" leads to the destination itself, so "up/.." is its parent, which no name spells out
    members = (("app/up", None, ".."), ("app/out", None, "up/.."), ("app/out/escape", b"x", None))
    with pytest.raises(tarfile.TarError):
        tarsafe.extract_data(_archive(*members), tmp_path / "dest")
    assert not (tmp_path / "escape").exists()
