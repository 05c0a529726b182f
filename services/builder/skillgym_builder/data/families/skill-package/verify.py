"""Verifier for skill-package: a trusted skill validator run on the fixed drafts (front matter
rules, names, description limits, allowed keys), content kept (body, links, script paths,
references, scripts and their modes), the tool manifest and prompt templates against their
fixed forms, and the archives' layout and contents. Expectations are digests recorded when the
drafts were generated; every file the agent wrote is read with a size bound."""

import hashlib
import io
import json
import os
import posixpath
import re
import stat
import struct
import sys
import zipfile
from urllib.parse import unquote

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import yaml
from checks import APP, load_expected, run

E = load_expected()
RULES = E["rules"]
MAX_TEXT = 256 * 1024
MAX_ARCHIVE = 4 * 1024 * 1024
BOM = "\ufeff"
NAME = re.compile(r"^[a-z0-9]+(?:-[a-z0-9]+)*$")
LINK_TARGET = re.compile(r"\[[^\]]*\]\(([^)\s]*)\)")
LINK = re.compile(r"\]\([^)]*\)")
SCRIPT_MENTION = re.compile(r"\bscripts?/[A-Za-z0-9_.-]+")
PLACEHOLDER = re.compile(r"\{\{\s*([A-Za-z_][A-Za-z0-9_]*)\s*\}\}")
JUNK = re.compile(r"(^|/)(\.DS_Store|__pycache__/.*|[^/]*\.pyc)$")


def digest(text):
    return hashlib.sha256(text.encode()).hexdigest()


def squash(text):
    return " ".join(text.split())


def small(value, budget=500):
    """``value`` if it is a small plain tree (YAML aliases could make it huge); raises otherwise."""
    count = [0]

    def walk(node, depth):
        count[0] += 1
        if count[0] > budget or depth > 8:
            raise ValueError("front matter value too large")
        if isinstance(node, dict):
            for key, inner in node.items():
                walk(key, depth + 1)
                walk(inner, depth + 1)
        elif isinstance(node, list):
            for inner in node:
                walk(inner, depth + 1)
        elif not isinstance(node, (str, int, float, bool, type(None))):
            raise ValueError(f"unexpected {type(node).__name__} in front matter")

    walk(value, 0)
    return value


def canon(value):
    return json.dumps(squash(value) if isinstance(value, str) else small(value), sort_keys=True)


def inside(root, rel):
    """The real path of ``rel`` below ``root``, a regular file that stays inside it; else None."""
    base = os.path.realpath(root)
    path = os.path.realpath(os.path.join(base, rel))
    if not path.startswith(base + os.sep) or not os.path.isfile(path):
        return None
    return path


def read_bytes(path, limit=MAX_TEXT):
    if os.path.islink(path) or not os.path.isfile(path):
        raise FileNotFoundError(path)
    with open(path, "rb") as handle:
        data = handle.read(limit + 1)
    if len(data) > limit:
        raise ValueError(f"{path} is too large")
    return data


def text_digest(data):
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return hashlib.sha256(data).hexdigest()
    lines = text.lstrip(BOM).replace("\r\n", "\n").replace("\r", "\n").split("\n")
    return digest("\n".join(line.rstrip() for line in lines).strip("\n"))


class StrictLoader(yaml.SafeLoader):
    """Safe loading that refuses a key given twice (strict loaders do; PyYAML keeps the last)."""

    def construct_mapping(self, node, deep=False):
        keys = [self.construct_object(key, deep=deep) for key, _ in node.value]
        if len(keys) != len(set(map(repr, keys))):
            raise ValueError("a key is repeated in the front matter")
        return super().construct_mapping(node, deep=deep)


StrictLoader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, StrictLoader.construct_mapping)


def split_front_matter(text):
    lines = text.lstrip(BOM).replace("\r\n", "\n").split("\n")
    if not lines or lines[0].rstrip() != "---":
        raise ValueError("no front matter at the top")
    for index in range(1, len(lines)):
        if lines[index].rstrip() == "---":
            data = yaml.load("\n".join(lines[1:index]), Loader=StrictLoader)
            if not isinstance(data, dict):
                raise ValueError("front matter is not a mapping")
            return small(data), "\n".join(lines[index + 1:])
    raise ValueError("front matter is not closed")


def skill_dir(slug):
    return os.path.join(APP, "drafts", slug)


def front_matter_problems(slug, want):
    raw = read_bytes(os.path.join(skill_dir(slug), "SKILL.md"))
    problems = []
    if raw.startswith(BOM.encode()) or b"\r" in raw:
        problems.append("byte-order mark or CR line endings")
    meta, _ = split_front_matter(raw.decode("utf-8"))
    name = meta.get("name")
    if name != slug or not NAME.match(slug) or len(slug) > 64:
        problems.append(f"name {name!r}")
    description = meta.get("description")
    if not isinstance(description, str) or not 0 < len(description.strip()) <= RULES["description_max"]:
        return [*problems, "description missing or of the wrong length"]
    if "<" in description or ">" in description:
        problems.append("angle brackets in the description")
    text, rule = squash(description), want["description"]
    if rule["mode"] == "exact" and digest(text) != rule["digest"]:
        problems.append("description changed")
    if rule["mode"] == "prefix" and (digest(text[: rule["length"]]) != rule["digest"]
                                     or text[rule["length"]:rule["length"] + 1] not in ("", " ")):
        problems.append("first sentence of the description not kept")
    unknown = sorted(set(meta) - set(RULES["allowed_keys"]))
    if unknown:
        problems.append(f"keys not allowed: {unknown}")
    problems += [f"key {key} lost or changed" for key, value in want["keys"].items()
                 if key not in meta or digest(canon(meta[key])) != value]
    if "compatibility" in meta and not (isinstance(meta["compatibility"], str) and len(meta["compatibility"]) <= 500):
        problems.append("compatibility is not a short string")
    extra = meta.get("metadata", {})
    if not isinstance(extra, dict) or not all(isinstance(k, str) and isinstance(v, str) for k, v in extra.items()):
        return [*problems, "metadata is not a mapping of strings"]
    problems += [f"metadata {key} lost" for key, value in want["metadata"].items()
                 if digest(canon(extra.get(key))) != value]
    for key in set(extra) - set(want["metadata"]):
        if key not in want["moved"] or digest(canon(extra[key])) != want["moved"][key]:
            problems.append(f"metadata {key} was not in the draft")
    return problems


def content_problems(slug, want):
    root = skill_dir(slug)
    text = read_bytes(os.path.join(root, "SKILL.md")).decode("utf-8")
    _, body = split_front_matter(text)
    problems = []
    if digest(squash(SCRIPT_MENTION.sub("scripts/", LINK.sub("]()", body)))) != want["body"]:
        problems.append("body text changed")
    targets = []
    for target in LINK_TARGET.findall(body):
        if re.match(r"^([a-z][a-z0-9+.-]*:|#|/)", target, re.I):
            continue
        rel = posixpath.normpath(unquote(target.split("#", 1)[0]))
        targets.append(rel)
        if inside(root, rel) is None:
            problems.append(f"link {target} is broken")
    if digest(json.dumps(sorted(targets))) != want["links"]:
        problems.append("links point at other files")
    mentions = sorted(set(SCRIPT_MENTION.findall(body)))
    if digest(json.dumps(mentions)) != want["mentions"]:
        problems.append("script paths do not name the scripts")
    for rel, value in want["files"].items():
        path = inside(root, rel)
        if path is None or text_digest(read_bytes(path)) != value:
            problems.append(f"{rel} missing or changed")
    for rel in want["executable"]:
        path = inside(root, rel)
        if path is None or not os.stat(path).st_mode & stat.S_IXUSR:
            problems.append(f"{rel} is not executable")
    return problems


def per_skill(check):
    def score():
        passed = 0
        for slug, want in sorted(E["skills"].items()):
            try:
                problems = check(slug, want)
            except Exception as exc:  # unreadable or unparseable: this skill fails
                problems = [f"{type(exc).__name__}: {exc}"]
            if problems:
                print(f"  {check.__name__} {slug}: {'; '.join(problems)[:400]}")
            passed += not problems
        return passed / len(E["skills"])

    return score


def sorted_lists(value):
    if isinstance(value, dict):
        return {k: sorted_lists(v) for k, v in value.items()}
    if isinstance(value, list):
        items = [sorted_lists(v) for v in value]
        return sorted(items, key=canon) if all(not isinstance(v, (dict, list)) for v in items) else items
    return value


def tools():
    scores = []
    for name, want in sorted(E["tools"].items()):
        data = json.loads(read_bytes(os.path.join(APP, "tools", name)))
        listed = data["tools"]
        names = [tool["name"] for tool in listed]
        if len(names) != len(set(names)) or set(names) != set(want):
            print(f"  tools {name}: tool names {sorted(names)}")
            scores.append(0.0)
            continue
        good = [tool["name"] for tool in listed
                if digest(json.dumps(sorted_lists(small(tool, 2000)), sort_keys=True)) == want[tool["name"]]]
        print(f"  tools {name}: {len(good)} of {len(want)} tools as expected")
        scores.append(len(good) / len(want))
    return sum(scores) / len(scores)


def prompts():
    passed = 0
    for name, want in sorted(E["prompts"].items()):
        meta, body = split_front_matter(read_bytes(os.path.join(APP, "prompts", name)).decode("utf-8"))
        variables = meta.get("variables")
        ok = (isinstance(variables, list) and all(isinstance(v, str) for v in variables)
              and len(variables) == len(set(variables)) and digest(json.dumps(sorted(variables))) == want["variables"])
        rest = {k: v for k, v in meta.items() if k != "variables"}
        ok = ok and digest(canon(rest)) == want["rest"] and digest(squash(body)) == want["body"]
        print(f"  prompts {name}: {'ok' if ok else 'wrong'}")
        passed += ok
    return passed / len(E["prompts"])


def headers_agree(data, infos):
    """Each local file header repeats its central directory entry (flags, method, time, CRC, sizes)."""
    for info in infos:
        offset = info.header_offset
        fields = struct.unpack("<4s5H3L2H", data[offset:offset + 30])
        if fields[0] != b"PK\x03\x04" or fields[2] != info.flag_bits or fields[3] != info.compress_type:
            return False
        when = (info.date_time[0] - 1980) << 9 | info.date_time[1] << 5 | info.date_time[2]
        clock = info.date_time[3] << 11 | info.date_time[4] << 5 | info.date_time[5] // 2
        if (fields[5], fields[4]) != (when, clock):
            return False
        if not info.flag_bits & 0x08 and fields[6:9] != (info.CRC, info.compress_size, info.file_size):
            return False
    return True


def archive_problems(slug, want):
    name = slug + RULES["archive_ext"]
    data = read_bytes(os.path.join(APP, "dist", name), MAX_ARCHIVE)
    archive = zipfile.ZipFile(io.BytesIO(data))
    infos = archive.infolist()
    files = [i for i in infos if not i.filename.endswith("/")]
    names = [i.filename for i in files]
    if sum(i.file_size for i in files) > 4 * MAX_ARCHIVE or len(names) != len(set(names)):
        return ["archive too large or with repeated entries"]
    if not all(n.startswith(slug + "/") and ".." not in n.split("/") for n in [i.filename for i in infos]):
        return ["entries outside the skill folder"]
    expected = {f"{slug}/SKILL.md", *(f"{slug}/{rel}" for rel in want["files"])}
    if set(names) != expected:
        return [f"entries differ: extra {sorted(set(names) - expected)[:3]} missing {sorted(expected - set(names))[:3]}"]
    if archive.testzip() is not None or not headers_agree(data, infos):
        return ["archive is corrupt"]
    problems = []
    for info in files:
        rel = info.filename[len(slug) + 1:]
        got = text_digest(archive.read(info))
        if rel == "SKILL.md":
            wanted = text_digest(read_bytes(os.path.join(skill_dir(slug), "SKILL.md")))
        else:
            wanted = want["files"][rel]
        if got != wanted:
            problems.append(f"{rel} differs from the fixed skill")
        if rel in want["executable"] and not (info.external_attr >> 16) & stat.S_IXUSR:
            problems.append(f"{rel} lost its executable bit")
    return problems


def archives():
    folder = os.path.join(APP, "dist")
    listed = set(os.listdir(folder)) if os.path.isdir(folder) else set()
    wanted = {slug + RULES["archive_ext"] for slug in E["skills"]}
    if listed != wanted:
        print(f"  archives: dist holds {sorted(listed)[:6]}, expected {len(wanted)} archives")
        return 0.0
    return per_skill(archive_problems)()


checks = [("front_matter", per_skill(front_matter_problems)), ("content", per_skill(content_problems))]
if E["tools"]:
    checks.append(("tools", tools))
if E["prompts"]:
    checks.append(("prompts", prompts))
if E["package"]:
    checks.append(("archives", archives))
run(checks)
