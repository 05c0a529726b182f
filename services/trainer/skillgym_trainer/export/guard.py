"""The last check before dataset files are written: no record may name a hidden path."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from skillgym_core.hidden_paths import hidden_paths_in

from skillgym_trainer.errors import HiddenPathError


def check_record(where: str, record: Any) -> None:
    found = hidden_paths_in(record)
    if found:
        raise HiddenPathError(f"{where} names hidden paths {found}", where=where, paths=found)


def check_rows(splits: Mapping[str, Sequence[dict[str, Any]]]) -> None:
    for split, rows in splits.items():
        for index, row in enumerate(rows):
            check_record(f"{split} row {index}", row)
