# --- profiling the datasets with pandas ---
import csv
import json
import os
import sqlite3
import sys

import pandas as pd
from skillfacts import report_sections

TASK = json.loads(sys.argv[1])
MARKERS = TASK["markers"]
KEYS = ("record_id", "recorded_on")


def load(ds):
    rejected = 0
    if ds["fmt"] == "csv":
        with open(ds["path"], newline="", encoding="utf-8") as handle:
            lines = list(csv.reader(handle))
        header, body = lines[0], lines[1:]
        good = [row for row in body if len(row) == len(header) and [c.strip() for c in row] != header]
        rejected = len(body) - len(good)
        frame = pd.DataFrame(good, columns=header).apply(lambda col: col.str.strip())
        for column in header:
            if column != ds["group"] and column != "recorded_on":
                frame[column] = pd.to_numeric(frame[column].where(~frame[column].isin(MARKERS)))
    elif ds["fmt"] == "sqlite":
        with sqlite3.connect(ds["path"]) as connection:
            frame = pd.read_sql_query(f'SELECT * FROM "{ds["table"]}"', connection)
    else:
        frame = pd.read_parquet(ds["path"])
    return frame, rejected


def profile(ds):
    frame, rejected = load(ds)
    rows = len(frame)
    duplicates = int(frame.duplicated().sum())
    frame = frame.drop_duplicates()
    numeric = [c for c in frame.columns if c not in KEYS and c != ds["group"]]
    columns = {}
    for name in numeric:
        values = frame[name].dropna().astype(float)
        q1, q3 = values.quantile(0.25), values.quantile(0.75)
        fence = 1.5 * (q3 - q1)
        flagged = frame.loc[values.index[(values < q1 - fence) | (values > q3 + fence)], "record_id"]
        columns[name] = {
            "missing": int(frame[name].isna().sum()),
            "mean": float(values.mean()), "median": float(values.median()), "std": float(values.std()),
            "min": float(values.min()), "max": float(values.max()),
            "outliers": sorted(int(v) for v in flagged),
        }
    label = ds["group"]
    if ds.get("lookup"):
        table = pd.read_csv(ds["lookup"]["path"], dtype=str).apply(lambda col: col.str.strip())
        frame = frame.merge(table[[ds["group"], "region"]], on=ds["group"], how="left")
        label = "region"
    groups = {}
    for key, members in frame.groupby(label):
        groups[str(key).strip()] = {"rows": len(members), f"mean_{ds['target']}": float(members[ds["target"]].mean())}
    return {"rows": rows, "duplicate_rows": duplicates, "rejected_rows": rejected, "columns": columns, "groups": groups}


def report(result):
    lines = ["# Exploratory data analysis", ""]
    for title in report_sections():
        lines += [f"## {title}", ""]
        for path, entry in result.items():
            worst = max(entry["columns"].items(), key=lambda item: item[1]["missing"])
            lines.append(f"- {os.path.basename(path)}: {entry['rows']} rows, {entry['duplicate_rows']} duplicates, "
                         f"most gaps in {worst[0]} ({worst[1]['missing']})")
        lines.append("")
    return "\n".join(lines)


result = {ds["path"]: profile(ds) for ds in TASK["datasets"]}
os.makedirs("out", exist_ok=True)
with open("out/profile.json", "w", encoding="utf-8") as handle:
    json.dump({"datasets": result}, handle, indent=2)
if TASK["report"]:
    with open("out/report.md", "w", encoding="utf-8") as handle:
        handle.write(report(result))
