"""What a library task is: a builder for one Harbor task directory, tagged with the defect
planted in it and the failure type the reviewer must reject it with."""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from skillgym_core.contracts.task import TaskDir

from tests.reviewer.defects.draft import Draft

GOOD = "good"


@dataclass(frozen=True)
class LibraryTask:
    name: str  # "<kind>/<variant>"
    kind: str
    failure_type: str | None  # None: a sound task the reviewer must approve
    planted: str  # the defect, in one sentence ("" for a sound task)
    build: Callable[[Path], TaskDir]

    @property
    def good(self) -> bool:
        return self.failure_type is None

    @property
    def dirname(self) -> str:
        """A directory name that does not tell the reviewer which defect the task has."""
        return "task-" + hashlib.sha256(self.name.encode()).hexdigest()[:12]

    def write(self, parent: Path) -> TaskDir:
        return self.build(parent / self.dirname)


def planted(
    kind: str,
    failure_type: str,
    variant: str,
    domain: Callable[[], Draft],
    edit: Callable[[Draft], None],
    what: str,
) -> LibraryTask:
    """A defect planted by ``edit`` into a fresh draft of ``domain``."""

    def build(root: Path) -> TaskDir:
        draft = domain()
        edit(draft)
        return draft.write(root)

    return LibraryTask(f"{kind}/{variant}", kind, failure_type, what, build)
