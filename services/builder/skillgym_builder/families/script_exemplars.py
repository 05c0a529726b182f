"""The skill's own example of the document its script reads. A skill whose script takes a JSON or
YAML file often shows that file's format in its text ("Input format:" and a fenced block); the
keys the script looks up are then the example's, not the generic record fields a script's code
alone lets us guess. Such an example, found by the keys the script reads, is what each instance's
input is varied from: the same structure and categories, other numbers and list lengths."""

from __future__ import annotations

import json
import random
import re
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import yaml

from skillgym_builder.families.script_documents import fenced_blocks

MAX_TEXT_BYTES = 256 * 1024
MAX_TEXTS = 20
_LANGUAGES = {"json": ("json", "jsonc", ""), "yaml": ("yaml", "yml", "")}
# ``// why`` comments that documentation puts in JSON: a whole line, or after a value (not ``"http://"``)
_JSON_COMMENT = re.compile(r'^\s*//.*$|(?<=[\d"\]}el,\[{])[ \t]+//.*$', re.M)


def _texts(root: Path, skill_md: str) -> Iterable[str]:
    """SKILL.md, then the skill's other Markdown files (its references), largest ones skipped."""
    yield skill_md
    found = 0
    for path in sorted(root.rglob("*.md")):
        if path.name == "SKILL.md" or path.is_symlink() or not path.is_file() or path.stat().st_size > MAX_TEXT_BYTES:
            continue
        try:
            yield path.read_text(encoding="utf-8")
        except (UnicodeDecodeError, OSError):
            continue
        found += 1
        if found >= MAX_TEXTS:
            return


def _parse(kind: str, body: str) -> Any:
    try:
        return json.loads(_JSON_COMMENT.sub("", body)) if kind == "json" else yaml.safe_load(body)
    except (ValueError, yaml.YAMLError):
        return None


def document_exemplar(root: Path, skill_md: str, kind: str, keys: Iterable[str], container: str | None) -> str:
    """The JSON text of the skill's example document for a script reading ``kind`` (json or yaml)
    that looks up ``keys`` (or holds its records under ``container``): the example sharing the most
    of them, at least one, and with something to vary; "" when the skill shows none."""
    if kind not in _LANGUAGES:
        return ""
    wanted = set(keys) | ({container} if container else set())
    if not wanted:
        return ""
    best: tuple[int, int, str] | None = None
    for text in _texts(root, skill_md):
        for language, body in fenced_blocks(text):
            if language.lower() not in _LANGUAGES[kind]:
                continue
            value = _parse(kind, body)
            if not isinstance(value, dict) or not value:
                continue
            try:
                text = json.dumps(value)  # YAML's dates and timestamps have no JSON form: such an example is passed over
            except (TypeError, ValueError):
                continue
            shared = len(wanted & set(value))
            if shared and varied(value, random.Random(1), 0.0) != varied(value, random.Random(2), 0.0) and (best is None or (shared, len(body)) > best[:2]):
                best = (shared, len(body), text)
    return best[2] if best else ""


def varied(example: Any, rng: random.Random, noise: float) -> Any:
    """``example`` with every number drawn again near its own value (integers stay integers, the
    decimals kept), lists of records resized and their records varied, a mapping of named things of
    one kind (dependencies and their versions) cut to a subset; other keys, text and flags kept,
    since they are the format and its categories. ``noise`` widens the draw."""
    spread = 0.5 + noise
    if isinstance(example, bool) or example is None or isinstance(example, str):
        return example
    if isinstance(example, int):
        if example == 0:
            return rng.randint(0, 3)
        low, high = sorted((round(example * (1 - spread / 2)), round(example * (1 + spread))))
        return rng.randint(low, max(low, high))
    if isinstance(example, float):
        decimals = min(6, len(repr(example).split(".")[-1])) if "." in repr(example) else 2
        return round(example * rng.uniform(1 - spread / 2, 1 + spread), decimals)
    if isinstance(example, dict):
        keys = list(example)
        if len(keys) >= 3 and (all(isinstance(v, str) for v in example.values())
                               or all(isinstance(v, dict) for v in example.values())):
            # named things of one kind (packages and their versions): a subset of them, in their order
            kept = set(rng.sample(keys, k=rng.randint(max(1, len(keys) - 2), len(keys))))
            keys = [key for key in keys if key in kept]
        return {key: varied(example[key], rng, noise) for key in keys}
    if isinstance(example, list):
        if example and all(isinstance(item, dict) for item in example):
            size = rng.randint(max(1, len(example) - 1), len(example) + 3)
            return [varied(rng.choice(example), rng, noise) for _ in range(size)]
        return [varied(item, rng, noise) for item in example]
    return example


def document(exemplar_json: str, kind: str, rng: random.Random, noise: float) -> str:
    """One instance's input from the skill's example, written as ``kind``."""
    value = varied(json.loads(exemplar_json), rng, noise)
    if kind == "json":
        return json.dumps(value, indent=2) + "\n"
    return str(yaml.safe_dump(value, sort_keys=False))
