"""Reading a generative-art skill's conventions: the canvas size its sketches use and the seed a
sketch falls back to. Standard library only: the reference solutions ship this file as their
helper, so the builder and the solution read the skill the same way."""

from __future__ import annotations

import glob
import re

CANVAS = (
    re.compile(r"createCanvas\(\s*(\d{2,5})\s*,\s*(\d{2,5})\s*\)"),
    re.compile(r"\bcanvas\b[^\n]{0,40}?\b(\d{2,5})\s*(?:x|\u00d7|by)\s*(\d{2,5})\b", re.I),
)
SEED = (
    re.compile(r"\bdefault seed\b[^\n\d]{0,20}(\d{1,9})\b", re.I),
    re.compile(r"\bseed\s*(?:=|:)\s*(\d{1,9})\b"),
)


def _line(text: str, position: int) -> int:
    return text.count("\n", 0, position) + 1


def read_conventions(text: str) -> dict[str, object] | None:
    """``{"canvas": [w, h], "default_seed": n, "lines": {...}}``, or None unless both are stated."""
    canvas = next((m for pattern in CANVAS if (m := pattern.search(text))), None)
    seed = next((m for pattern in SEED if (m := pattern.search(text))), None)
    if canvas is None or seed is None:
        return None
    size = [int(canvas.group(1)), int(canvas.group(2))]
    if not all(16 <= side <= 4096 for side in size):
        return None
    return {"canvas": size, "default_seed": int(seed.group(1)),
            "lines": {"canvas": _line(text, canvas.start()), "default_seed": _line(text, seed.start())}}


def installed_conventions() -> dict[str, object]:
    """The conventions of the skill installed under /skills; stops when there is none."""
    paths = sorted(glob.glob("/skills/*/SKILL.md"))
    if not paths:
        raise SystemExit("no skill installed under /skills")
    with open(paths[0], encoding="utf-8-sig") as handle:
        found = read_conventions(handle.read())
    if found is None:
        raise SystemExit("the installed skill states no canvas size and default seed")
    return found


def load_brief(task: dict[str, object]) -> dict[str, object]:
    """The brief a solution works from: ``art/brief.json``, with the canvas size and default seed
    of the installed skill where the task says they come from it."""
    import json

    with open(str(task["brief"]), encoding="utf-8") as handle:
        brief: dict[str, object] = json.load(handle)
    if task.get("skill"):
        brief.update({k: v for k, v in installed_conventions().items() if k != "lines"})
    return brief
