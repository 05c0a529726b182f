"""The soak's table (fault → lost / duplicated artifacts / redelivered / recovered) and its JSON."""

from __future__ import annotations

from dataclasses import asdict
from typing import Any

from tests.e2e.soak.audit import Audit, Row

COLUMNS = ("fault", "mid-stage", "lost", "duplicated artifacts", "redelivered", "new dead letters", "recovered in s")


def _cells(row: Row) -> tuple[str, ...]:
    mid = "-" if row.mid_stage is None else ("yes" if row.mid_stage else "no")
    recovered = "never" if row.recovered_s is None and row.mid_stage is not None else (
        "-" if row.recovered_s is None else f"{row.recovered_s:.1f}"
    )
    victims = f" ({', '.join(row.victims)})" if row.victims and row.fault != "total" else ""
    return (f"{row.fault}{victims}", mid, str(row.lost), str(row.duplicated), str(row.redelivered),
            str(row.dead_lettered), recovered)


def table(result: Audit) -> str:
    lines = [_cells(row) for row in [*result.rows, result.total]]
    widths = [max(len(c), *(len(line[i]) for line in lines)) for i, c in enumerate(COLUMNS)]

    def render(cells: tuple[str, ...]) -> str:
        first, *rest = cells
        return "  ".join([first.ljust(widths[0]), *(c.rjust(w) for c, w in zip(rest, widths[1:], strict=True))])

    rule = "  ".join("-" * w for w in widths)
    return "\n".join([render(COLUMNS), rule, *(render(line) for line in lines[:-1]), rule, render(lines[-1])])


def as_json(result: Audit) -> dict[str, Any]:
    return {
        "rows": [asdict(row) for row in result.rows],
        "total": asdict(result.total),
        "topics": {
            topic: {"expected": t.expected, "records": t.records, "distinct": t.distinct,
                    "redelivered": t.redelivered, "lost": t.lost, "duplicated": t.extra}
            for topic, t in result.topics.items()
        },
        "training": asdict(result.training) | {"duplicated": result.training.duplicated, "lost": result.training.lost},
        "new_dead_letters": result.new_dead_letters,
    }
