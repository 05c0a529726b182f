from __future__ import annotations

import io
import tarfile
import zipfile
from pathlib import Path

import pytest
from skillgym_ingest.pipeline import ingest
from skillgym_ingest.settings import IngestSettings

from tests.ingest.skillkit import GOOD_BODY, GOOD_SCRIPT, encrypted_zip_bytes

SKILL_MD = f"---\nname: csv-report\ndescription: Summarize a CSV export into a Markdown report.\n---\n{GOOD_BODY}"


def _settings(**overrides: object) -> IngestSettings:
    return IngestSettings(workers=1, **overrides)  # type: ignore[arg-type]


def _zip(path: Path, entries: dict[str, bytes], *, symlink: str | None = None) -> Path:
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, data in entries.items():
            archive.writestr(name, data)
        if symlink is not None:
            info = zipfile.ZipInfo("csv-report/link")
            info.external_attr = (0o120777 << 16)
            archive.writestr(info, symlink)
    return path


def _tar(path: Path, entries: dict[str, bytes], extra: list[tarfile.TarInfo] | None = None) -> Path:
    with tarfile.open(path, "w:gz") as archive:
        for name, data in entries.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            archive.addfile(info, io.BytesIO(data))
        for info in extra or []:
            archive.addfile(info)
    return path


GOOD = {"csv-report/SKILL.md": SKILL_MD.encode(), "csv-report/scripts/summarize.py": GOOD_SCRIPT.encode()}


@pytest.mark.parametrize("suffix", [".zip", ".tar.gz"])
def test_good_archives_are_ingested(tmp_path: Path, suffix: str) -> None:
    archive = _zip(tmp_path / "a.zip", GOOD) if suffix == ".zip" else _tar(tmp_path / "a.tar.gz", GOOD)
    [record] = ingest([archive], settings=_settings()).records
    assert record.accepted, record.reasons
    assert record.source == f"{archive}!/csv-report"
    assert {f.path for f in record.files} == {"SKILL.md", "scripts/summarize.py"}


def _link(name: str, target: str, kind: bytes = tarfile.SYMTYPE) -> tarfile.TarInfo:
    info = tarfile.TarInfo(name)
    info.type = kind
    info.linkname = target
    return info


def _device() -> tarfile.TarInfo:
    info = tarfile.TarInfo("csv-report/tty")
    info.type = tarfile.CHRTYPE
    return info


@pytest.mark.parametrize(
    ("build", "reason"),
    [
        (lambda d: _zip(d / "t.zip", {**GOOD, "../../evil.sh": b"x"}), "archive_path_traversal"),
        (lambda d: _zip(d / "t.zip", {**GOOD, "/etc/cron.d/x": b"x"}), "archive_path_traversal"),
        (lambda d: _tar(d / "t.tar.gz", {**GOOD, "csv-report/../../x": b"x"}), "archive_path_traversal"),
        (lambda d: _zip(d / "t.zip", GOOD, symlink="/etc/passwd"), "archive_link"),
        (lambda d: _tar(d / "t.tar.gz", GOOD, [_link("csv-report/l", "../../../etc/passwd")]), "archive_link"),
        (lambda d: _tar(d / "t.tar.gz", GOOD, [_link("csv-report/h", "/etc/shadow", tarfile.LNKTYPE)]),
         "archive_link"),
        (lambda d: _tar(d / "t.tar.gz", GOOD, [_device()]), "archive_link"),
        (lambda d: _zip(d / "t.zip", {f"csv-report/f{i}.txt": b"x" for i in range(30)}), "archive_too_many_files"),
        (lambda d: _zip(d / "t.zip", {**GOOD, "csv-report/big.bin": b"\x01" * 3_000_000}), "archive_bomb"),
        (lambda d: (d / "t.zip").write_bytes(encrypted_zip_bytes(GOOD)) and d / "t.zip", "archive_encrypted"),
        (lambda d: (d / "t.tar.gz").write_bytes(b"\x1f\x8b\x08garbage") and d / "t.tar.gz", "archive_corrupt"),
    ],
)
def test_hostile_archives_get_typed_reasons_and_never_crash(tmp_path: Path, build, reason: str) -> None:  # type: ignore[no-untyped-def]
    archive = build(tmp_path)
    settings = _settings(archive_max_files=20, archive_max_ratio=50)
    result = ingest([archive], settings=settings)
    [record] = result.records
    assert record.reasons == [reason]
    assert record.diagnostics[0].code == reason
    assert not record.accepted
    assert not (tmp_path.parent / "evil.sh").exists()


def test_size_cap_is_enforced_on_declared_and_written_bytes(tmp_path: Path) -> None:
    archive = _tar(tmp_path / "t.tar.gz", {**GOOD, "csv-report/data.bin": bytes(range(256)) * 400})
    [record] = ingest([archive], settings=_settings(archive_max_bytes=50_000)).records
    assert record.reasons == ["archive_too_large"]


def test_links_inside_the_tree_are_dropped_not_followed(tmp_path: Path) -> None:
    archive = _tar(tmp_path / "t.tar.gz", GOOD, [_link("csv-report/alias.py", "scripts/summarize.py")])
    [record] = ingest([archive], settings=_settings()).records
    assert record.accepted and "alias.py" not in {f.path for f in record.files}


def test_archive_without_skill_and_nested_archives(tmp_path: Path) -> None:
    empty = _zip(tmp_path / "empty.zip", {"notes/readme.txt": b"hello"})
    assert ingest([empty], settings=_settings()).records[0].reasons == ["no_skill_md"]
    tree = tmp_path / "crawl"
    tree.mkdir()
    _zip(tree / "one.zip", GOOD)
    _zip(tree / "bad.zip", {"../x": b"x"})
    records = ingest([tree], settings=_settings()).records
    assert sorted(r.reasons[0] if r.reasons else "ok" for r in records) == ["archive_path_traversal", "ok"]


def test_local_folder_symlinks_escaping_the_tree_are_not_followed(tmp_path: Path) -> None:
    outside = tmp_path / "secret.txt"
    outside.write_text("top secret")
    skill = tmp_path / "corpus" / "csv-report"
    skill.mkdir(parents=True)
    (skill / "SKILL.md").write_text(SKILL_MD)
    (skill / "leak.txt").symlink_to(outside)
    [record] = ingest([tmp_path / "corpus"], settings=_settings()).records
    assert "leak.txt" not in {f.path for f in record.files}
    assert any(d.code == "symlink_escapes" and d.file == "leak.txt" for d in record.diagnostics)


def test_corrupt_deflate_stream_is_a_typed_rejection(tmp_path: Path) -> None:
    # A zip whose deflate data is invalid: zlib raises its own error type while extracting.
    bad = tmp_path / "bad.zip"
    bad.write_bytes(
        b'PK\x03\x04\x14\x00\x00\x00\x08\x00\xc9R}]i\xdf"e\x05\x00\x00\x00\x08\x00\x00\x00\x0c\x00\x00\x00'
        b"s/./SKILL.mdc`\x80\xff\x00PK\x01\x02\x14\x03\x14\x00\x00\x00\x08\x00\xc9R}]i\xdf\"e\x05\x00\x00\x00"
        b"\x08\x00\x00\x00\x0c\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x80\x01\x00\x00\x00\x00s/./SKILL.md"
        b"PK\x05\x06\x00\x00\x00\x00\x01\x00\x01\x00:\x00\x00\x00/\x00\x00\x00\x00\x00"
    )
    [record] = ingest([bad], settings=_settings()).records
    assert record.reasons == ["archive_corrupt"]
