"""Sound tasks: the reviewer must approve every one of them."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from skillgym_core.contracts.task import TaskDir

from tests.reviewer import handmade
from tests.reviewer.defects.domains import DOMAINS
from tests.reviewer.defects.draft import Draft
from tests.reviewer.defects.library import GOOD, LibraryTask


def sound(slug: str, domain: Callable[[], Draft]) -> LibraryTask:
    def build(root: Path) -> TaskDir:
        return domain().write(root)

    return LibraryTask(f"{GOOD}/{slug}", GOOD, None, "", build)


TASKS = [
    LibraryTask(f"{GOOD}/ledger", GOOD, None, "", lambda root: handmade.write_task(root)),
    *(sound(slug, domain) for slug, domain in DOMAINS.items()),
]
