"""Skill ingestion: find skill folders, parse, annotate, screen, dedup, filter and classify them."""

from __future__ import annotations

__all__ = ["IngestResult", "IngestSettings", "ingest", "write_outputs"]


def __getattr__(name: str) -> object:
    # Lazy so that importing the package (e.g. for settings) stays cheap.
    if name in {"IngestResult", "ingest", "write_outputs"}:
        from skillgym_ingest import pipeline

        return getattr(pipeline, name)
    if name == "IngestSettings":
        from skillgym_ingest.settings import IngestSettings

        return IngestSettings
    raise AttributeError(name)
