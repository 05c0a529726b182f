# --- restyling the artifacts to the brand: parsers for each format, python-pptx for the deck ---
import json
import os
import re
import sys
import xml.etree.ElementTree as ET

from brandfacts import brief_brand, installed_brand

TASK = json.loads(sys.argv[1])
BRAND = installed_brand() if TASK["brand"] == "skill" else brief_brand(TASK["brand"])
ROLE_KEYS = {"primary text": "text", "page background": "background", "subtle background": "surface",
             "secondary element": "muted", "dark background": "dark", "text on dark": "on_dark", "shape": "shape",
             "heading font": "heading", "body font": "body", "accent cycle": "cycle"}
GENERIC = {"serif", "sans-serif", "monospace", "system-ui", "cursive", "fantasy"}
try:
    from PIL import ImageColor
    NAMES = sorted(ImageColor.colormap, key=len, reverse=True)
except ImportError:
    NAMES = ["white", "black", "navy", "tomato", "teal", "slategray", "gold", "crimson", "whitesmoke", "steelblue",
             "seagreen", "darkslateblue", "orchid", "gainsboro", "dimgray", "midnightblue"]
COLOR = re.compile(r"#[0-9a-fA-F]{3,8}\b|\b(?:rgba?|hsla?)\([^()]*\)|\b(?:" + "|".join(NAMES) + r")\b", re.I)


def targets():
    """{file: {(element, property): value}} from the roles table; shapes cycle per file."""
    table = {}
    shapes = {}
    with open(TASK["roles"], encoding="utf-8") as handle:
        for line in handle:
            cells = [c.strip() for c in line.strip().strip("|").split("|")]
            if len(cells) != 4 or cells[0] in ("File", "") or set(cells[0]) <= {"-"}:
                continue
            path, where, prop, role = cells[0], cells[1].strip("`"), cells[2], ROLE_KEYS[cells[3]]
            if role == "shape":
                value = BRAND.accents[shapes.get(path, 0) % len(BRAND.accents)]
                shapes[path] = shapes.get(path, 0) + 1
            elif role == "cycle":
                value = list(BRAND.accents)
            elif role in ("heading", "body"):
                value = BRAND.fonts[role]
            else:
                value = BRAND.roles[role]
            table.setdefault(path, {})[(where, prop)] = value
    return table


def font_value(old, fonts):
    tail = [p.strip() for p in old.split(",")][-1]
    names = [f'"{n}"' if " " in n else n for n in fonts]
    return ", ".join(names + ([tail] if tail in GENERIC else []))


def new_value(prop, old, value):
    if prop == "font-family":
        return font_value(old, value)
    return COLOR.sub(value, old)


def rewrite_declarations(block, where, wanted):
    def one(match):
        lead, prop, colon, value = match.groups()
        key = (where, prop.strip())
        if key in wanted:
            value = new_value(prop.strip(), value, wanted[key])
        return lead + prop + colon + value

    return re.sub(r"(^|;)(\s*[\w-]+)(\s*:\s*)([^;]*)", one, block)


def restyle_css(text, wanted):
    def rule(match):
        selector = re.sub(r"\s*,\s*", ", ", " ".join(match.group(1).split()))
        return match.group(1) + "{" + rewrite_declarations(match.group(2), selector, wanted) + "}"

    return re.sub(r"([^{}]*)\{([^{}]*)\}", rule, text)


def restyle_html(text, wanted):
    def tag(match):
        ident = re.search(r'\bid="([^"]+)"', match.group(0))
        if not ident:
            return match.group(0)
        where = "#" + ident.group(1)
        return re.sub(r'style="([^"]*)"', lambda s: 'style="' + rewrite_declarations(s.group(1), where, wanted) + '"',
                      match.group(0))

    return re.sub(r"<[a-zA-Z][^>]*>", tag, text)


def restyle_svg(text, wanted):
    ET.register_namespace("", "http://www.w3.org/2000/svg")
    root = ET.fromstring(text)
    for node in root.iter():
        where = node.get("id")
        for (element, prop), value in wanted.items():
            if element != where:
                continue
            style = node.get("style", "")
            if re.search(rf"(^|;)\s*{prop}\s*:", style):
                node.set("style", rewrite_declarations(style, where, {(where, prop): value}))
            else:
                node.set(prop, new_value(prop, node.get(prop, ""), value))
    return ET.tostring(root, encoding="unicode") + "\n"


def restyle_mplstyle(text, wanted):
    lines = []
    for line in text.splitlines():
        key = line.split(":", 1)[0].strip()
        value = wanted.get((key, key))
        if isinstance(value, list):
            colors = ", ".join(f"'{c.lstrip('#')}'" for c in value)
            line = f"{key}: cycler('color', [{colors}])"
        elif value:
            line = f"{key}: {value.lstrip('#')}"
        lines.append(line)
    return "\n".join(lines) + "\n"


def restyle_deck(source, target, wanted):
    from pptx import Presentation
    from pptx.dml.color import RGBColor

    def rgb(value):
        return RGBColor.from_string(value.lstrip("#").upper())

    deck = Presentation(source)
    for number, slide in enumerate(deck.slides, start=1):
        background = wanted.get((f"slide {number}", "background"))
        if background:
            slide.background.fill.solid()
            slide.background.fill.fore_color.rgb = rgb(background)
        for shape in slide.shapes:
            if (shape.name, "fill") in wanted:
                shape.fill.solid()
                shape.fill.fore_color.rgb = rgb(wanted[(shape.name, "fill")])
            if shape.has_text_frame:
                for paragraph in shape.text_frame.paragraphs:
                    for run in paragraph.runs:
                        if (shape.name, "text color") in wanted:
                            run.font.color.rgb = rgb(wanted[(shape.name, "text color")])
                        if (shape.name, "font") in wanted:
                            run.font.name = wanted[(shape.name, "font")][0]
    deck.save(target)


for path, wanted in targets().items():
    target = os.path.join("out", path)
    os.makedirs(os.path.dirname(target), exist_ok=True)
    if path.endswith(".pptx"):
        restyle_deck(path, target, wanted)
        continue
    with open(path, encoding="utf-8") as handle:
        text = handle.read()
    if path.endswith(".css"):
        text = restyle_css(text, wanted)
    elif path.endswith(".html"):
        text = restyle_html(text, wanted)
    elif path.endswith(".svg"):
        text = restyle_svg(text, wanted)
    else:
        text = restyle_mplstyle(text, wanted)
    with open(target, "w", encoding="utf-8") as handle:
        handle.write(text)
    print(f"restyled {path} -> {target}")
