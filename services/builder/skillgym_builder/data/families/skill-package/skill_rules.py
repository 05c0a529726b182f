# --- reading the installed skill's authoring rules (python3 standard library) ---
import glob
import re

FENCE = re.compile(r"^\s*(```|~~~)")
DESCRIPTION_LIMIT = re.compile(r"\b(\d{2,5})\s*(?:characters|chars)\b", re.I)
KEY_CUE = re.compile(r"\b(allowed|permitted|supported)\b.*\b(keys|fields|properties)\b", re.I)
KEY_TOKEN = re.compile(r"`([a-z][a-z0-9-]*)`")
ARCHIVE_CUE = re.compile(r"\b(packag\w*|archives?|bundled?)\b", re.I)
EXTENSION = re.compile(r"`[^`\s]*?(\.[a-z][a-z0-9]{1,7})`")
NOT_ARCHIVES = {".md", ".py", ".sh", ".json", ".yaml", ".yml", ".txt", ".js", ".ts", ".toml", ".html", ".csv",
                ".gz", ".tgz", ".tar", ".bz2", ".xz", ".7z", ".rar"}


def skill_root():
    paths = sorted(glob.glob("/skills/*/SKILL.md"))
    if not paths:
        raise SystemExit("no skill installed under /skills")
    return paths[0][: -len("/SKILL.md")]


def skill_lines():
    """SKILL.md lines after the front matter and outside code fences; fails without the skill."""
    with open(skill_root() + "/SKILL.md", encoding="utf-8-sig") as handle:
        lines = handle.read().replace("\r\n", "\n").split("\n")
    start = 0
    if lines and lines[0].strip() == "---":
        start = next((i + 1 for i in range(1, len(lines)) if lines[i].strip() in ("---", "...")), 0)
    out, fenced = [], False
    for index in range(start, len(lines)):
        if FENCE.match(lines[index]):
            fenced = not fenced
            continue
        if not fenced:
            out.append(lines[index])
    return out


def description_max():
    for raw in skill_lines():
        found = DESCRIPTION_LIMIT.search(raw)
        if found and re.search(r"\bdescriptions?\b", raw, re.I):
            return int(found.group(1))
    return None


def allowed_keys():
    lines = skill_lines()
    for position, raw in enumerate(lines):
        if not KEY_CUE.search(raw):
            continue
        keys = KEY_TOKEN.findall(raw)
        if len(keys) < 3 and raw.rstrip().endswith(":"):
            for text in lines[position + 1:]:
                bullet = re.match(r"\s*[-*+]\s+`([a-z][a-z0-9-]*)`", text)
                if not bullet and (keys or text.strip()):
                    break
                keys += [bullet.group(1)] if bullet else []
        if len(keys) >= 3 and {"name", "description"} <= set(keys):
            return list(dict.fromkeys(keys))
    return None


def archive_extension():
    for raw in skill_lines():
        if ARCHIVE_CUE.search(raw):
            for extension in EXTENSION.findall(raw):
                if extension not in NOT_ARCHIVES:
                    return extension
    return None


def rules(task):
    """The rules in force: the instruction's, with the ones it leaves to the skill read from it."""
    merged = dict(task["rules"])
    readers = {"description_max": description_max, "allowed_keys": allowed_keys, "archive_ext": archive_extension}
    for name in task["from_skill"]:
        value = readers[name]()
        if value is None:
            raise SystemExit(f"the skill does not say {name}")
        merged[name] = value
    return merged
