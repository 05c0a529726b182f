"""Reading a brand from a skill's (or a brief's) markdown: palette entries with the role each
colour plays, the order the accents cycle in, and the heading and body fonts with their
fallbacks. Standard library only: reference solutions ship this very file as their helper, so
the builder and the solution read the brand the same way."""

from __future__ import annotations

import glob
import re
from dataclasses import dataclass, field

HEX = re.compile(r"#(?:[0-9a-fA-F]{6}|[0-9a-fA-F]{3})\b")
ENTRY = re.compile(
    r"^\s*[-*+]\s+(?P<name>[A-Za-z][\w .'/-]{0,40}?)\s*[:=]\s*(?P<hex>#(?:[0-9a-fA-F]{6}|[0-9a-fA-F]{3}))\b"
    r"\s*(?:[-\u2013\u2014:(]+\s*)?(?P<role>.*?)\)?\s*$"
)
MARKUP = re.compile(r"[*`]+")
HEADING = re.compile(r"^\s*#{1,6}\s+(.+)$")
LABEL = re.compile(r"^\s*([A-Za-z][^:]{0,60}):\s*$")
FENCE = re.compile(r"^\s*(```|~~~)")
# which palette entry plays which part, read from its description (first entry that matches wins)
ROLE_PATTERNS: dict[str, tuple[str, ...]] = {
    "text": (r"\b(primary|main|body|default)\s+text\b", r"\btext\b(?!\s+on\b)"),
    "on_dark": (r"\btext on dark\b", r"\bon dark\b", r"\b(inverse|reversed) text\b"),
    "background": (r"\b(light|page|main|primary)\s+backgrounds?\b",),
    "dark": (r"\bdark\s+(backgrounds?|sections?|panels?|surfaces?)\b",),
    "surface": (r"\b(subtle|secondary|soft|muted)\s+(backgrounds?|surfaces?|panels?)\b", r"\b(panels?|cards?)\b"),
    "muted": (r"\bsecondary (elements?|text)\b", r"\b(borders?|dividers?|rules?|grid ?lines?|captions?)\b",
              r"\bmuted\b"),
}
ORDINALS = ("primary", "secondary", "tertiary", "quaternary", "fifth")
FONT_SOURCES = {
    "heading": r"(?:headings?|headlines?|titles?)",
    "body": r"(?:body(?:\s+text|\s+copy)?|paragraphs?|running text)",
}
FONT_FORMS = (
    r"(?P<font>[A-Z][\w' -]*?)\s*\((?:with\s+)?(?P<fallback>[A-Z][\w' -]*?)\s+fallback\)",
    r"(?P<font>[A-Z][\w' -]*?)\s*\(fallback:?\s*(?P<fallback>[A-Z][\w' -]*?)\)",
    r"(?P<font>[A-Z][\w' -]*?),?\s+(?:falling|falls) back to\s+(?P<fallback>[A-Z][\w' -]*?)\b\.?$",
)


@dataclass
class Brand:
    """Colours by role (``text``, ``background`` and, where the brand names them, ``surface``,
    ``muted``, ``dark``, ``on_dark``), the accents in cycle order, fonts as [font, fallback], and
    the SKILL.md line each fact was read from."""

    roles: dict[str, str]
    accents: list[str]
    fonts: dict[str, list[str]]
    lines: dict[str, int] = field(default_factory=dict)


def normal_hex(text: str) -> str:
    value = text.lower().lstrip("#")
    if len(value) == 3:
        value = "".join(ch * 2 for ch in value)
    return "#" + value


def body_lines(text: str) -> list[tuple[int, str]]:
    """(1-based line, text without emphasis/code marks) after the front matter, outside fences."""
    lines = text.replace("\r\n", "\n").split("\n")
    start = 0
    if lines and lines[0].strip() == "---":
        start = next((i + 1 for i in range(1, len(lines)) if lines[i].strip() in ("---", "...")), 0)
    out, fenced = [], False
    for index in range(start, len(lines)):
        if FENCE.match(lines[index]):
            fenced = not fenced
        elif not fenced:
            out.append((index + 1, MARKUP.sub("", lines[index])))
    return out


def _entries(lines: list[tuple[int, str]]) -> list[dict[str, object]]:
    entries: list[dict[str, object]] = []
    context = ""
    for number, raw in lines:
        heading = HEADING.match(raw) or LABEL.match(raw)
        if heading:
            context = heading.group(1).lower()
            continue
        match = ENTRY.match(raw)
        if match:
            role = match.group("role").strip().rstrip(".").lower()
            entries.append({"name": match.group("name").strip(), "hex": normal_hex(match.group("hex")), "role": role,
                            "accent": "accent" in context or "accent" in role, "line": number})
    return entries


def _accent_order(lines: list[tuple[int, str]], accents: list[dict[str, object]]) -> tuple[list[dict[str, object]], int]:
    names = {str(a["name"]).lower(): a for a in accents}
    for number, raw in lines:
        cycle = re.search(r"\b(?:cycl\w*|rotat\w*|alternat\w*)\b(?:\s+(?:through|between|over|in order))?:?\s+(.+)", raw, re.I)
        if not cycle:
            continue
        words = [re.sub(r"\b(the|accents?|colou?rs?)\b", "", w).strip(" .").lower() for w in re.split(r",|\bthen\b|\band\b|->|\u2192", cycle.group(1))]
        ordered = [names[w] for w in words if w in names]
        if len(ordered) == len(accents) >= 2:
            return ordered, number
    ranked = [(next((i for i, o in enumerate(ORDINALS) if o in str(a["role"])), len(ORDINALS)), k, a)
              for k, a in enumerate(accents)]
    return [a for _, _, a in sorted(ranked, key=lambda item: (item[0], item[1]))], int(accents[0]["line"])  # type: ignore[call-overload]


def _fonts(lines: list[tuple[int, str]]) -> tuple[dict[str, list[str]], dict[str, int]]:
    fonts: dict[str, list[str]] = {}
    where: dict[str, int] = {}
    for role, source in FONT_SOURCES.items():
        for number, raw in lines:
            text = re.sub(r"^\s*[-*+]\s+", "", raw).strip()
            head = re.match(rf"(?i){source}\b[^:]{{0,30}}:\s*(.+)$", text)
            if not head:
                continue
            found = next((m for form in FONT_FORMS if (m := re.match(form, head.group(1).strip()))), None)
            if found:
                fonts[role] = [found.group("font").strip(), found.group("fallback").strip()]
                where[f"{role}_font"] = number
                break
    return fonts, where


def read_brand(text: str) -> Brand | None:
    """The brand ``text`` describes, or None when it lacks a text colour, a background colour,
    two accents or the heading and body fonts."""
    lines = body_lines(text)
    entries = _entries(lines)
    accents = [e for e in entries if e["accent"]]
    plain = [e for e in entries if not e["accent"]]
    roles: dict[str, str] = {}
    where: dict[str, int] = {}
    for role, patterns in ROLE_PATTERNS.items():
        for pattern in patterns:
            hit = next((e for e in plain if re.search(pattern, str(e["role"]))), None)
            if hit is not None:
                roles[role] = str(hit["hex"])
                where[role] = int(hit["line"])  # type: ignore[call-overload]
                break
    fonts, font_lines = _fonts(lines)
    if "text" not in roles or "background" not in roles or len(accents) < 2 or set(fonts) != {"heading", "body"}:
        return None
    ordered, cycle_line = _accent_order(lines, accents)
    where["accents"] = cycle_line
    return Brand(roles, [str(a["hex"]) for a in ordered], fonts, {**where, **font_lines})


def installed_brand() -> Brand:
    """The brand of the skill installed under /skills; stops when there is none."""
    paths = sorted(glob.glob("/skills/*/SKILL.md"))
    if not paths:
        raise SystemExit("no skill installed under /skills")
    with open(paths[0], encoding="utf-8-sig") as handle:
        brand = read_brand(handle.read())
    if brand is None:
        raise SystemExit("the installed skill describes no complete brand")
    return brand


def brief_brand(path: str) -> Brand:
    with open(path, encoding="utf-8") as handle:
        brand = read_brand(handle.read())
    if brand is None:
        raise SystemExit(f"{path} describes no complete brand")
    return brand
