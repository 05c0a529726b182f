# --- reading the installed skill's authoring rules (python3 standard library) ---
import re

from skill_text import skill_lines

DESCRIPTION_LIMIT = re.compile(r"\b(\d{2,5})\s*(?:characters|chars)\b", re.I)
KEY_CUE = re.compile(r"\b(allowed|permitted|supported)\b.*\b(keys|fields|properties)\b", re.I)
KEY_TOKEN = re.compile(r"`([a-z][a-z0-9-]*)`")
ARCHIVE_CUE = re.compile(r"\b(packag\w*|archives?|bundled?)\b", re.I)
EXTENSION = re.compile(r"`[^`\s]*?(\.[a-z][a-z0-9]{1,7})`")
NOT_ARCHIVES = {".md", ".py", ".sh", ".json", ".yaml", ".yml", ".txt", ".js", ".ts", ".toml", ".html", ".csv",
                ".gz", ".tgz", ".tar", ".bz2", ".xz", ".7z", ".rar"}


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
