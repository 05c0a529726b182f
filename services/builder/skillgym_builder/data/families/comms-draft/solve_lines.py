# --- writing the weekly update from the sources, in the format the skill prescribes ---
import csv
import datetime
import json
import os
import re
import sys

from comms_template import installed_format

TASK = json.loads(sys.argv[1])
FMT = TASK["format"] or installed_format()  # the skill's template, unless the task states the format
TEAM = TASK["team"].casefold()
STATUS = {"done": "done", "closed": "done", "resolved": "done", "in progress": "open", "in-progress": "open",
          "wip": "open", "to do": "todo", "todo": "todo", "open": "todo", "blocked": "blocked"}


def day(text):
    text = text.strip()
    for pattern in ("%Y-%m-%d", "%b %d, %Y", "%Y/%m/%d"):
        try:
            return datetime.datetime.strptime(text, pattern).date()
        except ValueError:
            continue
    return None


with open("sources/tracker.csv", encoding="utf-8") as handle:
    items = [row for row in csv.DictReader(handle) if row["team"].strip().casefold() == TEAM]
for item in items:
    item["status"] = STATUS[item["status"].strip().casefold()]
    item["due"], item["completed"] = day(item["due"]), day(item["completed"])
with open("sources/metrics.json", encoding="utf-8") as handle:
    readings = json.load(handle)["readings"]
metrics = {r["metric"]: (str(r["value"]), r["unit"]) for r in readings
           if r["team"].casefold() == TEAM and r["status"] == "final"}

# the meeting notes are newer than the exports
with open("sources/meeting-notes.md", encoding="utf-8") as handle:
    notes = handle.read()
by_key = {item["key"]: item for item in items}
for key, new in re.findall(r"^- (PLAT-\d+): new target date (\d{4}-\d\d-\d\d)", notes, re.M):
    by_key[key]["due"] = day(new)
for key, finish in re.findall(r"^- (PLAT-\d+): unblocked\b.*?finish by (\d{4}-\d\d-\d\d)", notes, re.M):
    by_key[key].update(status="open", due=day(finish))
for name, value in re.findall(r"Correction: the (.+?) figure .*?corrected value is ([\d.,]+)", notes):
    metrics[name] = (value.rstrip(".,"), metrics[name][1])

start, end = day(TASK["start"]), day(TASK["end"])
next_start, next_end = day(TASK["next_start"]), day(TASK["next_end"])
done = [i for i in items if i["status"] == "done" and i["completed"] and start <= i["completed"] <= end]
plans = sorted((i for i in items if i["status"] in ("open", "todo") and next_start <= i["due"] <= next_end),
               key=lambda i: i["due"])
blocked = [i for i in items if i["status"] == "blocked"]


def unit(value, name):
    return value + name if name in ("", "%") else f"{value} {name}"


figures = "current figures: " + "; ".join(f"{name} {unit(v, u)}" for name, (v, u) in sorted(metrics.items()))
kinds = [s["kind"] for s in FMT["sections"]]
content = {
    "progress": "Completed " + "; ".join(f"{i['key']} {i['title']}" for i in done)
    + ("" if "metrics" in kinds else "; " + figures) + ".",
    "metrics": figures[0].upper() + figures[1:] + ".",
    "plans": "Due next week: " + "; ".join(f"{i['key']} {i['title']} by {i['due'].isoformat()}" for i in plans) + ".",
    "problems": "; ".join(f"{i['key']} {i['title']} is blocked ({i['blocker']}), owner {i['owner']}" for i in blocked)
    + ".",
}
lines = []
header = FMT.get("header")
if header:
    title = ("📈 " if header.get("emoji") else "") + f"{TASK['team']} weekly update ({start.isoformat()} to {end.isoformat()})"
    lines.append(("#" * (FMT["level"] - 1) + " " + title) if FMT["style"] == "headings" else title)
for section in FMT["sections"]:
    text = content.get(section["kind"], "Nothing further this week.")
    if FMT["style"] == "lines":
        lines.append(f"{section['label']}: {text}")
    else:
        lines += ["", "#" * FMT["level"] + " " + section["label"], text]
os.makedirs("out", exist_ok=True)
with open("out/update.md", "w", encoding="utf-8") as handle:
    handle.write("\n".join(lines) + "\n")
print("\n".join(lines))
