"""Datasets for the tabular-profile family: generated records with planted duplicates, missing
values, far outliers and malformed lines, written as CSV, SQLite or Parquet, and the profile
recomputed from exactly what was written."""

from __future__ import annotations

import csv
import io
import math
import random
import sqlite3
import statistics
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

THEMES: dict[str, dict[str, Any]] = {
    "air-quality": {"group": "station", "unit": "readings", "numeric": [
        ("pm25_ugm3", 4.0, 35.0), ("no2_ppb", 8.0, 40.0), ("temperature_c", -2.0, 28.0), ("humidity_pct", 30.0, 90.0)],
        "names": ["Harbor", "Eastgate", "Millbrook", "Northfield", "Riverside", "Westpark"]},
    "retail": {"group": "store", "unit": "sales", "numeric": [
        ("units", 1.0, 40.0), ("unit_price", 2.5, 80.0), ("discount_pct", 0.0, 25.0), ("basket_size", 1.0, 12.0)],
        "names": ["Downtown", "Airport", "Mall East", "Old Town", "Seaside", "University"]},
    "water-lab": {"group": "instrument", "unit": "samples", "numeric": [
        ("concentration_mg_l", 0.5, 12.0), ("ph", 5.5, 8.5), ("conductivity_us_cm", 120.0, 900.0), ("turbidity_ntu", 0.1, 4.0)],
        "names": ["HPLC-2", "ICP-7", "Probe-A", "Probe-C", "Titrator-1"]},
    "energy": {"group": "site", "unit": "meter", "numeric": [
        ("load_kw", 40.0, 400.0), ("voltage_v", 225.0, 245.0), ("power_factor", 0.8, 0.99), ("ambient_c", 5.0, 35.0)],
        "names": ["Plant North", "Depot 4", "Campus", "Warehouse B", "Substation 9"]},
}
REGIONS = ["North", "South", "Central", "Coastal"]
MISSING_MARKERS = ["", "NA", "N/A", "null", "-"]
FORMATS = ("csv", "sqlite", "parquet")


def parquet_available() -> bool:
    try:
        import pyarrow  # noqa: F401
    except ImportError:
        return False
    return True


@dataclass
class Dataset:
    path: str  # relative to /app
    fmt: str
    table: str
    group: str  # the grouping column written in the file
    numeric: list[str]
    target: str
    rows: list[dict[str, Any]]  # as written, duplicates included; None = missing
    bad_lines: list[str] = field(default_factory=list)  # malformed CSV lines (rejected)
    lookup: dict[str, tuple[str, str]] | None = None  # code -> (name, region) when grouping needs a join


def _value(rng: random.Random, lo: float, hi: float) -> float:
    return round(rng.uniform(lo, hi), 2)


def measurements(rng: random.Random, theme_id: str) -> list[tuple[str, float, float]]:
    """The numeric columns of an instance (the first is the one groups are compared on)."""
    return rng.sample(THEMES[theme_id]["numeric"], 3)


def generate(
    rng: random.Random, theme_id: str, index: int, knobs: dict[str, float], fmt: str,
    columns: list[tuple[str, float, float]],
) -> Dataset:
    theme = THEMES[theme_id]
    count = int(knobs["record_count"])
    noise = float(knobs["noise_level"])
    names = rng.sample(theme["names"], min(len(theme["names"]), rng.randint(3, 5)))
    lookup = None
    group_col = theme["group"]
    if knobs["multi_step"]:
        group_col = f"{theme['group']}_code"
        lookup = {f"{theme['group'][:2].upper()}{i + 1:02d}": (name, rng.choice(REGIONS)) for i, name in enumerate(names)}
        names = list(lookup)
    stem = theme_id.replace("-", "_") + (f"_{index + 1}" if index else "")
    rows = []
    for number in range(count):
        row: dict[str, Any] = {"record_id": 1000 + number, group_col: rng.choice(names),
                               "recorded_on": f"2025-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d}"}
        for name, lo, hi in columns:
            row[name] = _value(rng, lo, hi)
        rows.append(row)
    missing_rate = 0.03 + noise
    for name, _lo, _hi in columns:
        for row in rng.sample(rows, max(1, round(count * missing_rate))):
            row[name] = None
    for name, lo, hi in columns:
        width = hi - lo
        candidates = [r for r in rows if r[name] is not None]
        for pick, row in enumerate(rng.sample(candidates, max(1, min(4, count // 150)))):
            far = width * (3 + rng.random() * 3)
            row[name] = round(hi + far if pick % 2 == 0 else lo - far, 2)
    for _ in range(max(1, round(count * noise / 2))):
        rows.insert(rng.randrange(1, len(rows) + 1), dict(rng.choice(rows)))
    dataset = Dataset(
        path=f"data/{stem}.{fmt}",
        fmt=fmt, table=theme["unit"], group=group_col, numeric=[c[0] for c in columns], target=columns[0][0],
        rows=rows, lookup=lookup,
    )
    if fmt == "csv" and knobs["error_recovery"]:
        header = ",".join(field_names(dataset))
        dataset.bad_lines = [header, f"{1000 + count + 7},{names[0]}", f"{1000 + count + 9},{names[-1]},2025-02-30,1,2,3,4"]
    return dataset


def field_names(dataset: Dataset) -> list[str]:
    return ["record_id", dataset.group, "recorded_on", *dataset.numeric]


def _cell(value: Any, rng: random.Random, noise: float) -> str:
    if value is None:
        return rng.choice(MISSING_MARKERS) if noise > 0 else ""
    if isinstance(value, str) and noise > 0 and rng.random() < noise:
        return f" {value} " if rng.random() < 0.5 else f"{value}  "
    return str(value)


def encode(dataset: Dataset, rng: random.Random, noise: float) -> bytes:
    names = field_names(dataset)
    if dataset.fmt == "csv":
        buffer = io.StringIO()
        writer = csv.writer(buffer, lineterminator="\n")
        writer.writerow(names)
        lines = [buffer.getvalue()]
        for row in dataset.rows:
            buffer = io.StringIO()
            csv.writer(buffer, lineterminator="\n").writerow([_cell(row[n], rng, noise) for n in names])
            lines.append(buffer.getvalue())
        for bad in dataset.bad_lines:
            lines.insert(rng.randrange(2, len(lines)), bad + "\n")
        return "".join(lines).encode()
    with tempfile.TemporaryDirectory() as tmp:
        target = Path(tmp) / "data"
        if dataset.fmt == "sqlite":
            connection = sqlite3.connect(target)
            types = ["INTEGER", "TEXT", "TEXT", *["REAL"] * len(dataset.numeric)]
            columns = ", ".join(f'"{n}" {t}' for n, t in zip(names, types, strict=True))
            connection.execute(f'CREATE TABLE "{dataset.table}" ({columns})')
            marks = ", ".join("?" for _ in names)
            connection.executemany(f'INSERT INTO "{dataset.table}" VALUES ({marks})',
                                   [[row[n] for n in names] for row in dataset.rows])
            connection.commit()
            connection.close()
        else:
            import pyarrow as pa
            import pyarrow.parquet as pq

            table = pa.table({n: [row[n] for row in dataset.rows] for n in names})
            pq.write_table(table, target, compression="snappy")
        return target.read_bytes()


def lookup_csv(dataset: Dataset, group: str) -> bytes:
    assert dataset.lookup is not None
    lines = [f"{dataset.group},{group},region"] + [f"{code},{name},{region}" for code, (name, region) in dataset.lookup.items()]
    return ("\n".join(lines) + "\n").encode()


def _quartiles(values: list[float]) -> tuple[float, float]:
    ordered = sorted(values)

    def at(q: float) -> float:  # linear interpolation between closest ranks (numpy/pandas default)
        position = (len(ordered) - 1) * q
        low = math.floor(position)
        high = min(low + 1, len(ordered) - 1)
        return ordered[low] + (ordered[high] - ordered[low]) * (position - low)

    return at(0.25), at(0.75)


def profile(dataset: Dataset) -> dict[str, Any]:
    """The expected profile, from the records exactly as written."""
    seen: set[tuple[Any, ...]] = set()
    unique, duplicates = [], 0
    names = field_names(dataset)
    for row in dataset.rows:
        key = tuple(row[n] for n in names)
        if key in seen:
            duplicates += 1
            continue
        seen.add(key)
        unique.append(row)
    columns = {}
    for name in dataset.numeric:
        values = [float(r[name]) for r in unique if r[name] is not None]
        q1, q3 = _quartiles(values)
        fence = 1.5 * (q3 - q1)
        columns[name] = {
            "missing": len(unique) - len(values),
            "mean": math.fsum(values) / len(values),
            "median": statistics.median(values),
            "std": statistics.stdev(values),
            "min": min(values),
            "max": max(values),
            "outliers": sorted(r["record_id"] for r in unique
                               if r[name] is not None and not q1 - fence <= r[name] <= q3 + fence),
        }
    groups: dict[str, list[dict[str, Any]]] = {}
    for row in unique:
        label = str(row[dataset.group])
        if dataset.lookup is not None:
            label = dataset.lookup[label][1]
        groups.setdefault(label, []).append(row)
    target = dataset.target
    group_stats = {}
    for label, members in sorted(groups.items()):
        values = [float(r[target]) for r in members if r[target] is not None]
        group_stats[label] = {"rows": len(members), f"mean_{target}": math.fsum(values) / len(values) if values else None}
    return {
        "rows": len(dataset.rows),
        "duplicate_rows": duplicates,
        "rejected_rows": len(dataset.bad_lines),
        "columns": columns,
        "groups": group_stats,
    }
