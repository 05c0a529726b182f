# --- indexing the vault with PyYAML for the front matter ---
import json
import os
import re
import sys
from collections import defaultdict

import yaml
from vaultfacts import index_sections, section_roles

TASK = json.loads(sys.argv[1])
SECTIONS = TASK["sections"] or index_sections()
ROLES = section_roles(SECTIONS)
ROOT = "vault"
LINK = re.compile(r"(?<!!)\[\[([^\]|#]+)(?:#[^\]|]*)?(?:\|[^\]]*)?\]\]")
TAG = re.compile(r"(?<![\w/#&])#([A-Za-z][\w/-]*)")
TASK_LINE = re.compile(r"^\s*[-*] \[ \] (.+?)\s*📅\s*(\d{4}-\d{2}-\d{2})")

notes = {}
for base, _dirs, names in os.walk(ROOT):
    rel = os.path.relpath(base, ROOT)
    if rel != "." and rel.split(os.sep)[0] in TASK["ignored"]:
        continue
    for name in names:
        if name.endswith(".md"):
            path = os.path.join(base, name)
            with open(path, encoding="utf-8") as handle:
                notes[os.path.relpath(path, ROOT).replace(os.sep, "/")] = handle.read()


def split(text):
    """(front matter dict, body, front matter broken)."""
    if text.startswith("---\n"):
        end = text.find("\n---", 4)
        if end != -1:
            raw, body = text[4:end], text[end + 4:]
            try:
                data = yaml.safe_load(raw)
            except yaml.YAMLError:
                return {}, body, True
            return (data if isinstance(data, dict) else {}), body, False
    return {}, text, False


def visible(body):
    out, fenced = [], False
    for line in body.split("\n"):
        if line.lstrip().startswith(("```", "~~~")):
            fenced = not fenced
        elif not fenced:
            out.append(re.sub(r"`[^`]*`", "", line))
    return out


by_stem = {os.path.basename(n)[:-3].casefold(): n for n in notes}
by_path = {n[:-3].casefold(): n for n in notes}


def resolve(target):
    key = target.strip()
    key = key[:-3] if key.lower().endswith(".md") else key
    return (by_path if "/" in key else by_stem).get(key.casefold())


backlinks, broken, titles, tags, overdue, invalid = defaultdict(set), set(), defaultdict(list), defaultdict(set), [], []
for note, text in sorted(notes.items()):
    meta, body, bad = split(text)
    if bad:
        invalid.append(note)
    title = meta.get("title")
    titles[str(title if title else os.path.basename(note)[:-3]).casefold()].append(note)
    raw_tags = meta.get("tags") or []
    for tag in [raw_tags] if isinstance(raw_tags, str) else raw_tags:
        if tag:
            tags[str(tag).strip().lstrip("#").lower()].add(note)
    for line in visible(body):
        for target in LINK.findall(line):
            found = resolve(target)
            if found is None:
                broken.add((note, target.strip()))
            elif found != note:
                backlinks[found].add(note)
        for tag in TAG.findall(line):
            tags[tag.lower()].add(note)
        task = TASK_LINE.match(line)
        if task and task.group(2) < TASK["today"]:
            overdue.append({"note": note, "task": task.group(1).strip(), "due": task.group(2)})

orphans = sorted(n for n in notes if n not in backlinks)
index = {
    "notes": len(notes),
    "backlinks": {n: sorted(s) for n, s in sorted(backlinks.items())},
    "orphans": orphans,
    "broken_links": [{"source": s, "target": t} for s, t in sorted(broken)],
    "duplicate_titles": sorted(sorted(group) for group in titles.values() if len(group) > 1),
    "tags": {t: len(n) for t, n in sorted(tags.items())},
    "overdue_tasks": overdue,
    "invalid_front_matter": sorted(invalid),
}
os.makedirs("out", exist_ok=True)
with open("out/vault_index.json", "w", encoding="utf-8") as handle:
    json.dump(index, handle, indent=2, ensure_ascii=False)

page = ["# Vault index", ""]
for section in SECTIONS:
    page += [f"## {section}", ""]
    if section == ROLES.get("orphans"):
        page += [f"- [[{n[:-3]}]]" for n in orphans]
    elif section == ROLES.get("broken"):
        page += [f"- [[{t}]] (from [[{s[:-3]}]])" for s, t in sorted(broken)]
    elif section == ROLES.get("tasks"):
        page += [f"- {t['task']} (due {t['due']}, in [[{t['note'][:-3]}]])" for t in overdue]
    elif section == ROLES.get("tags"):
        page += [f"- #{t}: {len(n)} notes" for t, n in sorted(tags.items(), key=lambda item: (-len(item[1]), item[0]))]
    else:
        page += [f"- {len(notes)} notes, {len(tags)} tags, {sum(map(len, backlinks.values()))} linked pairs"]
    if not page[-1].strip():
        page.append("- none")
    page.append("")
with open("out/index.md", "w", encoding="utf-8") as handle:
    handle.write("\n".join(page))
