# --- the weekly update via string.Template, sentences grouped to the skill's limits ---
import csv
import datetime
import json
import os
import re
import sys
from string import Template

from comms_template import installed_format

TASK = json.loads(sys.argv[1])
FMT = TASK["format"] or installed_format()


def parse_day(text):
    text = text.strip()
    if not text:
        return None
    if re.fullmatch(r"\d{4}[-/]\d\d[-/]\d\d", text):
        return datetime.date(int(text[:4]), int(text[5:7]), int(text[8:10]))
    return datetime.datetime.strptime(text, "%b %d, %Y").date()


def spoken(value):
    return f"{value.day} {value.strftime('%B')}"


def state(word):
    word = word.strip().lower().replace("-", " ")
    if word in ("done", "closed", "resolved"):
        return "done"
    return "blocked" if word == "blocked" else "open"


with open("sources/tracker.csv", newline="", encoding="utf-8") as handle:
    rows = list(csv.reader(handle))
head = rows[0]
col = {name: head.index(name) for name in head}
team = TASK["team"].lower()
items = {}
for row in rows[1:]:
    if row[col["team"]].strip().lower() != team:
        continue
    items[row[col["key"]]] = {"key": row[col["key"]], "title": row[col["title"]], "owner": row[col["owner"]],
                              "state": state(row[col["status"]]), "due": parse_day(row[col["due"]]),
                              "closed": parse_day(row[col["completed"]]), "why": row[col["blocker"]]}
with open("sources/metrics.json", encoding="utf-8") as handle:
    figures = {}
    for reading in json.load(handle)["readings"]:
        if reading["team"].lower() == team and reading["status"] != "superseded":
            figures[reading["metric"]] = [f"{reading['value']:,}" if isinstance(reading["value"], int) else str(reading["value"]),
                                          reading["unit"]]
with open("sources/meeting-notes.md", encoding="utf-8") as handle:
    for line in handle:
        moved = re.match(r"- (PLAT-\d+): new target date (\S+)", line)
        freed = re.match(r"- (PLAT-\d+): unblocked.* by (\d{4}-\d\d-\d\d)", line)
        fixed = re.search(r"the (.+?) figure in the dashboard.*corrected value is ([\d.]+\d)", line)
        if moved:
            items[moved.group(1)]["due"] = parse_day(moved.group(2))
        if freed:
            items[freed.group(1)].update(state="open", due=parse_day(freed.group(2)))
        if fixed:
            figures[fixed.group(1)][0] = fixed.group(2)

first, last = parse_day(TASK["start"]), parse_day(TASK["end"])
soon, until = parse_day(TASK["next_start"]), parse_day(TASK["next_end"])
clauses = {
    "progress": [f"we closed {i['key']} ({i['title']})" for i in items.values()
                 if i["state"] == "done" and i["closed"] and first <= i["closed"] <= last],
    "metrics": [f"{name} stands at {value}{'' if u in ('', '%') else ' '}{u}" for name, (value, u) in figures.items()],
    "plans": [f"{i['key']} ({i['title']}) is due {spoken(i['due'])}" for i in items.values()
              if i["state"] == "open" and soon <= i["due"] <= until],
    "problems": [f"{i['key']} ({i['title']}) is stuck ({i['why']}) and {i['owner']} owns it"
                 for i in items.values() if i["state"] == "blocked"],
}
if not any(s["kind"] == "metrics" for s in FMT["sections"]):
    clauses["progress"] += clauses.pop("metrics")


def grouped(parts, limit):
    """At most ``limit`` sentences, each joining a share of the clauses."""
    count = max(1, min(limit or 3, len(parts)))
    size = -(-len(parts) // count)
    groups = [parts[i:i + size] for i in range(0, len(parts), size)]
    return [", and ".join(g)[0].upper() + ", and ".join(g)[1:] + "." for g in groups]


section_line = Template("$label: $body")
heading = Template("$marks $label\n\n$body\n")
out = []
wants = FMT.get("header")
if wants:
    title = Template("$emoji$team, $first to $last").substitute(
        emoji=":rocket: " if wants.get("emoji") else "", team=TASK["team"], first=spoken(first), last=spoken(last))
    out.append(title if FMT["style"] == "lines" else "#" * (FMT["level"] - 1) + " " + title + "\n")
for section in FMT["sections"]:
    sentences = grouped(clauses.get(section["kind"], ["nothing else to add"]), section.get("max_sentences"))
    if FMT["style"] == "lines":
        out.append(section_line.substitute(label=section["label"], body=" ".join(sentences)))
    else:
        out.append(heading.substitute(marks="#" * FMT["level"], label=section["label"],
                                      body="\n".join(f"- {s}" for s in sentences)))
os.makedirs("out", exist_ok=True)
with open("out/update.md", "w", encoding="utf-8") as handle:
    handle.write("\n".join(out).rstrip("\n") + "\n")
