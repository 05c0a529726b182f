# --- fixing the draft skills with PyYAML, then packaging them ---
import difflib
import glob
import json
import os
import posixpath
import re
import shutil
import subprocess
import sys
import tempfile
import zipfile

import yaml
from skill_rules import rules

TASK = json.loads(sys.argv[1])
RULES = rules(TASK)
LINK = re.compile(r"(\[[^\]]*\]\()([^)\s]*)(\))")
SCRIPT_MENTION = re.compile(r"\bscripts?/[A-Za-z0-9_.-]+")
PLACEHOLDER = re.compile(r"\{\{\s*([A-Za-z_][A-Za-z0-9_]*)\s*\}\}")
ALIASES = {"int": "integer", "long": "integer", "str": "string", "text": "string", "bool": "boolean",
           "float": "number", "double": "number", "list": "array", "dict": "object", "map": "object"}


def read_text(path):
    with open(path, encoding="utf-8-sig") as handle:
        return handle.read().replace("\r\n", "\n")


def split(text):
    """(front matter, body) wherever the draft put its front matter."""
    lines = text.split("\n")
    marks = [i for i, line in enumerate(lines) if line.strip() == "---"]
    if len(marks) >= 2 and marks[0] == 0:
        return "\n".join(lines[1:marks[1]]), "\n".join(lines[marks[1] + 1:])
    if marks and re.match(r"^[A-Za-z][\w-]*\s*:", lines[0]):  # the opening line is missing
        return "\n".join(lines[:marks[0]]), "\n".join(lines[marks[0] + 1:])
    if len(marks) >= 2:  # the block sits below the title
        return "\n".join(lines[marks[0] + 1:marks[1]]), "\n".join([*lines[:marks[0]], "", *lines[marks[1] + 1:]])
    raise SystemExit("no front matter found")


def repaired(front):
    """Top-level values that do not parse on their own, re-quoted."""
    out = []
    for line in front.split("\n"):
        found = re.match(r"^([A-Za-z][\w-]*):\s+(.+)$", line)
        if found:
            try:
                yaml.safe_load(line)
            except yaml.YAMLError:
                value = found.group(2).strip()
                value = value[1:] if value[:1] in "\"'" and value[-1:] != value[:1] else value
                line = f"{found.group(1)}: {json.dumps(value)}"
        out.append(line)
    return "\n".join(out)


def load(front, where):
    try:
        data = yaml.safe_load(front)
    except yaml.YAMLError as exc:
        print(f"{where}: front matter does not parse ({str(exc).splitlines()[0]}); repairing")
        data = yaml.safe_load(repaired(front))
    return data if isinstance(data, dict) else {}


def shorten(text, limit):
    sentences = re.split(r"(?<=[.!?])\s+", text)
    kept = sentences[0]
    for sentence in sentences[1:]:
        if len(kept) + 1 + len(sentence) > limit:
            break
        kept += " " + sentence
    return kept


def fixed_meta(meta, slug):
    description = " ".join(str(meta.get("description", "")).split()).replace("<", "").replace(">", "")
    if len(description) > RULES["description_max"]:
        description = shorten(description, RULES["description_max"])
    out = {"name": slug, "description": description}
    moved = {}
    for key, value in meta.items():
        if key in ("name", "description"):
            continue
        if key in RULES["allowed_keys"]:
            out[key] = value
        else:
            moved[key] = str(value)
    if moved and "metadata" in RULES["allowed_keys"]:
        out["metadata"] = {**(out.get("metadata") or {}), **moved}
    return out


def closest(target, pool):
    if target in pool:
        return target
    match = difflib.get_close_matches(target, pool, n=1, cutoff=0.4)
    return match[0] if match else target


def fix_body(body, root):
    files = sorted(os.path.relpath(os.path.join(d, n), root) for d, _, names in os.walk(root) for n in names)
    references = [f for f in files if f.startswith("references/")] or files
    scripts = [f for f in files if f.startswith("scripts/") and "__pycache__" not in f]

    def link(found):
        target = found.group(2)
        if re.match(r"^([a-z][a-z0-9+.-]*:|#|/)", target) or os.path.isfile(os.path.join(root, target)):
            return found.group(0)
        return found.group(1) + closest(posixpath.normpath(target), references) + found.group(3)

    body = LINK.sub(link, body)
    return SCRIPT_MENTION.sub(lambda m: closest(m.group(0), scripts), body)


def dump(meta):
    return yaml.safe_dump(meta, sort_keys=False, allow_unicode=True, width=100000, default_flow_style=False)


def fix_skill(slug):
    root = os.path.join("drafts", slug)
    front, body = split(read_text(os.path.join(root, "SKILL.md")))
    meta = fixed_meta(load(front, slug), slug)
    body = fix_body(body, root)
    with open(os.path.join(root, "SKILL.md"), "w", encoding="utf-8", newline="\n") as handle:
        handle.write("---\n" + dump(meta) + "---\n" + (body if body.startswith("\n") else "\n" + body))
    for path in glob.glob(os.path.join(root, "scripts", "*")):
        if os.path.isfile(path):
            with open(path, "rb") as handle:
                shebang = handle.read(2) == b"#!"
            if shebang:
                os.chmod(path, os.stat(path).st_mode | 0o111)


def fix_schema(schema):
    if isinstance(schema.get("type"), str):
        kind = schema["type"].lower()
        schema["type"] = ALIASES.get(kind, kind)
    properties = schema.get("properties")
    if isinstance(properties, dict):
        required = [name for name in schema.get("required", []) if name in properties]
        for name, inner in properties.items():
            if inner.pop("required", None) is True and name not in required:
                required.append(name)
            fix_schema(inner)
        schema["required"] = required
    if isinstance(schema.get("items"), dict):
        fix_schema(schema["items"])


def fix_tools(path):
    with open(path, encoding="utf-8") as handle:
        data = json.load(handle)
    seen, tools = set(), []
    for tool in data["tools"]:
        key = json.dumps(tool, sort_keys=True)
        if key not in seen:
            seen.add(key)
            fix_schema(tool["input_schema"])
            tools.append(tool)
    data["tools"] = tools
    with open(path, "w", encoding="utf-8") as handle:
        json.dump(data, handle, indent=2)
        handle.write("\n")


def fix_prompt(path):
    front, body = split(read_text(path))
    meta = load(front, path)
    meta["variables"] = list(dict.fromkeys(PLACEHOLDER.findall(body)))
    with open(path, "w", encoding="utf-8") as handle:
        handle.write("---\n" + dump(meta) + "---\n" + body)


def pack_with_skill(slug, target):
    """The installed skill's own packager, when it ships one and its archive has the right layout."""
    packagers = sorted(glob.glob("/skills/*/scripts/package_skill.py"))
    if not packagers:
        return False
    root = os.path.dirname(os.path.dirname(packagers[0]))
    out = tempfile.mkdtemp()
    done = subprocess.run([sys.executable, "-m", "scripts.package_skill", os.path.abspath(f"drafts/{slug}"), out],
                          cwd=root, capture_output=True, text=True, timeout=120)
    made = os.listdir(out)
    if done.returncode != 0 or len(made) != 1:
        print(f"the skill's packager did not package {slug}: {done.stdout[-300:]} {done.stderr[-300:]}")
        return False
    with zipfile.ZipFile(os.path.join(out, made[0])) as archive:
        names = archive.namelist()
    if not names or not all(n.startswith(slug + "/") and "__pycache__" not in n for n in names):
        return False
    shutil.move(os.path.join(out, made[0]), target)
    print(f"packaged {slug} with the skill's own packager")
    return True


def pack(slug, target):
    with zipfile.ZipFile(target, "w", zipfile.ZIP_DEFLATED) as archive:
        for folder, dirs, names in os.walk(os.path.join("drafts", slug)):
            dirs[:] = sorted(d for d in dirs if d != "__pycache__")
            for name in sorted(names):
                if name != ".DS_Store" and not name.endswith(".pyc"):
                    path = os.path.join(folder, name)
                    archive.write(path, os.path.relpath(path, "drafts"))


skills = sorted(d for d in os.listdir("drafts") if os.path.isfile(os.path.join("drafts", d, "SKILL.md")))
for slug in skills:
    fix_skill(slug)
for path in sorted(glob.glob("tools/*.json")):
    fix_tools(path)
for path in sorted(glob.glob("prompts/*.md")):
    fix_prompt(path)
if TASK["package"]:
    os.makedirs("dist", exist_ok=True)
    for slug in skills:
        target = os.path.join("dist", slug + RULES["archive_ext"])
        if not pack_with_skill(slug, target):
            pack(slug, target)
print(f"fixed {len(skills)} skills")
