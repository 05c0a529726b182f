"""Verifier for notes-vault: the JSON index and the index page against the vault recomputed
here (PyYAML for front matter, as the task installs it): backlinks, orphans, broken links,
duplicate titles, tag counts, overdue tasks, invalid front matter; lists in any order; the page's
sections in the prescribed order, linking every orphan and broken target and naming overdue tasks."""

import collections
import os
import re
import sys

import yaml

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from checks import APP, app_path, exact_int, load_expected, norm, read_json, run, share

E = load_expected()
ROOT = os.path.join(APP, "vault")
MAX_BYTES = 1024 * 1024
LINK = re.compile(r"(?<!!)\[\[([^\]|#]+)(?:#[^\]|]*)?(?:\|[^\]]*)?\]\]")
TAG = re.compile(r"(?<![\w/#&])#([A-Za-z][\w/-]*)")
TASK = re.compile(r"^\s*[-*] \[ \] (.+?)\s*📅\s*(\d{4}-\d{2}-\d{2})")
HEADING = re.compile(r"^(#{1,6})\s+(.+?)\s*#*\s*$")


def visible(body):
    out, fenced = [], False
    for line in body.split("\n"):
        if re.match(r"^\s*(```|~~~)", line):
            fenced = not fenced
        elif not fenced:
            out.append(re.sub(r"`[^`]*`", "", line))
    return out


def vault():
    notes = {}
    for base, _, names in os.walk(ROOT):
        rel = os.path.relpath(base, ROOT)
        if rel != "." and rel.split(os.sep)[0] in E["ignored"]:
            continue
        for name in names:
            if name.endswith(".md"):
                with open(os.path.join(base, name), encoding="utf-8") as handle:
                    notes[os.path.relpath(os.path.join(base, name), ROOT).replace(os.sep, "/")] = handle.read()
    return notes


NOTES = vault()
STEMS = {n.rsplit("/", 1)[-1][:-3].casefold(): n for n in NOTES}
PATHS = {n[:-3].casefold(): n for n in NOTES}


def resolve(target):
    key = target.strip()
    key = key[:-3] if key.lower().endswith(".md") else key
    return (PATHS if "/" in key else STEMS).get(key.casefold())


def recompute():
    backlinks, broken, titles = collections.defaultdict(set), set(), collections.defaultdict(list)
    tags, overdue, invalid = collections.defaultdict(set), [], []
    for note, text in NOTES.items():
        meta, body = {}, text
        if text.startswith("---\n") and (end := text.find("\n---", 4)) != -1:
            body = text[end + 4:]
            try:
                loaded = yaml.safe_load(text[4:end])
                meta = loaded if isinstance(loaded, dict) else {}
            except yaml.YAMLError:
                invalid.append(note)
        titles[str(meta.get("title") or note.rsplit("/", 1)[-1][:-3]).casefold()].append(note)
        listed = meta.get("tags") or []
        for tag in [listed] if isinstance(listed, str) else listed:
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
            if (task := TASK.match(line)) and task.group(2) < E["today"]:
                overdue.append((note, task.group(1).strip(), task.group(2)))
    return {
        "backlinks": {n: sorted(s) for n, s in backlinks.items()},
        "orphans": sorted(n for n in NOTES if n not in backlinks),
        "broken": collections.Counter(broken),
        "duplicates": sorted(sorted(g) for g in titles.values() if len(g) > 1),
        "tags": {t: len(n) for t, n in tags.items()},
        "overdue": collections.Counter(overdue),
        "invalid": sorted(invalid),
    }


W = recompute()


def index():
    if os.path.getsize(app_path("out/vault_index.json")) > MAX_BYTES:
        raise ValueError("index too large")
    return read_json("out/vault_index.json")


def strings(value):
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise TypeError("expected a list of strings")
    return sorted(value)


def links():
    got = index()
    backlinks = {k: strings(v) for k, v in got["backlinks"].items()}
    broken = collections.Counter((b["source"], b["target"].strip()) for b in got["broken_links"])
    checks = {"backlinks": backlinks == W["backlinks"], "orphans": strings(got["orphans"]) == W["orphans"],
              "broken links": broken == W["broken"]}
    return report("links", checks)


def notes():
    got = index()
    duplicates = sorted(strings(group) for group in got["duplicate_titles"])
    tags = got["tags"]
    checks = {"notes": exact_int(got["notes"], len(NOTES)), "duplicate titles": duplicates == W["duplicates"],
              "tags": isinstance(tags, dict) and set(tags) == set(W["tags"])
              and all(exact_int(tags[t], n) for t, n in W["tags"].items()),
              "invalid front matter": strings(got["invalid_front_matter"]) == W["invalid"]}
    return report("notes", checks)


def tasks():
    got = collections.Counter((t["note"], str(t["task"]).strip(), t["due"]) for t in index()["overdue_tasks"])
    return got == W["overdue"]


def report(name, checks):
    return share(name, [(check.replace(" ", "_"), lambda ok=ok: ok) for check, ok in checks.items()])


def page():
    path = app_path("out/index.md")
    if os.path.getsize(path) > MAX_BYTES:
        raise ValueError("page too large")
    with open(path, encoding="utf-8") as handle:
        lines = handle.read().split("\n")
    bodies, current = collections.OrderedDict(), None
    for line in visible("\n".join(lines)):
        heading = HEADING.match(line)
        if heading and len(heading.group(1)) <= 2:
            current = norm(heading.group(2)) if len(heading.group(1)) == 2 else None
            if current is not None:
                bodies[current] = []
        elif current is not None:
            bodies[current].append(line)
    roles = {role: "\n".join(bodies.get(norm(name), [])) for role, name in E["roles"].items()}
    checks = {"sections": list(bodies) == [norm(s) for s in E["sections"]],
              "no empty section": all(any(line.strip() for line in body) for body in bodies.values())}
    if "orphans" in roles:
        linked = {resolve(t) for t in LINK.findall(roles["orphans"])}
        checks["orphans listed"] = linked - {None} == set(W["orphans"])
    if "broken" in roles:
        unresolved = {t.strip().casefold() for t in LINK.findall(roles["broken"]) if resolve(t) is None}
        checks["broken targets listed"] = unresolved == {t.casefold() for _, t in W["broken"]}
    if "tasks" in roles:
        text = roles["tasks"]
        checks["overdue tasks listed"] = all(task in text and due in text for _, task, due in W["overdue"])
    if "tags" in roles:
        rows = roles["tags"].split("\n")
        checks["tags listed"] = all(any(re.search(rf"(?<![\w/-])#?{re.escape(tag)}(?![\w/-])", row)
                                        and re.search(rf"(?<![\w.]){count}(?![\w.])", row) for row in rows)
                                    for tag, count in W["tags"].items())
    return report("page", checks)


run([("links", links), ("notes", notes), ("tasks", tasks), ("page", page)])
