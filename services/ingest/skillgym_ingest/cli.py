"""Entry point the ``skillgym ingest SRC... --out DIR`` command calls."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from rich.console import Console
from skillgym_core.store.base import Store

from skillgym_ingest.pipeline import IngestResult, RecordWriter, ingest, write_funnel
from skillgym_ingest.settings import IngestSettings


def ingest_command(
    sources: Sequence[Path | str],
    out_dir: Path,
    store: Store | None = None,
    *,
    settings: IngestSettings | None = None,
    keep_records: bool = True,
    progress: bool = True,
) -> IngestResult:
    """Ingest ``sources``; stream ``skills.jsonl`` into ``out_dir`` and write ``funnel.json``.

    With ``keep_records=False`` the result holds only the funnel, so a crawl of any size
    runs in flat memory; the records are in ``out_dir/skills.jsonl`` either way."""
    out_dir = Path(out_dir)
    with RecordWriter(out_dir) as writer:
        result = ingest(
            sources, settings=settings, store=store, progress=progress, on_record_json=writer.write_json,
            keep=keep_records,
        )
    write_funnel(result.funnel, out_dir)
    if progress:
        Console(stderr=True).print(
            f"ingest: {result.funnel.get('found', 0)} found, {result.funnel.get('unique', 0)} unique, "
            f"{result.funnel.get('accepted', 0)} accepted -> {out_dir}"
        )
    return result
