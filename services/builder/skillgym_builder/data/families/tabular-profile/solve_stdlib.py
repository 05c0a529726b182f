# --- profiling the datasets with the standard library only ---
import csv
import json
import math
import os
import sqlite3
import statistics
import sys

from skillfacts import report_sections

TASK = json.loads(sys.argv[1])
MARKERS = set(TASK["markers"])


def records(ds):
    """(field names, rows as dicts of parsed values, rejected line count)."""
    if ds["fmt"] == "csv":
        with open(ds["path"], newline="", encoding="utf-8") as handle:
            lines = list(csv.reader(handle))
        header, rows, rejected = lines[0], [], 0
        for raw in lines[1:]:
            cells = [c.strip() for c in raw]
            if len(cells) != len(header) or cells == header:
                rejected += 1
                continue
            row = {}
            for name, cell in zip(header, cells, strict=True):
                if name in (ds["group"], "recorded_on"):
                    row[name] = cell
                else:
                    row[name] = None if cell in MARKERS else float(cell)
            rows.append(row)
        return header, rows, rejected
    if ds["fmt"] == "sqlite":
        connection = sqlite3.connect(ds["path"])
        cursor = connection.execute(f'SELECT * FROM "{ds["table"]}"')
        header = [d[0] for d in cursor.description]
        rows = [dict(zip(header, values, strict=True)) for values in cursor.fetchall()]
        connection.close()
        return header, rows, 0
    import pyarrow.parquet as pq

    table = pq.read_table(ds["path"])
    return table.column_names, table.to_pylist(), 0


def profile(ds):
    header, rows, rejected = records(ds)
    seen, unique = set(), []
    for row in rows:
        key = tuple(None if row[n] is None else float(row[n]) if n not in (ds["group"], "recorded_on") else row[n]
                    for n in header)
        if key not in seen:
            seen.add(key)
            unique.append(row)
    columns = {}
    for name in [n for n in header if n not in ("record_id", "recorded_on", ds["group"])]:
        values = [float(r[name]) for r in unique if r[name] is not None]
        q1, _, q3 = statistics.quantiles(values, n=4, method="inclusive")
        low, high = q1 - 1.5 * (q3 - q1), q3 + 1.5 * (q3 - q1)
        columns[name] = {
            "missing": len(unique) - len(values), "mean": math.fsum(values) / len(values),
            "median": statistics.median(values), "std": statistics.stdev(values),
            "min": min(values), "max": max(values),
            "outliers": sorted(int(r["record_id"]) for r in unique if r[name] is not None and not low <= r[name] <= high),
        }
    region = {}
    if ds.get("lookup"):
        with open(ds["lookup"]["path"], newline="", encoding="utf-8") as handle:
            region = {r[ds["group"]].strip(): r["region"].strip() for r in csv.DictReader(handle)}
    groups = {}
    for row in unique:
        label = str(row[ds["group"]]).strip()
        groups.setdefault(region.get(label, label), []).append(row)
    target = ds["target"]
    summary = {}
    for label, members in groups.items():
        values = [float(r[target]) for r in members if r[target] is not None]
        summary[label] = {"rows": len(members), "mean_" + target: math.fsum(values) / len(values)}
    return {"rows": len(rows), "duplicate_rows": len(rows) - len(unique), "rejected_rows": rejected,
            "columns": columns, "groups": summary}


result = {ds["path"]: profile(ds) for ds in TASK["datasets"]}
os.makedirs("out", exist_ok=True)
with open("out/profile.json", "w", encoding="utf-8") as handle:
    handle.write(json.dumps({"datasets": result}, separators=(",", ":"), sort_keys=True))
if TASK["report"]:
    sections = report_sections()
    with open("out/report.md", "w", encoding="utf-8") as handle:
        handle.write("Profiling report\n================\n\n")
        for title in sections:
            handle.write(f"### {title.upper()}\n")
            for path, entry in sorted(result.items()):
                handle.write(f"{os.path.basename(path)} has {entry['rows']} rows.\n")
            handle.write("\n")
