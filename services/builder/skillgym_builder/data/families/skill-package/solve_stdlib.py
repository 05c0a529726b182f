# --- fixing the draft skills line by line (python3 standard library only) ---
import json
import os
import re
import sys
import zipfile

from skill_rules import rules

TASK = json.loads(sys.argv[1])
RULES = rules(TASK)
LINK = re.compile(r"(\[[^\]]*\]\()([^)\s]*)(\))")
SCRIPT_MENTION = re.compile(r"\bscripts?/[A-Za-z0-9_.-]+")
PLACEHOLDER = re.compile(r"\{\{\s*([A-Za-z_][A-Za-z0-9_]*)\s*\}\}")
TYPE_NAMES = {"integer": ("int", "long"), "string": ("str", "text"), "boolean": ("bool",), "number": ("float", "double"),
              "array": ("list",), "object": ("dict", "map")}


def scalar(text):
    """A YAML scalar as the drafts write them; an unclosed quote is read up to the end of the line."""
    text = text.strip()
    if text.startswith('"'):
        return json.loads(text) if len(text) > 1 and text.endswith('"') else text[1:]
    if text.startswith("'"):
        return text[1:-1].replace("''", "'") if len(text) > 1 and text.endswith("'") else text[1:]
    return re.sub(r"\s+#.*$", "", text)


def parse(front):
    """A small YAML subset: scalars, quoted and folded strings, one level of mapping or list."""
    meta, key, block = {}, None, None
    for line in front.split("\n"):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        if line[:1] in (" ", "\t") and key is not None:
            item = line.strip()
            if block == "text":
                meta[key] = (meta[key] + " " + item).strip()
            elif item.startswith("- "):
                meta[key] = (meta[key] if isinstance(meta[key], list) else []) + [scalar(item[2:])]
            else:
                name, _, value = item.partition(":")
                meta[key] = {**(meta[key] if isinstance(meta[key], dict) else {}), name.strip(): scalar(value)}
            continue
        key, _, value = line.partition(":")
        key, value = key.strip(), value.strip()
        block = "text" if value in (">", ">-", "|", "|-") else None
        if block or not value:
            meta[key] = ""
        elif value.startswith("[") and value.endswith("]"):
            meta[key] = [scalar(v) for v in value[1:-1].split(",") if v.strip()]
        else:
            meta[key] = scalar(value)
    return meta


def emit(meta):
    lines = []
    for key, value in meta.items():
        if isinstance(value, dict):
            lines += [f"{key}:"] + [f"  {k}: {json.dumps(str(v), ensure_ascii=False)}" for k, v in value.items()]
        elif isinstance(value, list):
            lines += [f"{key}:"] + [f"  - {v}" for v in value]
        else:
            lines.append(f"{key}: {json.dumps(str(value), ensure_ascii=False)}")
    return "\n".join(lines) + "\n"


def split(text):
    lines = text.lstrip("\ufeff").replace("\r\n", "\n").split("\n")
    marks = [i for i, line in enumerate(lines) if line.rstrip() == "---"]
    if marks[0] == 0:
        return lines[1:marks[1]], lines[marks[1] + 1:]
    if ":" in lines[0] and not lines[0].startswith("#"):
        return lines[:marks[0]], lines[marks[0] + 1:]
    return lines[marks[0] + 1:marks[1]], [*lines[:marks[0]], "", *lines[marks[1] + 1:]]


def distance(a, b):
    row = list(range(len(b) + 1))
    for i, x in enumerate(a, 1):
        previous, row[0] = row[0], i
        for j, y in enumerate(b, 1):
            previous, row[j] = row[j], min(row[j] + 1, row[j - 1] + 1, previous + (x != y))
    return row[-1]


def nearest(target, pool):
    if target in pool or not pool:
        return target
    base = os.path.splitext(os.path.basename(target))[0]
    same = [p for p in pool if os.path.splitext(os.path.basename(p))[0].replace("-", "_") == base.replace("-", "_")]
    return same[0] if len(same) == 1 else min(pool, key=lambda p: distance(target, p))


def fix_skill(slug):
    root = os.path.join("drafts", slug)
    with open(os.path.join(root, "SKILL.md"), encoding="utf-8") as handle:
        front, body = split(handle.read())
    meta = parse("\n".join(front))
    text = " ".join(str(meta.get("description", "")).split())
    text = re.sub(r"[<>]", "", text)
    if len(text) > RULES["description_max"]:
        text = re.split(r"(?<=\.)\s", text, maxsplit=1)[0]
    fixed = {"name": slug, "description": text}
    fixed.update({k: v for k, v in meta.items() if k in RULES["allowed_keys"] and k not in fixed})
    files = [os.path.relpath(os.path.join(d, n), root) for d, _, names in os.walk(root) for n in names]
    references = sorted(f for f in files if f.startswith("references/"))
    scripts = sorted(f for f in files if f.startswith("scripts/") and f.endswith((".py", ".sh")))
    out = []
    for line in body:
        line = LINK.sub(lambda m: m.group(1) + (m.group(2) if "://" in m.group(2) or os.path.isfile(os.path.join(root, m.group(2)))
                                                 else nearest(os.path.normpath(m.group(2)), references)) + m.group(3), line)
        out.append(SCRIPT_MENTION.sub(lambda m: nearest(m.group(0), scripts), line))
    with open(os.path.join(root, "SKILL.md"), "w", encoding="utf-8", newline="\n") as handle:
        handle.write("---\n" + emit(fixed) + "---\n" + "\n".join(out))
    for rel in scripts:
        path = os.path.join(root, rel)
        with open(path, "rb") as handle:
            shebang = handle.read(2) == b"#!"
        if shebang:
            os.chmod(path, 0o755)


def fix_property(schema):
    for name, aliases in TYPE_NAMES.items():
        if str(schema.get("type", "")).lower() in (name, *aliases):
            schema["type"] = name
    if isinstance(schema.get("items"), dict):
        fix_property(schema["items"])


def fix_tools(path):
    with open(path, encoding="utf-8") as handle:
        listed = json.load(handle)["tools"]
    unique = []
    for tool in listed:
        if tool not in unique:
            unique.append(tool)
    for tool in unique:
        schema = tool["input_schema"]
        properties = schema.get("properties", {})
        flagged = [name for name, prop in properties.items() if prop.pop("required", False) is True]
        schema["required"] = [n for n in schema.get("required", []) if n in properties] + \
            [n for n in flagged if n not in schema.get("required", [])]
        for prop in properties.values():
            fix_property(prop)
    with open(path, "w", encoding="utf-8") as handle:
        handle.write(json.dumps({"tools": unique}, indent=4) + "\n")


def fix_prompt(path):
    with open(path, encoding="utf-8") as handle:
        front, body = split(handle.read())
    meta = parse("\n".join(front))
    meta["variables"] = sorted(set(PLACEHOLDER.findall("\n".join(body))))
    with open(path, "w", encoding="utf-8") as handle:
        handle.write("---\n" + emit(meta) + "---\n" + "\n".join(body))


def pack(slug, target):
    with zipfile.ZipFile(target, "w", zipfile.ZIP_STORED) as archive:
        root = os.path.join("drafts", slug)
        for folder, _, names in sorted(os.walk(root)):
            if "__pycache__" in folder.split(os.sep):
                continue
            for name in sorted(n for n in names if n != ".DS_Store" and not n.endswith(".pyc")):
                path = os.path.join(folder, name)
                archive.write(path, slug + "/" + os.path.relpath(path, root).replace(os.sep, "/"))


skills = [d for d in sorted(os.listdir("drafts")) if os.path.isfile(os.path.join("drafts", d, "SKILL.md"))]
for slug in skills:
    fix_skill(slug)
for name in sorted(os.listdir("tools")) if os.path.isdir("tools") else []:
    fix_tools(os.path.join("tools", name))
for name in sorted(os.listdir("prompts")) if os.path.isdir("prompts") else []:
    fix_prompt(os.path.join("prompts", name))
if TASK["package"]:
    os.makedirs("dist", exist_ok=True)
    for slug in skills:
        pack(slug, os.path.join("dist", slug + RULES["archive_ext"]))
