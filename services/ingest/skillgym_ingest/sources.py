"""Turn each source argument into a stream of units. Unreadable sources become failed units."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Sequence
from pathlib import Path

from skillgym_core.store.base import Store
from skillgym_ingest.analyze import error_record
from skillgym_ingest.discover import find_skill_dirs
from skillgym_ingest.errors import SourceError
from skillgym_ingest.settings import IngestSettings
from skillgym_ingest.units import FailedUnit, FolderUnit, Unit


def open_sources(
    sources: Sequence[Path | str], settings: IngestSettings, store: Store | None
) -> Iterator[contextlib.AbstractContextManager[Iterator[Unit]]]:
    for source in sources:
        yield _open_one(source, settings, store)


@contextlib.contextmanager
def _open_one(source: Path | str, settings: IngestSettings, store: Store | None) -> Iterator[Iterator[Unit]]:
    path = Path(source)
    if path.is_dir():
        yield _tree_units(path, str(path))
    elif path.is_file() and path.name in {"SKILL.md", "skill.md"}:
        yield _tree_units(path.parent, str(path.parent))
    else:
        error = SourceError(f"source not found or not supported: {source}", source=str(source))
        yield iter([FailedUnit(error_record(str(source), path.name, error))])


def _tree_units(root: Path, label: str) -> Iterator[Unit]:
    for skill_dir in find_skill_dirs(root):
        rel = skill_dir.relative_to(root).as_posix()
        yield FolderUnit(skill_dir, label if rel == "." else f"{label}/{rel}")
