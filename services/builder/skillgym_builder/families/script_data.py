"""Record inputs for a skill's own script (CSV, TSV, JSON, YAML): the fields it reads, filled per
instance with values of the kind each holds, so two instances (and the probe's variant) give
different results."""

from __future__ import annotations

import csv
import datetime as dt
import io
import json
import random
from typing import Any

import yaml

from skillgym_builder.families.script_columns import Column, kind_by_name

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
    # dates in the past, well clear of the clock a script may stamp on its result
    start = dt.date(2024, 1, 1) + dt.timedelta(days=rng.randint(0, 300))
    # Real exports have related figures (an amount follows the units): some float columns follow
    # the record's first number, so correlations and ratios have something to find.
    numeric = [c.name for c in columns if c.kind in ("int", "float")]
    links = {c.name: rng.uniform(0.5, 3.0) for c in columns if c.kind == "float" and numeric and c.name != numeric[0]
             and rng.random() < 0.6}
    records: list[list[str]] = []
    for index in range(count):
        record = []
        base = 0.0
        for column in columns:
            if column.kind == "int":
                value = str(rng.randint(1, 60))
            elif column.kind == "float" and column.name in links and base:
                value = f"{base * links[column.name] * rng.uniform(0.9, 1.1):.2f}"
            elif column.kind == "float":
                value = f"{rng.uniform(0.5, 480.0):.2f}"
            elif column.kind == "date":
                value = (start + dt.timedelta(days=rng.randint(0, 90))).isoformat()
            elif column.kind == "id":
                value = f"{column.name[:3].upper()}-{10000 + index * 7 + rng.randint(0, 6)}"
            else:
                value = rng.choice(pools[column.name])
            if column.kind in ("int", "float") and not base:
                base = float(value)
            record.append(value)
        records.append(record)
    return records


def encode(columns: tuple[Column, ...], records: list[list[str]], delimiter: str = ",") -> str:
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n", delimiter=delimiter)
    writer.writerow([c.name for c in columns])
    writer.writerows(records)
    return buffer.getvalue()


def dataset(columns: tuple[Column, ...], rng: random.Random, count: int, noise: float, blanks: float = 0.0) -> str:
    return encode(columns, blanked(columns, rows(columns, rng, count, noise), rng, blanks))


def tsv(columns: tuple[Column, ...], rng: random.Random, count: int, noise: float, blanks: float = 0.0) -> str:
    return encode(columns, blanked(columns, rows(columns, rng, count, noise), rng, blanks), delimiter="\t")


def blanked(columns: tuple[Column, ...], records: list[list[str]], rng: random.Random, share: float) -> list[list[str]]:
    """Cells left empty at about ``share`` of the non-key values, as exports with gaps have them (for
    scripts that look for missing values); every record keeps its key."""
    if not share:
        return records
    return [[value if column.kind == "id" or rng.random() >= share else "" for column, value in zip(columns, record, strict=True)]
            for record in records]


def _typed(column: Column, value: str) -> Any:
    return int(value) if column.kind == "int" else float(value) if column.kind == "float" else value


def documents(columns: tuple[Column, ...], rng: random.Random, count: int, noise: float,
              container: str | None, document: tuple[tuple[str, str], ...] = ()) -> Any:
    """Records as a JSON or YAML document: a list, or under ``container``, or (``document``: keys the
    script reads off the document itself) a mapping of those keys; with ``noise``, fields the script
    does not read ride along, as real exports carry them."""
    keys = {name for name, _ in document}
    fields = tuple(c for c in columns if c.name not in keys) or columns
    records: list[dict[str, Any]] = [{c.name: _typed(c, v) for c, v in zip(fields, row, strict=True)}
                                     for row in rows(fields, rng, count, noise)]
    if noise:
        for index, record in enumerate(records):
            if rng.random() < noise:
                record["note"] = rng.choice(NOISY)
                record["revision"] = index % 3 + 1
    if document and not container:
        return {name: _shaped(name, shape, rng, records) for name, shape in document}
    return {container: records} if container else records


def _shaped(name: str, shape: str, rng: random.Random, records: list[dict[str, Any]]) -> Any:
    if shape == "list":
        return records
    if shape == "mapping":
        names = rng.sample(sorted({w for pool in VOCABULARY.values() for w in pool if " " not in w}), k=rng.randint(3, 8))
        return {n.lower(): f"{rng.randint(0, 12)}.{rng.randint(0, 20)}.{rng.randint(0, 9)}" for n in sorted(names)}
    return scalar(name, shape, rng)


def scalar(name: str, shape: str, rng: random.Random) -> Any:
    """One value for a document key: of the type its default in the script has, else as its name suggests."""
    if shape == "flag":
        return rng.random() < 0.5
    if shape == "number":
        return rng.randint(1, 99)
    column = Column(name, "text" if shape == "text" else kind_by_name(name))
    return _typed(column, rows((column,), rng, 1, 0.0)[0][0])


def json_text(columns: tuple[Column, ...], rng: random.Random, count: int, noise: float, container: str | None,
              document: tuple[tuple[str, str], ...] = ()) -> str:
    return json.dumps(documents(columns, rng, count, noise, container, document), indent=2) + "\n"


def yaml_text(columns: tuple[Column, ...], rng: random.Random, count: int, noise: float, container: str | None,
              document: tuple[tuple[str, str], ...] = ()) -> str:
    return str(yaml.safe_dump(documents(columns, rng, count, noise, container, document), sort_keys=False))
