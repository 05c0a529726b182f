"""Mutants of CSV and TSV tables: a row dropped, duplicated or swapped with its neighbour, one
numeric cell perturbed, one label cell changed, the values of two columns swapped under their
headers. Rows are rewritten with the file's delimiter and line ending."""

from __future__ import annotations

import csv
import io
import random
from collections.abc import Callable

from skillgym_reviewer.gates.mutation.model import COVER, Effect, Mutant, pick, seeded
from skillgym_reviewer.gates.mutation.nearmiss import fine_nudge, other_case, recased, shortened_id, truncated
from skillgym_reviewer.gates.mutation.scalars import is_number_text, nudge_number_text, nudge_text

Rows = list[list[str]]
Change = tuple[str, str, Rows, Effect]


class Table:
    def __init__(self, rel: str, text: str) -> None:
        self.delimiter = "\t" if rel.lower().endswith(".tsv") else self._sniff(text)
        self.newline = "\r\n" if "\r\n" in text else "\n"
        self.final_newline = text.endswith(("\n", "\r"))
        self.rows: Rows = list(csv.reader(io.StringIO(text), delimiter=self.delimiter))
        first = self.rows[0] if self.rows else []
        # a first row with no number in it, above rows that have some, reads as a header
        self.header = len(self.rows) > 1 and not any(is_number_text(cell) for cell in first)

    @staticmethod
    def _sniff(text: str) -> str:
        try:
            return csv.Sniffer().sniff(text[:4096], delimiters=",;\t|").delimiter
        except csv.Error:
            return ","

    @property
    def data_start(self) -> int:
        return 1 if self.header else 0

    def dump(self, rows: Rows) -> str:
        buffer = io.StringIO()
        csv.writer(buffer, delimiter=self.delimiter, lineterminator=self.newline).writerows(rows)
        text = buffer.getvalue()
        return text if self.final_newline else text[: -len(self.newline)]


def _row_label(table: Table, index: int) -> str:
    return f"row {index - table.data_start + 1}"


def drop_row(table: Table, rng: random.Random) -> list[Change]:
    sites = list(range(table.data_start, len(table.rows)))
    return [("drop_row", _row_label(table, sites[i]), table.rows[: sites[i]] + table.rows[sites[i] + 1 :], "shape")
            for i in pick(rng, list(sites))]


def duplicate_row(table: Table, rng: random.Random) -> list[Change]:
    rows = table.rows
    sites = list(range(table.data_start, len(rows)))
    return [("duplicate_row", _row_label(table, s), [*rows[: s + 1], rows[s], *rows[s + 1 :]], "shape")
            for s in (sites[i] for i in pick(rng, list(sites)))]


def swap_rows(table: Table, rng: random.Random) -> list[Change]:
    rows = table.rows
    sites = [i for i in range(table.data_start, len(rows) - 1) if rows[i] != rows[i + 1]]
    changes: list[Change] = []
    for s in (sites[i] for i in pick(rng, list(sites), 1)):  # one: every swap asks whether the order counts
        swapped = [*rows[:s], rows[s + 1], rows[s], *rows[s + 2 :]]
        changes.append(("swap_rows", f"rows {s - table.data_start + 1}-{s - table.data_start + 2}", swapped, "order"))
    return changes


def _cells(table: Table, numeric: bool) -> list[tuple[int, int]]:
    return [(r, c) for r in range(table.data_start, len(table.rows)) for c, cell in enumerate(table.rows[r])
            if cell.strip() and is_number_text(cell) == numeric]


def _with_cell(table: Table, r: int, c: int, value: str) -> Rows:
    rows = [list(row) for row in table.rows]
    rows[r][c] = value
    return rows


def _column(table: Table, c: int) -> str:
    return table.rows[0][c] if table.header and c < len(table.rows[0]) else str(c + 1)


def perturb_cell(table: Table, rng: random.Random) -> list[Change]:
    sites = _cells(table, numeric=True)
    return [("perturb_cell", f"{_row_label(table, r)}.{_column(table, c)}",
             _with_cell(table, r, c, nudge_number_text(table.rows[r][c].strip(), rng)), "value")
            for r, c in (sites[i] for i in pick(rng, list(sites)))]


def change_cell(table: Table, rng: random.Random) -> list[Change]:
    sites = _cells(table, numeric=False)
    return [("change_cell", f"{_row_label(table, r)}.{_column(table, c)}",
             _with_cell(table, r, c, nudge_text(table.rows[r][c], rng)), "value")
            for r, c in (sites[i] for i in pick(rng, list(sites)))]


def swap_column_values(table: Table, rng: random.Random) -> list[Change]:
    """Two adjacent columns' values swapped while the header stays: each value under the wrong name
    (moving a column together with its header is a declared equivalence, ``reorder_columns``)."""
    width = min((len(row) for row in table.rows), default=0)
    data = table.rows[table.data_start :]
    sites = [c for c in range(width - 1) if any(row[c] != row[c + 1] for row in data)]
    changes: list[Change] = []
    for c in (sites[i] for i in pick(rng, list(sites))):
        rows = [list(row) for row in table.rows]
        for row in rows[table.data_start :]:
            row[c], row[c + 1] = row[c + 1], row[c]
        changes.append(("swap_column_values", f"columns {_column(table, c)}<->{_column(table, c + 1)}", rows, "value"))
    return changes


def _near_cells(table: Table, rng: random.Random, name: str, change: Callable[[str, random.Random], str | None]
                ) -> list[Change]:
    by_column: dict[int, list[tuple[int, str]]] = {}
    for r in range(table.data_start, len(table.rows)):
        for c, cell in enumerate(table.rows[r]):
            if (new := change(cell.strip(), rng)) is not None:
                by_column.setdefault(c, []).append((r, new))
    columns = sorted(by_column)
    changes: list[Change] = []
    for c in (columns[i] for i in pick(rng, list(columns))):  # one site per column, as for tree regions
        r, new = by_column[c][rng.randrange(len(by_column[c]))]
        changes.append((name, f"{_row_label(table, r)}.{_column(table, c)}", _with_cell(table, r, c, new), "value"))
    return changes


def _number_change(change: Callable[[float, random.Random], float | None]) -> Callable[[str, random.Random], str | None]:
    def apply(cell: str, rng: random.Random) -> str | None:
        if not is_number_text(cell) or "." not in cell:
            return None
        moved = change(float(cell), rng)
        return None if moved is None else f"{moved:.{len(cell.split('.', 1)[1])}f}"

    return apply


def fine_cell(table: Table, rng: random.Random) -> list[Change]:
    return _near_cells(table, rng, "fine_nudge", _number_change(fine_nudge))


def truncate_cell(table: Table, rng: random.Random) -> list[Change]:
    return _near_cells(table, rng, "truncate_number", _number_change(truncated))


def recase_cell(table: Table, rng: random.Random) -> list[Change]:
    return _near_cells(table, rng, "recase_identifier", recased)


def change_case_cell(table: Table, rng: random.Random) -> list[Change]:
    """Not drawn with the others (see :mod:`.lettercase`)."""
    return _near_cells(table, rng, "change_case", lambda cell, r: other_case(cell))


def shorten_id_cell(table: Table, rng: random.Random) -> list[Change]:
    return _near_cells(table, rng, "shorten_id", shortened_id)


def column_cover(table: Table, rng: random.Random) -> list[Change]:
    """Every column reached: a header cell renamed, and one cell of each column changed."""
    changes: list[Change] = []
    if table.header:
        c = rng.randrange(len(table.rows[0]))
        renamed = [list(row) for row in table.rows]
        renamed[0][c] = nudge_text(renamed[0][c], rng)
        changes.append(("rename_header", f"header.{_column(table, c)}", renamed, "key"))
    width = max((len(row) for row in table.rows[table.data_start :]), default=0)
    for c in range(width):
        cells = [r for r in range(table.data_start, len(table.rows)) if c < len(table.rows[r]) and table.rows[r][c].strip()]
        if not cells:
            continue
        r = cells[rng.randrange(len(cells))]
        cell = table.rows[r][c]
        numeric = is_number_text(cell)
        new = nudge_number_text(cell.strip(), rng) if numeric else nudge_text(cell, rng)
        changes.append(("perturb_cell" if numeric else "change_cell", f"{_row_label(table, r)}.{_column(table, c)}",
                        _with_cell(table, r, c, new), "value"))
    return changes


OPERATORS: list[Callable[[Table, random.Random], list[Change]]] = [
    drop_row, duplicate_row, swap_rows, perturb_cell, change_cell, swap_column_values,
    fine_cell, truncate_cell, recase_cell, shorten_id_cell,
]


def table_mutants(rel: str, text: str, seed: int) -> dict[str, list[Mutant]]:
    table = Table(rel, text)
    grouped: dict[str, list[Mutant]] = {}
    for operator in [column_cover, *OPERATORS]:
        group = COVER if operator is column_cover else None
        for name, where, rows, effect in operator(table, seeded(seed, rel, operator.__name__)):
            if rows != table.rows:
                grouped.setdefault(group or name, []).append(Mutant(rel, name, where, table.dump(rows).encode(), effect))
    return grouped
