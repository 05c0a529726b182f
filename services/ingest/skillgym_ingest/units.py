"""What sources hand to the analysers: a folder to read, or a record for something unreadable."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from skillgym_core.contracts.skill import SkillRecord


@dataclass(frozen=True)
class FolderUnit:
    root: Path
    source: str


@dataclass(frozen=True)
class FailedUnit:
    record: SkillRecord


Unit = FolderUnit | FailedUnit
