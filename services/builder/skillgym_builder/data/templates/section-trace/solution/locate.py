"""Step 1: find each quote's section heading and line in the skill's SKILL.md."""

import glob
import json
import os
import re

HEADING = re.compile(r"^(#{1,6})\s+(.+?)\s*#*\s*$")


def clean(text):
    text = re.sub(r"^\s*(?:[-*+]|\d+[.)])\s+(?:\[[ xX]\]\s+)?", "", text)
    return re.sub(r"[*_`]+", "", text).strip()


skill_md = sorted(glob.glob("/skills/*/SKILL.md"))[0]
index: dict[str, tuple[str, int]] = {}
section, fenced = None, False
with open(skill_md, encoding="utf-8-sig") as handle:
    lines = handle.read().split("\n")
body_start = 0
if lines and lines[0].strip() == "---":
    body_start = next((i + 1 for i in range(1, len(lines)) if lines[i].strip() in ("---", "...")), 0)
for number, raw in enumerate(lines, start=1):
    if number <= body_start:
        continue
    if re.match(r"^\s*(```|~~~)", raw):
        fenced = not fenced
        continue
    if fenced:
        continue
    match = HEADING.match(raw)
    if match:
        section = clean(match.group(2))
    elif section:
        index.setdefault(clean(raw), (section, number))

found = {}
with open("queries.jsonl", encoding="utf-8") as handle:
    for line in handle:
        if line.strip():
            query = json.loads(line)
            found[query["id"]] = index[query["text"]]

os.makedirs("out", exist_ok=True)
with open("out/locations.json", "w", encoding="utf-8") as out:
    json.dump({qid: sec for qid, (sec, _) in found.items()}, out, indent=2)
with open("out/.lines.json", "w", encoding="utf-8") as out:
    json.dump({qid: num for qid, (_, num) in found.items()}, out)
