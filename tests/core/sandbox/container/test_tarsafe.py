"""The tar data filter's rules, applied the same way whether or not tarfile has the filter: the
fallback runs on every Python (forced where the filter exists), the filter wherever it exists."""

from __future__ import annotations

import io
import os
import stat
import tarfile
from pathlib import Path

import pytest
from skillgym_core.sandbox.container import tarsafe

Member = tuple[str, bytes | None, str | None]
HAS_FILTER = hasattr(tarfile, "data_filter")


def _archive(*members: Member, mode: int = 0o6777) -> tarfile.TarFile:
    """(name, file content or None, symlink target or None) each; a name ending in / is a folder."""
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w") as archive:
        for name, data, link in members:
            info = tarfile.TarInfo(name.rstrip("/") if name != "/" else name)
            if link is not None:
                info.type, info.linkname = tarfile.SYMTYPE, link
                archive.addfile(info)
            elif name.endswith("/"):
                info.type, info.mode = tarfile.DIRTYPE, 0o777
                archive.addfile(info)
            else:
                info.size, info.mode = len(data or b""), mode
                archive.addfile(info, io.BytesIO(data or b""))
    buffer.seek(0)
    return tarfile.open(fileobj=buffer)


@pytest.fixture(params=["filter", "fallback"])
def use_filter(request: pytest.FixtureRequest) -> bool:
    if request.param == "filter" and not HAS_FILTER:
        pytest.skip("this tarfile predates the data filter: the fallback is all there is")
    return request.param == "filter"


def _tree(root: Path) -> dict[str, str]:
    """Every path under ``root`` with what it is: a file's mode and content, a link's target."""
    found: dict[str, str] = {}
    for path in sorted(root.rglob("*")):
        rel = path.relative_to(root).as_posix()
        if path.is_symlink():
            found[rel] = f"link -> {os.readlink(path)}"
        elif path.is_dir():
            found[rel] = f"dir {stat.S_IMODE(path.stat().st_mode):o}"
        else:
            found[rel] = f"file {stat.S_IMODE(path.stat().st_mode):o} {path.read_bytes()!r}"
    return found


def _outcome(tmp_path: Path, members: tuple[Member, ...], use_filter: bool, mode: int = 0o6777) -> object:
    """The tree the archive leaves in a fresh destination, or the refusal; and nothing beside it."""
    base = tmp_path / ("filter" if use_filter else "fallback")
    dest = base / "deep" / "dest"
    dest.mkdir(parents=True)
    try:
        tarsafe.extract_data(_archive(*members, mode=mode), dest, use_filter=use_filter)
        result: object = _tree(dest)
    except tarfile.TarError:
        result = "refused"
    assert sorted(p.relative_to(base).as_posix() for p in base.rglob("*") if dest not in (p, *p.parents)) == [
        "deep"], "something landed outside the destination"
    return result


def test_plain_files_and_inner_links_are_kept_without_set_id_bits(tmp_path: Path, use_filter: bool) -> None:
    tarsafe.extract_data(_archive(("app/a.txt", b"a", None), ("app/b", None, "a.txt")), tmp_path,
                         use_filter=use_filter)
    assert (tmp_path / "app" / "b").read_text() == "a"
    assert (tmp_path / "app" / "a.txt").stat().st_mode & 0o7777 == 0o755


def test_a_leading_slash_is_stripped_and_the_file_lands_inside_the_tree(tmp_path: Path, use_filter: bool) -> None:
    assert _outcome(tmp_path, (("/abs", b"x", None), ("//twice/deep", b"y", None)), use_filter) == {
        "abs": "file 755 b'x'", "twice": f"dir {0o777 & ~0o022:o}", "twice/deep": "file 755 b'y'"}


@pytest.mark.parametrize("member", [("../escape", b"x", None), ("/../escape", b"x", None), ("app/../../escape", b"x", None),
                                    ("app/l", None, "/etc/passwd"), ("app/l", None, "../../etc/passwd")])
def test_names_and_links_out_of_the_tree_refuse_the_archive(tmp_path: Path, use_filter: bool, member: Member) -> None:
    assert _outcome(tmp_path, (member,), use_filter) == "refused"


def test_a_link_that_escapes_through_an_earlier_link_refuses_the_archive(tmp_path: Path, use_filter: bool) -> None:
    # "up" leads to the destination itself, so "up/.." is its parent, which no name spells out
    members = (("app/up", None, ".."), ("app/out", None, "up/.."), ("app/out/escape", b"x", None))
    assert _outcome(tmp_path, members, use_filter) == "refused"


CASES: list[tuple[Member, ...]] = [
    (("app/a.txt", b"a", None), ("app/b", None, "a.txt"), ("app/sub/", None, None)),
    (("/abs", b"x", None), ("/dir/", None, None), ("/dir/f", b"f", None)),
    (("../escape", b"x", None),),
    (("app/l", None, "/etc/passwd"),),
    (("app/up", None, ".."), ("app/out", None, "up/.."), ("app/out/escape", b"x", None)),
    (("app/ok", b"1", None), ("app/l", None, "../.."), ("app/after", b"2", None)),
]


@pytest.mark.skipif(not HAS_FILTER, reason="this tarfile predates the data filter: there is nothing to compare")
@pytest.mark.parametrize("members", CASES)
@pytest.mark.parametrize("mode", [0o6777, 0o640, 0o000])
def test_the_fallback_gives_what_the_filter_gives(tmp_path: Path, members: tuple[Member, ...], mode: int) -> None:
    assert _outcome(tmp_path, members, False, mode) == _outcome(tmp_path, members, True, mode)
