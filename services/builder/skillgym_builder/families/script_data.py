"""CSV inputs for a skill's own script: the columns it reads, filled per instance with values of
the kind each column holds, so two instances (and the probe's variant) give different results."""

from __future__ import annotations

import csv
import datetime as dt
import io
import random

from skillgym_builder.families.script_cli import Column

VOCABULARY = {
    "region": ["north", "south", "east", "west", "central", "coastal", "highlands"],
    "product": ["anchor bolt", "brass hinge", "cedar plank", "copper pipe", "drill bit", "gate latch", "hex nut",
                "oak dowel", "pine board", "steel bracket", "wall plug", "wood screw"],
    "category": ["hardware", "garden", "kitchen", "lighting", "outdoor", "paint", "plumbing", "storage"],
    "status": ["open", "closed", "pending", "on hold"],
    "city": ["Aarhus", "Bergen", "Cork", "Ghent", "Graz", "Lyon", "Porto", "Tartu", "Turin", "Utrecht"],
    "name": ["Ada", "Bela", "Chidi", "Dara", "Emil", "Farah", "Goran", "Hana", "Ines", "Jonas", "Kira", "Lior"],
    "department": ["finance", "legal", "operations", "research", "sales", "support"],
    "customer": ["Acme Ltd", "Birch & Co", "Cobalt AG", "Delta BV", "Ember SA", "Fjord AS", "Granite Oy"],
    "team": ["alpha", "bravo", "charlie", "delta", "echo"],
    "country": ["Austria", "Belgium", "Chile", "Denmark", "Estonia", "France", "Ghana", "Japan"],
}
NOISY = ["Smith, Jones & Co", 'the "premium" line', "north, upper", "bolts, assorted"]


def _pool(column: Column, rng: random.Random) -> list[str]:
    key = next((k for k in VOCABULARY if k in column.name.lower()), None)
    if key:
        words = VOCABULARY[key]
        return rng.sample(words, k=min(len(words), rng.randint(4, len(words))))
    return [f"{column.name.lower().replace(' ', '_')}-{chr(97 + i)}" for i in range(rng.randint(3, 7))]


def rows(columns: tuple[Column, ...], rng: random.Random, count: int, noise: float) -> list[list[str]]:
    """``count`` records; with ``noise``, values that need CSV quoting (a comma or quote inside)
    join every text column's values, more of them the higher it is; only a real CSV parser reads
    them back."""
    pools = {c.name: _pool(c, rng) for c in columns if c.kind == "text"}
    if noise:
        for pool in pools.values():
            pool.extend(rng.sample(NOISY, k=min(len(NOISY), 1 + int(noise * 10))))
    start = dt.date(2026, 1, 1) + dt.timedelta(days=rng.randint(0, 300))
    records: list[list[str]] = []
    for index in range(count):
        record = []
        for column in columns:
            if column.kind == "int":
                value = str(rng.randint(1, 60))
            elif column.kind == "float":
                value = f"{rng.uniform(0.5, 480.0):.2f}"
            elif column.kind == "date":
                value = (start + dt.timedelta(days=rng.randint(0, 90))).isoformat()
            elif column.kind == "id":
                value = f"{column.name[:3].upper()}-{10000 + index * 7 + rng.randint(0, 6)}"
            else:
                value = rng.choice(pools[column.name])
            record.append(value)
        records.append(record)
    return records


def encode(columns: tuple[Column, ...], records: list[list[str]]) -> str:
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow([c.name for c in columns])
    writer.writerows(records)
    return buffer.getvalue()


def dataset(columns: tuple[Column, ...], rng: random.Random, count: int, noise: float) -> str:
    return encode(columns, rows(columns, rng, count, noise))
