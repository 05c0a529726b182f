"""Diagnose the index build against the skill's real headings, fix the configuration, rebuild."""

import glob
import json
import re
import subprocess
import sys
from pathlib import Path

BROAD = "--broad" in sys.argv
HEADING = re.compile(r"^(#{1,6})\s+(.+?)\s*#*\s*$")
conf_path = Path("index.conf.json")
conf = json.loads(conf_path.read_text(encoding="utf-8"))
skill_file = sorted(glob.glob("/skills/*/SKILL.md"))[0]

faulty = None
if not Path(conf["skill_file"]).is_file():
    faulty, conf["skill_file"] = "skill_file", skill_file
else:
    text = Path(skill_file).read_text(encoding="utf-8-sig").split("\n")
    fenced, titles = False, []
    for raw in text:
        if re.match(r"^\s*(```|~~~)", raw):
            fenced = not fenced
        elif not fenced and (m := HEADING.match(raw)):
            titles.append((len(m.group(1)), re.sub(r"[*_`]+", "", m.group(2)).strip()))
    levels = [level for level, _ in titles]
    if min(levels) < conf["min_level"]:
        faulty, conf["min_level"] = "min_level", min(levels)
    elif max(levels) > conf["max_level"]:
        faulty, conf["max_level"] = "max_level", max(levels)
    else:
        keep = [p for p in conf["exclude"] if not any(re.search(p, t) for _, t in titles)]
        if keep != conf["exclude"]:
            faulty, conf["exclude"] = "exclude", keep
if BROAD:
    conf.update(min_level=1, max_level=6, exclude=[], skill_file=skill_file)
conf_path.write_text(json.dumps(conf, indent=2) + "\n", encoding="utf-8")
subprocess.run([sys.executable, "tools/build_index.py"], check=True)
Path("diagnosis.json").write_text(json.dumps({"faulty_key": faulty}) + "\n", encoding="utf-8")
