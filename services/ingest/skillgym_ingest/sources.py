"""Turn each source argument into a stream of units. Unreadable sources become failed units.

Kinds: a local tree (skills found wherever SKILL.md sits; archives inside it are opened), a
git checkout (a tree whose source label carries the commit), a zip/tar archive, and a store
prefix (``store://prefix`` or ``s3://bucket/prefix``) mirrored from the given Store."""

from __future__ import annotations

import contextlib
import tempfile
from collections.abc import Iterator, Sequence
from pathlib import Path, PurePosixPath

from skillgym_core.sandbox.janitor import remove_tree
from skillgym_core.store.base import Store

from skillgym_ingest.analyze import error_record
from skillgym_ingest.archives import archive_stem, extract_archive, is_archive_name
from skillgym_ingest.discover import find_skill_dirs, git_revision
from skillgym_ingest.errors import IngestError, SourceError
from skillgym_ingest.settings import IngestSettings
from skillgym_ingest.units import FailedUnit, FolderUnit, Unit

STORE_SCHEMES = ("store://", "s3://")


def open_sources(
    sources: Sequence[Path | str], settings: IngestSettings, store: Store | None
) -> Iterator[contextlib.AbstractContextManager[Iterator[Unit]]]:
    for source in sources:
        yield _open_one(source, settings, store)


@contextlib.contextmanager
def _open_one(source: Path | str, settings: IngestSettings, store: Store | None) -> Iterator[Iterator[Unit]]:
    with contextlib.ExitStack() as stack:
        yield _non_empty(_units_for(source, settings, store, stack), str(source))


def _units_for(
    source: Path | str, settings: IngestSettings, store: Store | None, stack: contextlib.ExitStack
) -> Iterator[Unit]:
    text = str(source)
    if text.startswith(STORE_SCHEMES):
        yield from _store_units(text, settings, store, stack)
        return
    path = Path(source)
    if path.is_dir():
        revision = git_revision(path) if (path / ".git").exists() else None
        label = f"git:{path}@{revision}" if revision else str(path)
        yield from _tree_units(path, label, settings, stack, depth=0)
    elif path.is_file() and path.name in {"SKILL.md", "skill.md"}:
        yield from _tree_units(path.parent, str(path.parent), settings, stack, depth=0)
    elif path.is_file() and is_archive_name(path.name):
        yield from _archive_units(path, str(path), settings, stack, depth=0)
    else:
        error = SourceError(f"source not found or not supported: {source}", source=text)
        yield FailedUnit(error_record(text, path.name, error))


def _non_empty(units: Iterator[Unit], source: str) -> Iterator[Unit]:
    seen = False
    for unit in units:
        seen = True
        yield unit
    if not seen:
        error = SourceError(f"no SKILL.md found in {source}", reason="no_skill_md", source=source)
        yield FailedUnit(error_record(source, PurePosixPath(source).name, error))


def _tree_units(
    root: Path, label: str, settings: IngestSettings, stack: contextlib.ExitStack, depth: int
) -> Iterator[Unit]:
    open_archives = depth < settings.archive_max_depth
    for found in find_skill_dirs(root, archives=open_archives):
        rel = found.relative_to(root).as_posix()
        found_label = label if rel == "." else f"{label}/{rel}"
        if found.is_file():
            yield from _non_empty(
                _archive_units(found, found_label, settings, stack, depth + 1), found_label
            )
        else:
            yield FolderUnit(found, found_label)


def _archive_units(
    path: Path, label: str, settings: IngestSettings, stack: contextlib.ExitStack, depth: int
) -> Iterator[Unit]:
    workdir = Path(tempfile.mkdtemp(prefix="skillgym-ingest-"))
    stack.callback(remove_tree, workdir)  # an archive's tree may be deeper than shutil.rmtree can recurse
    dest = workdir / archive_stem(path.name)
    try:
        extract_archive(path, dest, settings)
    except IngestError as exc:
        yield FailedUnit(error_record(label, archive_stem(path.name), exc))
        return
    yield from _tree_units(dest, label + "!", settings, stack, depth)


def _store_units(
    uri: str, settings: IngestSettings, store: Store | None, stack: contextlib.ExitStack
) -> Iterator[Unit]:
    if store is None:
        error = SourceError(f"a store source needs a store: {uri}", source=uri)
        yield FailedUnit(error_record(uri, uri.rsplit("/", 1)[-1], error))
        return
    prefix = uri.split("://", 1)[1]
    if uri.startswith("s3://"):
        prefix = prefix.split("/", 1)[1] if "/" in prefix else ""  # drop the bucket
    workdir = Path(tempfile.mkdtemp(prefix="skillgym-store-"))
    stack.callback(remove_tree, workdir)
    try:
        _mirror_prefix(store, prefix, workdir, settings)
    except IngestError as exc:
        yield FailedUnit(error_record(uri, prefix.rstrip("/").rsplit("/", 1)[-1], exc))
        return
    except Exception as exc:  # any store backend failure is recorded, never raised
        error = SourceError(f"store prefix cannot be read: {exc}", source=uri)
        yield FailedUnit(error_record(uri, prefix.rstrip("/").rsplit("/", 1)[-1], error))
        return
    yield from _tree_units(workdir, uri.rstrip("/"), settings, stack, depth=0)


def _mirror_prefix(store: Store, prefix: str, dest: Path, settings: IngestSettings) -> None:
    base = prefix.rstrip("/")
    total = count = 0
    for key in store.list(prefix):
        rel = key[len(base) :].lstrip("/") if base else key
        parts = PurePosixPath(rel).parts
        if not rel or ".." in parts or rel.startswith("/"):
            continue
        count += 1
        if count > settings.archive_max_files:
            raise SourceError("store prefix holds too many objects", reason="source_too_many_files",
                              limit=settings.archive_max_files)
        data = store.get_bytes(key)
        total += len(data)
        if total > settings.archive_max_bytes:
            raise SourceError("store prefix holds too many bytes", reason="source_too_large",
                              limit=settings.archive_max_bytes)
        target = dest.joinpath(*parts)
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)
