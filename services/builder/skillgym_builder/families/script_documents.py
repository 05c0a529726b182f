"""Document inputs for a skill's own script (Markdown, plain text, logs, a project directory),
generated per instance with the structure such tools look at (headings, lists, links, tables and
code; levels and latencies; modules, functions and TODOs) in varying amounts, so two instances
give different results."""

from __future__ import annotations

import datetime as dt
import json
import random
import re
import struct
import zlib
from collections.abc import Sequence
from pathlib import PurePosixPath

from skillgym_builder.families import script_data

TOPICS = ["billing", "onboarding", "search", "exports", "alerts", "caching", "payments", "reports", "sync", "audit"]
VERBS = ["configure", "deploy", "review", "migrate", "measure", "document", "validate", "retire", "profile", "rotate"]
NOUNS = ["the cache layer", "the nightly export", "the billing job", "the audit trail", "the search index",
         "the retry policy", "the staging cluster", "the API gateway", "the schema registry", "the alert rules"]
LEVELS = ["INFO", "INFO", "INFO", "DEBUG", "WARN", "ERROR"]
COMPONENTS = ["api", "worker", "scheduler", "db", "auth", "cache"]
_FENCE = re.compile(r"^```([A-Za-z0-9_+-]*)[^\n]*\n(.*?)^```", re.M | re.S)
PATHS = ["/v1/items", "/v1/orders", "/v1/users", "/health", "/v1/search", "/v1/export"]


def sentence(rng: random.Random) -> str:
    return f"{rng.choice(VERBS).capitalize()} {rng.choice(NOUNS)} before the {rng.choice(TOPICS)} release."


def fenced_blocks(markdown_text: str) -> list[tuple[str, str]]:
    """(language, body) of the fenced code blocks a skill's own text shows."""
    return [(m.group(1), m.group(2).strip("\n")) for m in _FENCE.finditer(markdown_text) if m.group(2).strip()][:40]


def markdown(rng: random.Random, size: int, noise: float, snippets: Sequence[tuple[str, str]] = ()) -> str:
    """A Markdown document: a title, sections and subsections, paragraphs, bullet, numbered and task
    lists, inline and reference links, a table, fenced code (some of it the skill's own examples, so
    what its tool looks for is there); with ``noise``, a heading-like line inside a code fence and a
    link with parentheses in its target, which naive readers get wrong."""
    topics = rng.sample(TOPICS, k=min(len(TOPICS), 3 + size // 80))
    lines = [f"# {rng.choice(TOPICS).capitalize()} runbook", "", sentence(rng), ""]
    for index, topic in enumerate(topics):
        lines += [f"## {topic.capitalize()}", ""]
        for _ in range(rng.randint(1, 3)):
            lines.append(" ".join(sentence(rng) for _ in range(rng.randint(1, 4))))
            lines.append("")
        shape = rng.randrange(5)
        if shape == 0:
            lines += [f"- {sentence(rng)}" for _ in range(rng.randint(2, 5))]
        elif shape == 1:
            lines += [f"{n}. {sentence(rng)}" for n in range(1, rng.randint(3, 6))]
        elif shape == 2:
            lines += [f"- [{'x' if rng.random() < 0.5 else ' '}] {sentence(rng)}" for _ in range(rng.randint(2, 5))]
        elif shape == 3:
            lines += ["| step | owner | minutes |", "| --- | --- | ---: |"]
            lines += [f"| {rng.choice(VERBS)} | {rng.choice(COMPONENTS)} | {rng.randint(5, 90)} |" for _ in range(rng.randint(2, 5))]
        else:
            lines += [f"See [{topic} notes](docs/{topic}.md) and the [dashboard](https://example.org/{topic}/{index})."]
        lines.append("")
        if rng.random() < 0.5:
            lines += [f"### {rng.choice(VERBS).capitalize()} {topic}", "", sentence(rng), ""]
        if rng.random() < 0.4:
            lines += ["```bash", f"make {topic} ENV=staging", "```", ""]
        if snippets and rng.random() < 0.6:
            language, body = rng.choice(snippets)
            lines += [f"```{language}", body, "```", ""]
        if noise and rng.random() < noise * 3:
            lines += ["```text", f"# not a heading: {topic}", "```", "",
                      f"Read [the {topic} spec](https://example.org/wiki/{topic.capitalize()}_(draft)) first.", ""]
        if rng.random() < 0.3:
            lines += [f"TODO: {sentence(rng)}", ""]
    return "\n".join(lines)


def text(rng: random.Random, size: int, noise: float) -> str:
    """Plain prose in paragraphs; with ``noise``, hard-wrapped lines and doubled blank lines."""
    paragraphs = []
    for _ in range(3 + size // 60):
        words = " ".join(sentence(rng) for _ in range(rng.randint(2, 6)))
        if noise and rng.random() < noise * 3:
            cut = words.split(" ")
            words = "\n".join(" ".join(cut[i:i + 9]) for i in range(0, len(cut), 9)) + "\n"
        paragraphs.append(words)
    return "\n\n".join(paragraphs) + "\n"


def log(rng: random.Random, size: int, noise: float) -> str:
    """Service log lines (ISO time, level, component, message with status and latency); with
    ``noise``, multi-line stack traces after some errors."""
    moment = dt.datetime(2026, 3, 1, 8, 0, 0) + dt.timedelta(minutes=rng.randint(0, 5000))
    lines = []
    for _ in range(max(10, size)):
        moment += dt.timedelta(seconds=rng.randint(1, 90))
        level, component = rng.choice(LEVELS), rng.choice(COMPONENTS)
        status = 200 if level in ("INFO", "DEBUG") else rng.choice([404, 429, 500, 502, 503])
        lines.append(f"{moment.isoformat()}Z {level} [{component}] {rng.choice(['GET', 'POST'])} {rng.choice(PATHS)} "
                     f"status={status} latency_ms={rng.randint(3, 2400)}")
        if level == "ERROR" and noise and rng.random() < noise * 3:
            lines += ["Traceback (most recent call last):", f'  File "{component}/handler.py", line {rng.randint(10, 300)}, in handle',
                      f"{rng.choice(['TimeoutError', 'KeyError', 'ValueError'])}: {rng.choice(NOUNS)}"]
    return "\n".join(lines) + "\n"


def _module(rng: random.Random, name: str, noise: float) -> str:
    imports = rng.sample(["os", "json", "re", "logging", "pathlib", "datetime", "typing", "collections"], k=rng.randint(1, 4))
    lines = [f'"""{sentence(rng)}"""', "", *(f"import {m}" for m in sorted(imports)), ""]
    for index in range(rng.randint(1, 5)):
        fn = f"{rng.choice(VERBS)}_{rng.choice(TOPICS)}_{index}"
        args = ", ".join(rng.sample(["path", "limit", "items", "config", "retries"], k=rng.randint(0, 3)))
        lines += ["", f"def {fn}({args}):"]
        if rng.random() < 0.7:
            lines.append(f'    """{sentence(rng)}"""')
        for step in range(rng.randint(1, 2 + int(noise * 20))):
            if rng.random() < 0.3:
                lines += [f"    if {step} > 1:", f"        return {step}"]
            else:
                lines.append(f"    value_{step} = {rng.randint(1, 99)}")
        if rng.random() < 0.3:
            lines.append(f"    # TODO: {sentence(rng).lower()}")
        lines.append("    return None")
    if rng.random() < 0.5:
        lines += ["", "", f"class {name.capitalize()}Service:", f'    """{sentence(rng)}"""', "",
                  "    def run(self):", "        return True"]
    return "\n".join(lines) + "\n"


def page(rng: random.Random, noise: float, exemplars: Sequence[str] = ()) -> str:
    """One HTML page: one of the skill's own pages (a template it ships) varied, else a page on a
    drawn topic: title, description, headings, paragraphs, images with and without alt text, links."""
    if exemplars:
        return varied_page(rng, rng.choice(list(exemplars)))
    return _html(rng, rng.choice(TOPICS), noise)


_BLOCK = re.compile(r"<(section|article|li|tr)\b[^>]*>.*?</\1>", re.S)
_TEXT = re.compile(r"<(h[1-6]|p|li|td|figcaption)(\b[^>]*)>([^<]{3,})</\1>")


def varied_page(rng: random.Random, exemplar: str) -> str:
    """The skill's own page with its content varied: of its repeated blocks (slides, cards, list
    items, table rows) one is dropped and another repeated, and headings and paragraphs reworded."""
    blocks = list(_BLOCK.finditer(exemplar))
    text = exemplar
    if len(blocks) >= 2:
        dropped, repeated = rng.sample(range(len(blocks)), k=2)
        pieces, last = [], 0
        for index, block in enumerate(blocks):
            pieces.append(text[last:block.start()])
            if index == repeated:
                pieces.append(block.group(0) + "\n" + block.group(0))
            elif index != dropped:
                pieces.append(block.group(0))
            last = block.end()
        text = "".join(pieces) + text[last:]

    def reword(match: re.Match[str]) -> str:
        if rng.random() < 0.5:
            return match.group(0)
        words = sentence(rng).rstrip(".")
        return f"<{match.group(1)}{match.group(2)}>{words if match.group(1).startswith('h') else words + '.'}</{match.group(1)}>"

    return _TEXT.sub(reword, text)


def _html(rng: random.Random, topic: str, noise: float) -> str:
    title = f"{topic.capitalize()} | {rng.choice(NOUNS)}"
    head = [f"<title>{title}</title>"] + ([f'<meta name="description" content="{sentence(rng)}">'] if rng.random() < 0.6 else [])
    body = [f"<h1>{topic.capitalize()}</h1>"]
    for _ in range(rng.randint(1, 4)):
        body += [f"<h2>{rng.choice(VERBS).capitalize()} {rng.choice(TOPICS)}</h2>", f"<p>{sentence(rng)} {sentence(rng)}</p>"]
        if rng.random() < 0.5:
            alt = f' alt="{rng.choice(NOUNS)}"' if rng.random() < 0.5 else ""
            body.append(f'<img src="img/{rng.choice(TOPICS)}.png"{alt}>')
        if rng.random() < 0.5:
            body.append(f'<a href="{rng.choice(["/", "https://example.org/"])}{rng.choice(TOPICS)}.html">{rng.choice(VERBS)}</a>')
    if noise and rng.random() < noise * 3:
        body.append("<!-- <h1>draft heading</h1> -->")
    return "<!DOCTYPE html>\n<html>\n<head>\n" + "\n".join(head) + "\n</head>\n<body>\n" + "\n".join(body) + "\n</body>\n</html>\n"


def _script(rng: random.Random, topic: str) -> str:
    lines = [f"import {{ {rng.choice(TOPICS)} }} from './{rng.choice(TOPICS)}';", ""]
    for index in range(rng.randint(1, 4)):
        lines += [f"export function {rng.choice(VERBS)}{topic.capitalize()}{index}(input) {{",
                  f"  // {'TODO: ' if rng.random() < 0.3 else ''}{sentence(rng).lower()}",
                  f"  return input * {rng.randint(2, 9)};", "}", ""]
    return "\n".join(lines)


def _component(rng: random.Random, topic: str) -> str:
    """A React component as projects write them: elements with and without test ids, literal
    text beside translated text, handlers and props."""
    name = f"{topic.capitalize()}{rng.choice(['Panel', 'Form', 'List', 'Card'])}"
    lines = ["import React from 'react';", "import { useTranslations } from 'next-intl';", "",
             f"export default function {name}({{ items, onSave }}) {{", f"  const t = useTranslations('{topic}');",
             "  return (", f"    <section className=\"{topic}\">"]
    for index in range(rng.randint(2, 6)):
        element = rng.choice(["button", "input", "a", "h2", "p", "form"])
        test_id = f' data-cy="{topic}-{element}-{index}"' if rng.random() < 0.5 else ""
        handler = " onClick={onSave}" if element == "button" else ""
        label = f"{{t('{VERBS[index % len(VERBS)]}')}}" if rng.random() < 0.5 else sentence(rng).rstrip(".")
        lines.append(f"      <{element}{test_id}{handler}>{label}</{element}>" if element != "input"
                     else f"      <input{test_id} placeholder=\"{rng.choice(TOPICS)}\" />")
    lines += ["    </section>", "  );", "}", ""]
    return "\n".join(lines)


def _package_json(rng: random.Random, name: str) -> str:
    def versions(k: int) -> dict[str, str]:
        names = rng.sample(["express", "lodash", "react", "axios", "chalk", "zod", "vite", "jest", "eslint", "dayjs"], k=k)
        return {n: f"^{rng.randint(0, 18)}.{rng.randint(0, 20)}.{rng.randint(0, 9)}" for n in sorted(names)}
    document = {"name": name, "version": f"{rng.randint(0, 3)}.{rng.randint(0, 9)}.0", "dependencies": versions(rng.randint(2, 5)),
                "devDependencies": versions(rng.randint(1, 3)), "scripts": {"test": "jest", "build": "vite build"}}
    return json.dumps(document, indent=2) + "\n"


def _named(rng: random.Random, name: str, package: str, keys: dict[str, str]) -> str:
    if name == "package.json":
        return _package_json(rng, package)
    if name == "SKILL.md":
        return f"---\nname: {package}\ndescription: {sentence(rng)}\n---\n\n" + markdown(rng, 80, 0.0)
    suffix = PurePosixPath(name).suffix
    if keys and suffix in (".json", ".yaml", ".yml"):
        return _settings(rng, keys, suffix == ".json")
    return _by_suffix(rng, suffix, PurePosixPath(name).stem)


def _settings(rng: random.Random, keys: dict[str, str], as_json: bool) -> str:
    """A settings file carrying the keys the script reads off it, each with a value of its shape."""
    document: dict[str, object] = {}
    for key, shape in keys.items():
        if shape == "mapping":
            document[key] = {topic: rng.randint(1, 99) for topic in rng.sample(TOPICS, k=2)}
        elif shape == "list":
            document[key] = rng.sample(TOPICS, k=rng.randint(1, 3))
        else:
            document[key] = script_data.scalar(key, shape, rng)
    if as_json:
        return json.dumps(document, indent=2) + "\n"
    return "".join(f"{key}: {json.dumps(value)}\n" for key, value in document.items())


def _by_suffix(rng: random.Random, suffix: str, topic: str) -> str:
    if suffix in (".html", ".htm"):
        return _html(rng, topic, 0.0)
    if suffix in (".jsx", ".tsx"):
        return _component(rng, topic)
    if suffix in (".js", ".ts", ".mjs"):
        return _script(rng, topic)
    if suffix == ".md":
        return markdown(rng, 60, 0.0)
    if suffix == ".json":
        return json.dumps({"name": topic, "enabled": rng.random() < 0.5, "limit": rng.randint(1, 99)}, indent=2) + "\n"
    if suffix in (".yaml", ".yml"):
        return f"name: {topic}\nenabled: {str(rng.random() < 0.5).lower()}\nlimit: {rng.randint(1, 99)}\n"
    if suffix == ".css":
        return "".join(f".{t} {{ margin: {rng.randint(0, 24)}px; }}\n" for t in rng.sample(TOPICS, k=3))
    if suffix == ".py":
        return _module(rng, topic, 0.0)
    return text(rng, 40, 0.0)


def tree(rng: random.Random, size: int, noise: float, wanted: tuple[str, ...] = (),
         keys: dict[str, str] | None = None) -> dict[str, str]:
    """A small project: a README, a package of Python modules, tests and a requirements file, plus
    files of the kinds the skill's tool mentions (``.html`` pages, ``package.json``, ``SKILL.md``);
    a settings file it names carries the ``keys`` it reads off a loaded document."""
    package = rng.choice(["ledger", "courier", "harbor", "atlas", "orbit"])
    files = {"README.md": markdown(rng, min(size, 120), 0.0),
             "requirements.txt": "\n".join(sorted(rng.sample(["requests>=2", "pyyaml", "click", "rich", "pydantic>=2"], k=3))) + "\n",
             f"src/{package}/__init__.py": f'"""{package} package."""\n'}
    topics = rng.sample(TOPICS, k=min(len(TOPICS), 2 + size // 100))
    for topic in topics:
        files[f"src/{package}/{topic}.py"] = _module(rng, topic, noise)
        if rng.random() < 0.6:
            files[f"tests/test_{topic}.py"] = f"from {package} import {topic}\n\n\ndef test_{topic}():\n    assert {topic}\n"
    for mention in wanted:
        if mention.startswith("."):
            folder = {".html": "site", ".htm": "site", ".md": "docs", ".css": "site/css"}.get(mention, "src")
            for topic in rng.sample(TOPICS, k=rng.randint(2, 2 + len(topics))):
                files[f"{folder}/{topic}{mention}"] = _by_suffix(rng, mention, topic)
        else:
            files[mention] = _named(rng, mention, package, keys or {})
    return files


IMAGE_SIZES = ((1200, 1200), (1024, 1024), (512, 512), (1600, 900), (800, 600), (640, 640), (1200, 628))


def image(rng: random.Random) -> bytes:
    """A PNG drawn for one input: a size from those image checks expect and miss (square icons,
    banners), RGB or RGBA with a transparent margin, a background and a few blocks of colour."""
    width, height = rng.choice(IMAGE_SIZES)
    alpha = rng.random() < 0.5
    background = tuple(rng.randrange(256) for _ in range(3))
    blocks = [(rng.randrange(width), rng.randrange(height), rng.randrange(20, width // 2), rng.randrange(20, height // 2),
               tuple(rng.randrange(256) for _ in range(3))) for _ in range(rng.randint(1, 4))]
    margin = rng.choice((0, 0, width // 20)) if alpha else 0
    size = 4 if alpha else 3

    def pixel(colour: tuple[int, ...], opaque: bool = True) -> bytes:
        return bytes(colour) + (bytes([255 if opaque else 0]) if alpha else b"")

    clear = pixel(background, opaque=False) * width
    rows = []
    for y in range(height):
        if alpha and (y < margin or y >= height - margin):
            rows.append(b"\x00" + clear)
            continue
        row = bytearray(pixel(background) * width)
        for bx, by, bw, bh, fill in blocks:
            if by <= y < by + bh:
                end = min(width, bx + bw)
                row[bx * size:end * size] = pixel(fill) * (end - bx)
        if margin:
            row[:margin * size] = clear[:margin * size]
            row[(width - margin) * size:] = clear[:margin * size]
        rows.append(b"\x00" + bytes(row))
    header = struct.pack(">IIBBBBB", width, height, 8, 6 if alpha else 2, 0, 0, 0)

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)

    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(b"".join(rows), 6)) + chunk(b"IEND", b"")
