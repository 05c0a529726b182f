"""Draft agent skills with planted authoring defects for skill-package: each draft is a folder
with SKILL.md (front matter and body), references/ and scripts/; the defects are the kind a
skill loader rejects, and the expectation records what a fixed draft must still hold."""

from __future__ import annotations

import hashlib
import json
import random
import re
import textwrap
from dataclasses import dataclass, field
from typing import Any

BOM = "\ufeff"
DEFAULT_KEYS = ("name", "description", "license", "compatibility", "allowed-tools", "metadata")
SKILL_DEFECTS = ("name", "long_description", "brackets", "unknown_key", "delimiter", "link", "script_path")
LINK = re.compile(r"\]\([^)]*\)")
SCRIPT_MENTION = re.compile(r"\bscripts?/[A-Za-z0-9_.-]+")
PLAIN_UNSAFE = re.compile(r":\s|\s#|^[\s\-?:,\[\]{}#&*!|>'\"%@`]|\s$")
SPECIAL_SCALAR = re.compile(r"[-+]?[\d._:-]+|true|false|yes|no|on|off|null|~", re.I)


@dataclass(frozen=True)
class Rules:
    description_max: int = 1024
    allowed_keys: tuple[str, ...] = DEFAULT_KEYS
    archive_ext: str = ".zip"


def digest(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def squash(text: str) -> str:
    return " ".join(text.split())


def canon(value: Any) -> str:
    return json.dumps(squash(value) if isinstance(value, str) else value, sort_keys=True)


def file_digest(data: bytes) -> str:
    """Content digest insensitive to a BOM, line endings and trailing blanks (the verifier's rule)."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return hashlib.sha256(data).hexdigest()
    lines = text.lstrip(BOM).replace("\r\n", "\n").replace("\r", "\n").split("\n")
    return digest("\n".join(line.rstrip() for line in lines).strip("\n"))


def body_digest(body: str) -> str:
    """The body with link targets and script paths blanked (the places fixes may touch)."""
    return digest(squash(SCRIPT_MENTION.sub("scripts/", LINK.sub("]()", body.lstrip(BOM)))))


def scalar(value: str, style: str) -> str:
    """``value`` written as a YAML scalar in ``style``; plain falls back to quotes where unsafe."""
    if style == "folded":
        return ">-\n" + "\n".join("  " + line for line in textwrap.wrap(value, 64))
    if style == "single":
        return "'" + value.replace("'", "''") + "'"
    if style == "plain" and not PLAIN_UNSAFE.search(value) and not SPECIAL_SCALAR.fullmatch(value):
        return value
    return json.dumps(value, ensure_ascii=False)


@dataclass
class Draft:
    slug: str
    topic: dict[str, Any]
    defects: list[str]
    description: str = ""
    name: str = ""
    fields: list[tuple[str, Any]] = field(default_factory=list)
    expectation: dict[str, Any] = field(default_factory=dict)


def _sentences(text: str, topic: dict[str, Any], filler: list[str], rng: random.Random, above: int) -> str:
    words = dict(zip(("k0", "k1", "k2"), topic["keywords"], strict=True))
    extra = [s.format(**words) for s in rng.sample(filler, len(filler))]
    index = 0
    while len(text) <= above:
        text, index = f"{text} {extra[index % len(extra)]}", index + 1
    return text


def body(topic: dict[str, Any], overview: str, defects: list[str], rng: random.Random) -> tuple[str, str]:
    """(the body as written in the draft, the body as intended), both starting with the title."""
    refs, scripts = topic["refs"], topic["scripts"]
    steps = [f"Read [{refs[0][1]}](references/{refs[0][0]}) to {refs[0][2]}."]
    runner = "python3 " if scripts[0][0].endswith(".py") else "bash "
    steps.append(f"Run `{runner}scripts/{scripts[0][0]} INPUT` to {scripts[0][1]}.")
    steps.append(topic["check"])
    if len(refs) > 1:
        steps.append(f"When a case is unclear, consult [{refs[1][1]}](references/{refs[1][0]}) to {refs[1][2]}.")
    if len(scripts) > 1:
        steps.append(f"Run `scripts/{scripts[1][0]}` to {scripts[1][1]}.")
    keywords = topic["keywords"]
    intended = "\n".join([
        f"# {topic['title']}", "", f"{topic['purpose']} {overview}", "", "## When to use", "",
        f"- {topic['trigger']}", f"- The request mentions {keywords[0]}, {keywords[1]} or {keywords[2]}.", "",
        "## Workflow", "", *(f"{i}. {step}" for i, step in enumerate(steps, 1)), "", "## Output", "",
        topic["output"], "",
    ])
    written = intended
    if "link" in defects:
        ref = rng.choice(refs)[0]
        stem = ref[:-3]
        cut = rng.randrange(1, len(stem) - 1)
        wrong = rng.choice([f"reference/{ref}", f"references/{stem}.txt",
                            f"references/{stem[:cut]}{stem[cut + 1]}{stem[cut]}{stem[cut + 2:]}.md", f"docs/{ref}"])
        written = written.replace(f"(references/{ref})", f"({wrong})", 1)
    if "script_path" in defects:
        script = rng.choice(scripts)[0]
        stem, ext = script.rsplit(".", 1)
        wrong = rng.choice([f"script/{script}", f"scripts/{stem.replace('_', '-')}.{ext}", f"scripts/{stem}.{'sh' if ext == 'py' else 'py'}"])
        written = written.replace(f"scripts/{script}", wrong, 1)
    return written, intended


def script_source(name: str, purpose: str, title: str) -> str:
    if name.endswith(".sh"):
        return (f"#!/usr/bin/env bash\n# {title}: {purpose}.\nset -euo pipefail\n"
                'input="${1:?usage: ' + name + ' INPUT}"\necho "processing $input"\n')
    return (f'#!/usr/bin/env python3\n"""{title}: {purpose}."""\n\nimport sys\n\n\ndef main(argv):\n'
            f'    if len(argv) < 2:\n        print("usage: {name} INPUT", file=sys.stderr)\n        return 2\n'
            '    print(f"processing {argv[1]}")\n    return 0\n\n\nif __name__ == "__main__":\n'
            "    sys.exit(main(sys.argv))\n")


def reference_source(ref: list[str], topic: dict[str, Any]) -> str:
    k = topic["keywords"]
    return (f"# {ref[1][0].upper()}{ref[1][1:]}\n\nNotes for the {topic['title'].lower()} skill, kept out of SKILL.md "
            f"to save context.\n\n- Look at {k[0]} first; they decide most cases.\n- {k[1].capitalize()} come next.\n"
            f"- Record {k[2]} exactly as written in the source.\n")


def describe(draft: Draft, rules: Rules, filler: list[str], rng: random.Random) -> None:
    """The draft's description as planted and how a fixed one is judged."""
    topic, defects = draft.topic, draft.defects
    full = f"{topic['purpose']} {topic['trigger']}"
    text = full if len(full) <= rules.description_max else topic["purpose"]
    if "yaml" in defects:
        k = topic["keywords"]
        text = f"{topic['purpose']} Covers: {k[0]}, {k[1]} and {k[2]}."
    if "long_description" in defects:
        text = _sentences(text, topic, filler, rng, rules.description_max)
    if "brackets" in defects:
        text = f"{text} Pass it a <{topic['keywords'][0].replace(' ', '-')}-file> path."
    draft.description = text
    if {"long_description", "brackets"} & set(defects):
        first = squash(topic["purpose"])
        draft.expectation["description"] = {"mode": "prefix", "length": len(first), "digest": digest(first)}
    else:
        draft.expectation["description"] = {"mode": "exact", "digest": digest(squash(text))}


def misnamed(slug: str, rng: random.Random) -> str:
    return rng.choice([slug.replace("-", "_"), "-".join(p.capitalize() for p in slug.split("-")), f"{slug}-v2",
                       slug.replace("-", " ")])


def fields(draft: Draft, rules: Rules, catalog: dict[str, Any], rng: random.Random, claim_key: str | None) -> None:
    """Front matter entries in order, and which of them a fix must keep or may move."""
    allowed = set(rules.allowed_keys)
    entries: list[tuple[str, Any]] = [("name", misnamed(draft.slug, rng) if "name" in draft.defects else draft.slug),
                                      ("description", draft.description)]
    for key, values in catalog["optional_keys"].items():
        if key in allowed and rng.random() < 0.35:
            entries.append((key, rng.choice(values)))
    unknown = [k for k in catalog["unknown_keys"] if k not in allowed]
    if "unknown_key" in draft.defects and unknown:
        key = rng.choice(unknown)
        entries.append((key, catalog["unknown_keys"][key]))
    if claim_key:
        value = catalog["optional_keys"].get(claim_key, catalog["unknown_keys"].get(claim_key, ["kept"]))
        entries.append((claim_key, value[0] if isinstance(value, list) else value))
    if "metadata" in allowed and rng.random() < 0.4:
        entries.append(("metadata", {"owner": rng.choice(["docs-team", "platform", "data-eng"]), "reviewed": "2024-11-02"}))
    draft.fields = entries
    draft.expectation["keys"] = {k: digest(canon(v)) for k, v in entries
                                 if k in allowed and k not in ("name", "description", "metadata")}
    draft.expectation["metadata"] = {k: digest(canon(v)) for key, meta in entries if key == "metadata"
                                     for k, v in meta.items()}
    draft.expectation["moved"] = {k: digest(canon(v)) for k, v in entries if k not in allowed}


def front_matter(draft: Draft, rng: random.Random, noisy: bool) -> list[str]:
    styles = ["plain", "double", "single", "folded"] if noisy else ["plain"]
    lines = []
    for key, value in draft.fields:
        if isinstance(value, dict):
            lines += [f"{key}:", *(f"  {k}: {scalar(v, 'double')}" for k, v in value.items())]
        elif key == "description" and "yaml" in draft.defects:
            lines.append(f"{key}: {value}" if rng.random() < 0.5 else f'{key}: "{value}')
        else:
            lines.append(f"{key}: {scalar(value, rng.choice(styles) if key == 'description' else 'plain')}")
        if noisy and key == "name" and rng.random() < 0.5:
            lines.append("# draft: reviewed by the docs team")
    return lines


def skill_md(draft: Draft, written_body: str, rng: random.Random, noisy: bool) -> bytes:
    head = front_matter(draft, rng, noisy)
    if "delimiter" in draft.defects:
        if rng.random() < 0.5:
            text = "\n".join([*head, "---", "", written_body])
        else:
            title, rest = written_body.split("\n", 1)
            text = "\n".join([title, "---", *head, "---", rest])
    else:
        text = "\n".join(["---", *head, "---", "", written_body])
    if noisy and rng.random() < 0.5:
        text = text.replace("\n", "\r\n")
    if noisy and rng.random() < 0.5:
        text = BOM + text
    return text.encode()


def skill_files(draft: Draft, catalog: dict[str, Any], rng: random.Random, noisy: bool) -> dict[str, bytes]:
    """The draft's files, relative to its folder, with its expectations recorded."""
    topic = draft.topic
    written, intended = body(topic, rng.choice(catalog["overview"]), draft.defects, rng)
    files = {"SKILL.md": skill_md(draft, written, rng, noisy)}
    for ref in topic["refs"]:
        files[f"references/{ref[0]}"] = reference_source(ref, topic).encode()
    for script in topic["scripts"]:
        files[f"scripts/{script[0]}"] = script_source(script[0], script[1], topic["title"]).encode()
    if rng.random() < 0.5:
        files["scripts/common.py"] = f'"""Helpers shared by the {topic["title"].lower()} scripts."""\n\nENCODING = "utf-8"\n'.encode()
    targets = sorted(m[2:-1] for m in LINK.findall(intended))
    draft.expectation.update(
        body=body_digest(intended), links=digest(json.dumps(targets)),
        mentions=digest(json.dumps(sorted(set(SCRIPT_MENTION.findall(intended))))),
        files={rel: file_digest(data) for rel, data in files.items() if rel != "SKILL.md"},
        executable={rel: True for rel, data in files.items() if rel.startswith("scripts/") and data.startswith(b"#!")},
    )
    return files
