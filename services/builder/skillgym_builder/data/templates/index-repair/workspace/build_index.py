"""Build the heading index of a skill's SKILL.md as configured in index.conf.json."""

import json
import re
import sys
from pathlib import Path

HEADING = re.compile(r"^(#{1,6})\s+(.+?)\s*#*\s*$")


def clean(text):
    return re.sub(r"[*_`]+", "", text).strip()


def main():
    config = json.loads(Path("index.conf.json").read_text(encoding="utf-8"))
    lines = Path(config["skill_file"]).read_text(encoding="utf-8-sig").split("\n")
    start = 0
    if lines and lines[0].strip() == "---":
        start = next((i + 1 for i in range(1, len(lines)) if lines[i].strip() in ("---", "...")), 0)
    excluded = [re.compile(pattern) for pattern in config.get("exclude", [])]
    entries, fenced = [], False
    for number, raw in enumerate(lines, start=1):
        if number <= start:
            continue
        if re.match(r"^\s*(```|~~~)", raw):
            fenced = not fenced
            continue
        match = None if fenced else HEADING.match(raw)
        if not match:
            continue
        level, title = len(match.group(1)), clean(match.group(2))
        if not title or not config["min_level"] <= level <= config["max_level"]:
            continue
        if any(pattern.search(title) for pattern in excluded):
            continue
        entries.append({"title": title, "level": level, "line": number})
    Path(config["output"]).write_text(json.dumps(entries, indent=2) + "\n", encoding="utf-8")
    print(f"indexed {len(entries)} headings into {config['output']}")


if __name__ == "__main__":
    sys.exit(main())
