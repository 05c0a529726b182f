"""The off-brand artifacts of a brand-restyle instance: a web page with its stylesheet, SVG charts
and diagrams, a matplotlib style file and the parameters of a slide deck, every colour and font
planted in a slot with a role (text, backgrounds, secondary elements, shapes, heading/body fonts)."""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from typing import Any

NAMED = {"white": "#ffffff", "black": "#000000", "navy": "#000080", "tomato": "#ff6347", "teal": "#008080",
         "slategray": "#708090", "gold": "#ffd700", "crimson": "#dc143c", "whitesmoke": "#f5f5f5",
         "steelblue": "#4682b4", "seagreen": "#2e8b57", "darkslateblue": "#483d8b", "orchid": "#da70d6",
         "gainsboro": "#dcdcdc", "dimgray": "#696969", "midnightblue": "#191970"}
FONTS = ["Helvetica Neue", "Roboto", "Open Sans", "Montserrat", "Verdana", "Inter", "Merriweather", "Trebuchet MS"]
GENERIC = {"Helvetica Neue": "sans-serif", "Roboto": "sans-serif", "Open Sans": "sans-serif", "Montserrat": "sans-serif",
           "Verdana": "sans-serif", "Inter": "sans-serif", "Merriweather": "serif", "Trebuchet MS": "sans-serif"}
ROLE_NAMES = {"text": "primary text", "background": "page background", "surface": "subtle background",
              "muted": "secondary element", "dark": "dark background", "on_dark": "text on dark", "shape": "shape",
              "heading": "heading font", "body": "body font", "cycle": "accent cycle"}
PRODUCTS = ["Field Notes", "Tidewater", "Lumen Desk", "Northwind Atlas", "Quarry", "Brightline"]
CATEGORIES = ["North", "South", "East", "West", "Online", "Retail", "Partners", "Export", "Pilot", "Support",
              "Kiosk", "Wholesale", "Events", "Labs"]
EMU = 12700  # per point


@dataclass
class Instance:
    """Files by workspace path, their colour/font slots and the deck's render parameters."""

    files: dict[str, str] = field(default_factory=dict)
    slots: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    deck: dict[str, Any] | None = None


class Painter:
    """Off-brand colours in the notations a noisy codebase mixes: hex of both cases and lengths,
    ``rgb()`` and colour names."""

    def __init__(self, rng: random.Random, noise: float, avoid: set[str]) -> None:
        self.rng, self.noise, self.avoid = rng, noise, avoid

    def color(self) -> str:
        while True:
            if self.noise and self.rng.random() < self.noise / 2:
                value = NAMED[self.rng.choice(sorted(NAMED))]
            else:
                value = "#" + "".join(self.rng.choice("0123456789abcdef") for _ in range(6))
            if value not in self.avoid:
                return value

    def css(self, value: str) -> str:
        if not self.noise or self.rng.random() >= self.noise:
            return value
        names = [n for n, v in NAMED.items() if v == value]
        r, g, b = (int(value[i : i + 2], 16) for i in (1, 3, 5))
        forms = [value.upper(), f"rgb({r}, {g}, {b})", f"rgb({r} {g} {b})"]
        if all(value[i] == value[i + 1] for i in (1, 3, 5)):
            forms.append("#" + value[1::2])
        return self.rng.choice(forms + names * 2)

    def font(self) -> str:
        name = self.rng.choice(FONTS)
        return f'"{name}", {GENERIC[name]}' if " " in name else f"{name}, {GENERIC[name]}"


def _slot(where: str, prop: str, role: str, index: int | None = None) -> dict[str, Any]:
    slot: dict[str, Any] = {"where": where, "property": prop, "role": role}
    if index is not None:
        slot["index"] = index
    return slot


def site(inst: Instance, rng: random.Random, paint: Painter, roles: set[str], shapes: int) -> None:
    """site/index.html and site/styles.css."""
    rules: list[tuple[str, list[tuple[str, str, str | None]]]] = []  # selector, [(property, value, role)]
    text, bg = paint.color(), paint.color()
    rules.append(("body", [("margin", "0", None), ("font-family", paint.font(), "body"), ("color", text, "text"),
                           ("background-color", bg, "background"), ("line-height", "1.5", None)]))
    rules.append(("h1, h2", [("font-family", paint.font(), "heading"), ("letter-spacing", "0.01em", None)]))
    rules.append(("h2", [("color", paint.color(), "text"), ("margin-top", "0", None)]))
    if {"dark", "on_dark"} <= roles:
        rules.append((".hero", [("background-color", paint.color(), "dark"), ("color", paint.color(), "on_dark"),
                                ("padding", "48px 32px", None)]))
    card: list[tuple[str, str, str | None]] = [("padding", "16px", None), ("border-radius", "8px", None)]
    if "surface" in roles:
        card.insert(0, ("background-color", paint.color(), "surface"))
    if "muted" in roles:
        card.append(("border", "1px solid {}", "muted"))
    rules.append((".card", card))
    if "muted" in roles:
        rules.append((".caption", [("color", paint.color(), "muted"), ("font-size", "0.875rem", None)]))
    for k in range(shapes):
        rules.append((f".swatch-{k + 1}", [("background-color", paint.color(), "shape"), ("width", f"{24 + 4 * k}px", None)]))
    css_lines, slots = [], []
    shape_index = 0
    for selector, decls in rules:
        css_lines.append(f"{selector} {{")
        for prop, value, role in decls:
            if role in ("heading", "body") or role is None:
                written = value
            elif "{}" in value:
                written = value.format(paint.css(paint.color()))
            else:
                written = paint.css(value)
            css_lines.append(f"  {prop}: {written};")
            if role is not None:
                slots.append(_slot(selector, prop, role, shape_index if role == "shape" else None))
                shape_index += role == "shape"
        css_lines.append("}")
        css_lines.append("")
    inst.files["site/styles.css"] = "\n".join(css_lines)
    inst.slots["site/styles.css"] = slots
    product = rng.choice(PRODUCTS)
    note_role = "muted" if "muted" in roles else "text"
    swatches = "\n".join(f'<span class="swatch swatch-{k + 1}" title="{CATEGORIES[k % len(CATEGORIES)]}"></span>'
                         for k in range(shapes))
    hero_open = '<header class="hero">' if {"dark", "on_dark"} <= roles else "<header>"
    extra = ""
    inline = [_slot("#note", "color", note_role)]
    if paint.noise:
        extra = f'\n<div id="promo" style="background-color: {paint.css(paint.color())}; padding: 12px">Try {product} free for 30 days.</div>'
        inline.append(_slot("#promo", "background-color", "surface" if "surface" in roles else "background"))
    inst.files["site/index.html"] = f"""<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>{product} | Spring update</title>
<link rel="stylesheet" href="styles.css">
</head>
<body>
{hero_open}
<h1>{product}: what is new this spring</h1>
<p>Release {rng.randint(2, 9)}.{rng.randint(0, 20)} ships on {rng.choice(["March", "April", "May"])} {rng.randint(2, 28)}.</p>
</header>
<main>
<section class="card">
<h2>Faster sync</h2>
<p>Sync now finishes {rng.randint(20, 60)}% faster on large projects.</p>
<p class="caption">Measured on {rng.randint(3, 12)} reference workspaces.</p>
</section>
<div class="swatches">
{swatches}
</div>
<p id="note" style="color: {paint.css(paint.color())}; font-style: italic">Questions? Reply to this page's owner.</p>{extra}
</main>
</body>
</html>
"""
    inst.slots["site/index.html"] = inline


def _svg_color(paint: Painter, prop: str, value: str) -> str:
    written = paint.css(value)
    if paint.noise and paint.rng.random() < paint.noise:
        return f'style="{prop}: {written}"'
    return f'{prop}="{written}"'


def chart(inst: Instance, rng: random.Random, paint: Painter, roles: set[str], bars: int, path: str) -> None:
    width, height = 80 + 56 * bars, 400
    slots = [_slot("background", "fill", "background"), _slot("title", "fill", "text"),
             _slot("title", "font-family", "heading")]
    lines = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" viewBox="0 0 {width} {height}">',
             f'  <rect id="background" x="0" y="0" width="{width}" height="{height}" {_svg_color(paint, "fill", paint.color())}/>',
             f'  <text id="title" x="24" y="36" font-family=\'{paint.font()}\' font-size="22" '
             f'{_svg_color(paint, "fill", paint.color())}>Orders by channel, Q{rng.randint(1, 4)}</text>']
    if "muted" in roles:
        for k, y in enumerate((340, 260, 180, 100)):
            lines.append(f'  <line id="grid-{k + 1}" x1="56" y1="{y}" x2="{width - 16}" y2="{y}" '
                         f'{_svg_color(paint, "stroke", paint.color())} stroke-width="1"/>')
            slots.append(_slot(f"grid-{k + 1}", "stroke", "muted"))
    for k in range(bars):
        value = rng.randint(20, 240)
        x = 64 + 56 * k
        lines.append(f'  <rect id="bar-{k + 1}" x="{x}" y="{340 - value}" width="40" height="{value}" '
                     f'{_svg_color(paint, "fill", paint.color())}/>')
        lines.append(f'  <text id="label-{k + 1}" x="{x + 20}" y="360" text-anchor="middle" font-family=\'{paint.font()}\' '
                     f'font-size="12" {_svg_color(paint, "fill", paint.color())}>{CATEGORIES[k % len(CATEGORIES)]}</text>')
        slots += [_slot(f"bar-{k + 1}", "fill", "shape", k), _slot(f"label-{k + 1}", "fill", "text"),
                  _slot(f"label-{k + 1}", "font-family", "body")]
    lines.append("</svg>")
    inst.files[path] = "\n".join(lines) + "\n"
    inst.slots[path] = slots


def diagram(inst: Instance, rng: random.Random, paint: Painter, roles: set[str], path: str) -> None:
    steps = rng.sample(["Collect", "Clean", "Review", "Approve", "Publish", "Archive"], 4)
    lines = ['<svg xmlns="http://www.w3.org/2000/svg" width="760" height="200" viewBox="0 0 760 200">',
             f'  <rect id="canvas" x="0" y="0" width="760" height="200" {_svg_color(paint, "fill", paint.color())}/>']
    slots = [_slot("canvas", "fill", "background")]
    for k, step in enumerate(steps):
        x = 20 + 185 * k
        lines.append(f'  <rect id="step-{k + 1}" x="{x}" y="60" width="150" height="80" rx="10" '
                     f'{_svg_color(paint, "fill", paint.color())}/>')
        lines.append(f'  <text id="step-label-{k + 1}" x="{x + 75}" y="106" text-anchor="middle" '
                     f'font-family=\'{paint.font()}\' font-size="16" {_svg_color(paint, "fill", paint.color())}>{step}</text>')
        slots += [_slot(f"step-{k + 1}", "fill", "shape", k), _slot(f"step-label-{k + 1}", "fill", "text"),
                  _slot(f"step-label-{k + 1}", "font-family", "body")]
        if k and "muted" in roles:
            lines.append(f'  <line id="arrow-{k}" x1="{x - 35}" y1="100" x2="{x}" y2="100" '
                         f'{_svg_color(paint, "stroke", paint.color())} stroke-width="2"/>')
            slots.append(_slot(f"arrow-{k}", "stroke", "muted"))
    lines.append("</svg>")
    inst.files[path] = "\n".join(lines) + "\n"
    inst.slots[path] = slots


def mplstyle(inst: Instance, rng: random.Random, paint: Painter, roles: set[str], path: str) -> None:
    def mpl(value: str) -> str:
        written = paint.css(value)
        return written.lstrip("#") if written.startswith("#") and len(written) == 7 else \
            next((n for n, v in NAMED.items() if v == value), value.lstrip("#"))

    entries: list[tuple[str, str, str | None]] = [
        ("figure.facecolor", mpl(paint.color()), "background"), ("figure.dpi", str(rng.choice([100, 120, 150])), None),
        ("axes.facecolor", mpl(paint.color()), "surface" if "surface" in roles else "background"),
        ("axes.labelcolor", mpl(paint.color()), "text"), ("text.color", mpl(paint.color()), "text"),
        ("axes.grid", "True", None), ("lines.linewidth", str(rng.choice([1.5, 2.0, 2.5])), None),
        ("xtick.color", mpl(paint.color()), "text"), ("ytick.color", mpl(paint.color()), "text")]
    if "muted" in roles:
        entries += [("axes.edgecolor", mpl(paint.color()), "muted"), ("grid.color", mpl(paint.color()), "muted")]
    cycle = ", ".join(f"'{paint.color().lstrip('#')}'" for _ in range(rng.randint(4, 6)))
    entries.append(("axes.prop_cycle", f"cycler('color', [{cycle}])", "cycle"))
    inst.files[path] = "".join(f"{key}: {value}\n" for key, value, _ in entries)
    inst.slots[path] = [_slot(key, key, role) for key, _, role in entries if role]


def deck(inst: Instance, rng: random.Random, paint: Painter, shapes: int, path: str) -> None:
    """Render parameters of a slide deck (python-pptx draws it in the sandbox)."""
    slides, slots, index = [], [], 0
    per_slide = [shapes // 2 + shapes % 2, shapes // 2]
    heading_font, body_font = paint.rng.choice(FONTS), paint.rng.choice(FONTS)
    for number, count in enumerate(per_slide, start=1):
        items: list[dict[str, Any]] = [
            {"name": f"s{number}-title", "kind": "text", "box": [48, 32, 624, 60],
             "runs": [{"text": rng.choice(["Quarterly review", "Roadmap", "Field results", "Next steps"]) + f" {number}",
                       "size": 36, "color": paint.color(), "font": heading_font}]},
            {"name": f"s{number}-body", "kind": "text", "box": [48, 110, 624, 120],
             "runs": [{"text": f"{rng.randint(3, 40)} teams adopted the new workflow.", "size": 16,
                       "color": paint.color(), "font": body_font},
                      {"text": f" Churn fell to {rng.randint(2, 9)}%.", "size": 16, "color": paint.color(),
                       "font": body_font}]}]
        slots += [_slot(f"slide {number}", "background", "background"), _slot(f"s{number}-title", "text color", "text"),
                  _slot(f"s{number}-title", "font", "heading"), _slot(f"s{number}-body", "text color", "text"),
                  _slot(f"s{number}-body", "font", "body")]
        for k in range(count):
            name = f"s{number}-shape-{k + 1}"
            items.append({"name": name, "kind": rng.choice(["rect", "oval", "rounded"]),
                          "box": [48 + 150 * k, 260, 120, 90], "fill": paint.color()})
            slots.append(_slot(name, "fill", "shape", index))
            index += 1
        slides.append({"background": paint.color(), "shapes": items})
    inst.deck = {"file": path, "slides": slides}
    inst.slots[path] = slots


def roles_table(inst: Instance) -> str:
    rows = []
    for path in sorted(inst.slots):
        for slot in inst.slots[path]:
            rows.append(f"| {path} | `{slot['where']}` | {slot['property']} | {ROLE_NAMES[slot['role']]} |")
    return "\n".join(["| File | Element | Property | Role |", "|---|---|---|---|", *rows])
