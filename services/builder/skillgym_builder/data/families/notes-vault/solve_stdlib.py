# --- indexing the vault with a hand-written front matter reader (standard library only) ---
import json
import re
import sys
from collections import Counter
from pathlib import Path

from vaultfacts import index_sections, section_roles

TASK = json.loads(sys.argv[1])
SECTIONS = TASK["sections"] or index_sections()
ROLES = section_roles(SECTIONS)
ROOT = Path("vault")


class BadFrontMatter(ValueError):
    pass


def scalar(text):
    text = text.strip()
    if len(text) >= 2 and text[0] == text[-1] and text[0] in "\"'":
        return text[1:-1]
    return text


def front_matter(lines):
    """A small reader for the `key: value`, `key: [a, b]` and block-list forms notes use."""
    data, key = {}, None
    for line in lines:
        if not line.strip():
            continue
        item = re.match(r"^\s+-\s+(.*)$", line)
        if item and key:
            data.setdefault(key, []).append(scalar(item.group(1)))
            continue
        pair = re.match(r"^([\w-]+):\s*(.*)$", line)
        if not pair:
            raise BadFrontMatter(line)
        key, value = pair.group(1), pair.group(2).strip()
        if value.startswith("["):
            if not value.endswith("]"):
                raise BadFrontMatter(line)
            data[key] = [scalar(v) for v in value[1:-1].split(",") if v.strip()]
        elif value:
            data[key] = scalar(value)
    return data


def read(path):
    lines = path.read_text(encoding="utf-8").split("\n")
    meta, bad, body = {}, False, lines
    if lines[0] == "---" and "---" in lines[1:]:
        end = lines.index("---", 1)
        body = lines[end + 1:]
        try:
            meta = front_matter(lines[1:end])
        except BadFrontMatter:
            meta, bad = {}, True
    kept, fenced = [], False
    for line in body:
        if re.match(r"^\s*(```|~~~)", line):
            fenced = not fenced
        elif not fenced:
            kept.append(re.sub(r"`[^`]*`", "", line))
    return meta, bad, kept


notes = sorted(p for p in ROOT.rglob("*.md") if p.relative_to(ROOT).parts[0] not in TASK["ignored"])
ids = {p: p.relative_to(ROOT).as_posix() for p in notes}
parsed = {ids[p]: read(p) for p in notes}
lookup = {}
for note in parsed:
    lookup[("stem", note.rsplit("/", 1)[-1][:-3].lower())] = note
    lookup[("path", note[:-3].lower())] = note

incoming = {note: set() for note in parsed}
broken, tag_notes, overdue, invalid, by_title = set(), {}, [], [], {}
for note, (meta, bad, lines) in parsed.items():
    if bad:
        invalid.append(note)
    by_title.setdefault(str(meta.get("title") or note.rsplit("/", 1)[-1][:-3]).lower(), []).append(note)
    found_tags = meta.get("tags") or []
    found_tags = [found_tags] if isinstance(found_tags, str) else found_tags
    text = "\n".join(lines)
    found_tags += re.findall(r"(?<![\w/#&])#([A-Za-z][\w/-]*)", text)
    for tag in {t.strip().lstrip("#").lower() for t in found_tags if t.strip()}:
        tag_notes[tag] = tag_notes.get(tag, 0) + 1
    for raw in re.findall(r"(?<!!)\[\[([^\]]+)\]\]", text):
        target = re.split(r"[#|]", raw, maxsplit=1)[0].strip()
        name = target[:-3] if target.lower().endswith(".md") else target
        hit = lookup.get(("path" if "/" in name else "stem", name.lower()))
        if hit is None:
            broken.add((note, target))
        elif hit != note:
            incoming[hit].add(note)
    for line in lines:
        task = re.match(r"^\s*[-*] \[ \] (.+?)\s*📅\s*(\d{4}-\d{2}-\d{2})", line)
        if task and task.group(2) < TASK["today"]:
            overdue.append({"due": task.group(2), "note": note, "task": task.group(1).strip()})

orphans = [n for n, sources in incoming.items() if not sources]
result = {"notes": len(parsed), "orphans": sorted(orphans, reverse=True),
          "backlinks": {n: sorted(s) for n, s in incoming.items() if s},
          "broken_links": [{"target": t, "source": s} for s, t in sorted(broken)],
          "duplicate_titles": [sorted(g) for g in by_title.values() if len(g) > 1],
          "tags": dict(Counter(tag_notes).most_common()), "overdue_tasks": overdue,
          "invalid_front_matter": invalid}
Path("out").mkdir(exist_ok=True)
Path("out/vault_index.json").write_text(json.dumps(result, sort_keys=True), encoding="utf-8")

page = ["# Index", f"{len(parsed)} notes indexed on {TASK['today']}.", ""]
for section in SECTIONS:
    page.append(f"## {section}")
    if section == ROLES.get("orphans"):
        page += [f"- [[{n.rsplit('/', 1)[-1][:-3]}]]" for n in sorted(orphans)]
    elif section == ROLES.get("broken"):
        page += [f"- [[{t}]]" for t in sorted({t for _, t in broken})]
    elif section == ROLES.get("tasks"):
        page += [f"- [ ] {t['task']} ({t['note']}, {t['due']})" for t in overdue]
    else:
        page += [f"- {tag}: {count}" for tag, count in sorted(tag_notes.items())]
    if page[-1] == f"## {section}":
        page.append("Nothing here.")
    page.append("")
Path("out/index.md").write_text("\n".join(page), encoding="utf-8")
