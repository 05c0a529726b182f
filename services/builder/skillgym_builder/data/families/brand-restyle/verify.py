"""Verifier for brand-restyle: every restyled artifact parses, keeps the input's structure and
text (colours and fonts abstracted away), every colour slot holds the brand colour of its role
(accents in the brand's cycle), every font slot the brand font with its fallback, and no colour
outside the palette remains."""

import colorsys
import hashlib
import html.parser
import os
import re
import sys
import xml.etree.ElementTree as ET
import zipfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from checks import app_path, load_expected, run

E = load_expected()
MAX_BYTES = 4 * 1024 * 1024
PALETTE = {c.lower() for c in E["palette"]}
GENERIC = {"serif", "sans-serif", "monospace", "system-ui", "cursive", "fantasy", "ui-serif", "ui-sans-serif"}
NOT_COLORS = {"transparent", "none", "currentcolor", "inherit", "initial", "unset", "auto"}
COLOR_TOKEN = re.compile(r"#[0-9a-fA-F]{3,8}\b|\b(?:rgba?|hsla?)\([^()]*\)|\bvar\(\s*--[\w-]+\s*(?:,[^()]*)?\)|\b[a-zA-Z]+\b")
COLOR_PROPS = {"fill", "stroke", "stop-color", "color", "flood-color", "lighting-color"}
try:
    from PIL import ImageColor

    NAMES = {name: "#{:02x}{:02x}{:02x}".format(*ImageColor.getrgb(name)[:3]) for name in ImageColor.colormap}
except Exception:  # the checker still knows the common names without Pillow
    NAMES = {"white": "#ffffff", "black": "#000000", "red": "#ff0000", "navy": "#000080", "gray": "#808080",
             "grey": "#808080", "silver": "#c0c0c0", "blue": "#0000ff", "green": "#008000", "orange": "#ffa500"}


class Bad(Exception):
    pass


def read_text(rel):
    path = app_path(rel)
    if os.path.islink(path) or not os.path.isfile(path) or os.path.getsize(path) > MAX_BYTES:
        raise Bad(f"{rel}: missing, not a regular file, or too large")
    with open(path, "rb") as handle:
        return handle.read(MAX_BYTES).decode("utf-8")


def norm(text):
    return re.sub(r"\s+", " ", text or "").strip()


def channel(text, scale=255.0):
    text = text.strip()
    value = float(text[:-1]) * scale / 100 if text.endswith("%") else float(text)
    return value


def parse_color(token, variables=None):
    """(hex or None, is_a_colour) of one token."""
    low = token.strip().lower()
    if low.startswith("#"):
        digits = low[1:]
        if len(digits) in (3, 4):
            digits = "".join(c * 2 for c in digits)
        if len(digits) == 8 and digits.endswith("ff"):
            digits = digits[:6]
        return ("#" + digits if len(digits) == 6 else None), True
    if low.startswith("var("):
        name = re.match(r"var\(\s*(--[\w-]+)", low).group(1)
        value = (variables or {}).get(name)
        return (parse_color(value)[0] if value else None), True
    call = re.match(r"(rgba?|hsla?)\((.*)\)$", low)
    if call:
        parts = [p for p in re.split(r"[\s,/]+", call.group(2).strip()) if p]
        if len(parts) == 4 and channel(parts[3], 1.0) != 1.0:
            return None, True
        try:
            if call.group(1).startswith("rgb"):
                rgb = [round(channel(p)) for p in parts[:3]]
            else:
                hue, sat, light = float(parts[0].rstrip("deg")) / 360, channel(parts[1], 1.0), channel(parts[2], 1.0)
                rgb = [round(v * 255) for v in colorsys.hls_to_rgb(hue % 1, light, sat)]
        except (ValueError, IndexError):
            return None, True
        return "#{:02x}{:02x}{:02x}".format(*rgb) if all(0 <= v <= 255 for v in rgb) else None, True
    if low in NAMES:
        return NAMES[low], True
    return None, False


def abstract(value, variables=None):
    """``value`` with its colours replaced by a marker, and the colours (hex or None)."""
    colors = []

    def swap(match):
        token = match.group(0)
        if token.lower() in NOT_COLORS:
            return token
        hexa, is_color = parse_color(token, variables)
        if not is_color:
            return token
        colors.append(hexa)
        return "<c>"

    return norm(COLOR_TOKEN.sub(swap, value)), colors


def font_list(value):
    return [norm(part).strip("'\"").strip() for part in value.split(",") if part.strip()]


def font_ok(value, want):
    names = font_list(value)
    return [n.casefold() for n in names[:2]] == [w.casefold() for w in want] and all(
        n.casefold() in GENERIC for n in names[2:])


def declarations(text):
    out = []
    for part in text.split(";"):
        if not part.strip():
            continue
        if ":" not in part:
            raise Bad(f"not a declaration: {part.strip()[:40]!r}")
        prop, value = part.split(":", 1)
        out.append((norm(prop).lower(), norm(value)))
    return out


class Parsed:
    """An artifact reduced to its skeleton (structure and text, colours and fonts abstracted), the
    values of its slots and every colour it holds."""

    def __init__(self):
        self.skeleton, self.slots, self.colors, self.variables = [], {}, [], {}

    def slot(self, where, prop, value, variables=None):
        if prop in ("font-family", "font"):
            self.slots[f"{where}|{prop}"] = ("font", value)
            return "<fonts>"
        shape, colors = abstract(value, variables)
        self.colors += colors
        if colors:
            self.slots[f"{where}|{prop}"] = ("color", colors)
        return shape


def parse_css(text, parsed=None, variables=None):
    parsed = parsed or Parsed()
    text = re.sub(r"/\*.*?\*/", "", text, flags=re.S)
    rules = []
    position = 0
    for match in re.finditer(r"([^{}]*)\{([^{}]*)\}", text):
        if text[position:match.start()].strip():
            raise Bad("stray text between rules")
        rules.append((re.sub(r"\s*,\s*", ", ", norm(match.group(1))), declarations(match.group(2))))
        position = match.end()
    if text[position:].strip() or not rules:
        raise Bad("unbalanced or stray text after the last rule")
    variables = dict(variables or {})
    for selector, decls in rules:
        if selector == ":root" and decls and all(p.startswith("--") for p, _ in decls):
            variables.update({p: v for p, v in decls})
    for selector, decls in rules:
        if selector == ":root" and decls and all(p.startswith("--") for p, _ in decls):
            parsed.colors += [c for _, v in decls for c in abstract(v)[1]]
            continue
        parsed.skeleton.append((selector, [(p, parsed.slot(selector, p, v, variables)) for p, v in decls]))
    parsed.variables = variables
    return parsed


class HtmlEvents(html.parser.HTMLParser):
    def __init__(self, parsed, variables):
        super().__init__(convert_charrefs=True)
        self.parsed, self.variables, self.data = parsed, variables, ""

    def flush(self):
        if norm(self.data):
            self.parsed.skeleton.append(("data", norm(self.data)))
        self.data = ""

    def handle_starttag(self, tag, attrs):
        self.flush()
        attrs = dict(attrs)
        where = "#" + (attrs.get("id") or "?")
        style = attrs.pop("style", None)
        shape = sorted((k, norm(v or "")) for k, v in attrs.items())
        decls = [(p, self.parsed.slot(where, p, v, self.variables)) for p, v in declarations(style)] if style else None
        self.parsed.skeleton.append(("start", tag, shape, decls))

    def handle_endtag(self, tag):
        self.flush()
        self.parsed.skeleton.append(("end", tag))

    def handle_data(self, data):
        self.data += data

    def handle_decl(self, decl):
        self.flush()
        self.parsed.skeleton.append(("decl", norm(decl).lower()))

    def handle_comment(self, data):
        self.flush()
        self.parsed.skeleton.append(("comment", norm(data)))


def parse_html(text, variables):
    parsed = Parsed()
    events = HtmlEvents(parsed, variables)
    events.feed(text)
    events.close()
    events.flush()
    return parsed


def parse_svg(text):
    if re.search(r"<!(DOCTYPE|ENTITY)", text, re.I):
        raise Bad("document type declarations are not accepted")
    parsed = Parsed()

    def walk(node):
        attrs = dict(node.attrib)
        where = attrs.get("id", "?")
        props = {k: v for k, v in attrs.items() if k in COLOR_PROPS or k == "font-family"}
        props.update({p: v for p, v in declarations(attrs.pop("style", ""))})
        rest = sorted((k, norm(v)) for k, v in attrs.items() if k not in COLOR_PROPS and k != "font-family")
        shaped = sorted((p, parsed.slot(where, p, v)) for p, v in props.items())
        parsed.skeleton.append((node.tag, rest, shaped, norm(node.text), norm(node.tail)))
        for child in node:
            walk(child)
        parsed.skeleton.append(("/", node.tag))

    walk(ET.fromstring(text))
    return parsed


def parse_mplstyle(text):
    parsed = Parsed()
    for raw in text.splitlines():
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        key, sep, value = line.partition(":")
        if not sep:
            raise Bad(f"not a style line: {line[:40]!r}")
        key, value = key.strip(), re.sub(r"\s+#.*$", "", value).strip()
        if key == "axes.prop_cycle":
            items = re.search(r"\[(.*)\]", value)
            if not items:
                raise Bad("axes.prop_cycle has no colour list")
            colors = [parse_color(("#" if re.fullmatch(r"[0-9a-fA-F]{6}", t) else "") + t)[0]
                      for t in (i.strip().strip("'\"") for i in items.group(1).split(",")) if t]
            parsed.colors += colors
            parsed.slots[f"{key}|{key}"] = ("cycle", colors)
            parsed.skeleton.append((key, norm(value[: items.start()] + "[<cycle>]" + value[items.end():])))
        elif key.endswith("color"):
            token = value.strip("'\"")
            hexa = parse_color(("#" if re.fullmatch(r"[0-9a-fA-F]{6}", token) else "") + token)[0]
            parsed.colors.append(hexa)
            parsed.slots[f"{key}|{key}"] = ("color", [hexa])
            parsed.skeleton.append((key, "<c>"))
        else:
            parsed.skeleton.append((key, norm(value)))
    return parsed


def parse_pptx(rel):
    from pptx import Presentation
    from pptx.enum.dml import MSO_FILL

    path = app_path(rel)
    if os.path.islink(path) or not os.path.isfile(path) or os.path.getsize(path) > 4 * MAX_BYTES:
        raise Bad(f"{rel}: missing, not a regular file, or too large")
    with zipfile.ZipFile(path) as archive:
        if sum(i.file_size for i in archive.infolist()) > 16 * MAX_BYTES or archive.testzip() is not None:
            raise Bad(f"{rel}: damaged archive")
    parsed = Parsed()
    deck = Presentation(path)
    for number, slide in enumerate(deck.slides, start=1):
        fill = slide.background.fill
        color = "#" + str(fill.fore_color.rgb).lower() if fill.type == MSO_FILL.SOLID else None
        parsed.slots[f"slide {number}|background"] = ("color", [color])
        for shape in slide.shapes:
            text = shape.text_frame.text if shape.has_text_frame else ""
            parsed.skeleton.append((number, shape.name, shape.shape_type, shape.left, shape.top, shape.width,
                                    shape.height, norm(text)))
            if shape.has_text_frame and norm(text):
                runs = [r for p in shape.text_frame.paragraphs for r in p.runs]
                colors = ["#" + str(r.font.color.rgb).lower() if r.font.color and r.font.color.type is not None else None
                          for r in runs]
                parsed.slots[f"{shape.name}|text color"] = ("color", colors)
                parsed.slots[f"{shape.name}|font"] = ("names", [r.font.name for r in runs])
            elif shape.shape_type is not None and hasattr(shape, "fill"):
                fill = shape.fill
                parsed.slots[f"{shape.name}|fill"] = ("color", [
                    "#" + str(fill.fore_color.rgb).lower() if fill.type == MSO_FILL.SOLID else None])
    with zipfile.ZipFile(path) as archive:
        for name in archive.namelist():
            if re.match(r"ppt/slides/slide\d+\.xml$", name):
                parsed.colors += ["#" + v.decode().lower()
                                  for v in re.findall(rb'<a:srgbClr val="([0-9A-Fa-f]{6})"', archive.read(name))]
    return parsed


CACHE = {}


def parse(rel, root):
    """The parsed artifact ``rel`` under ``root`` ("" for the inputs, "out/" for the outputs)."""
    key = (root, rel)
    if key not in CACHE:
        kind = E["files"][rel]["kind"]
        try:
            if kind == "pptx":
                CACHE[key] = parse_pptx(root + rel)
            elif kind == "css":
                CACHE[key] = parse_css(read_text(root + rel))
            elif kind == "html":
                sheet = next((r for r, f in E["files"].items() if f["kind"] == "css"), None)
                styles = parse(sheet, root) if sheet else None
                CACHE[key] = parse_html(read_text(root + rel), styles.variables if styles else {})
            elif kind == "svg":
                CACHE[key] = parse_svg(read_text(root + rel))
            else:
                CACHE[key] = parse_mplstyle(read_text(root + rel))
        except Exception as exc:  # an unreadable output fails the checks that need it
            print(f"{root}{rel}: {type(exc).__name__}: {exc}")
            CACHE[key] = None
    return CACHE[key]


def digest(rel):
    with open(app_path(rel), "rb") as handle:
        return hashlib.sha256(handle.read()).hexdigest()


def content():
    """Exactly the listed outputs, each keeping its input's structure and text; inputs untouched."""
    if any(spec.get("digest") and digest(rel) != spec["digest"] for rel, spec in E["files"].items()):
        return 0.0
    written = {os.path.relpath(os.path.join(d, f), app_path("out")) for d, _, fs in os.walk(app_path("out")) for f in fs}
    if written != set(E["files"]):
        print(f"out/ holds {sorted(written - set(E['files']))} extra, lacks {sorted(set(E['files']) - written)}")
        return 0.0
    same = 0
    for rel in E["files"]:
        mine, theirs = parse(rel, "out/"), parse(rel, "")
        if mine is not None and theirs is not None and mine.skeleton == theirs.skeleton:
            same += 1
        else:
            print(f"out/{rel}: structure or text differs from {rel}")
    return same / len(E["files"])


def expected_slots(kind):
    for rel, spec in E["files"].items():
        for key, want in spec["slots"].items():
            is_font = isinstance(want, list) and want and not str(want[0]).startswith("#")
            if (kind == "font") == is_font:
                yield rel, key, want


def colors():
    """Every colour slot holds its role's brand colour, and no other colour is left anywhere."""
    right = total = 0
    for rel, key, want in expected_slots("color"):
        total += 1
        mine = parse(rel, "out/")
        got = mine.slots.get(key) if mine else None
        wanted = want if isinstance(want, list) else [want]
        values = got[1] if got else None
        ok = values is not None and ([v for v in values] == wanted if got[0] == "cycle" else
                                     bool(values) and all(v == wanted[0] for v in values))
        right += ok
        if not ok:
            print(f"out/{rel} {key}: {values} (want {wanted})")
    stray = [c for rel in E["files"] if (p := parse(rel, "out/")) for c in p.colors if c not in PALETTE]
    if stray:
        print(f"colours outside the palette: {sorted(set(map(str, stray)))[:8]}")
        return 0.0
    return right / total if total else 1.0


def fonts():
    right = total = 0
    for rel, key, want in expected_slots("font"):
        total += 1
        mine = parse(rel, "out/")
        got = mine.slots.get(key) if mine else None
        if got and got[0] == "names":
            ok = bool(got[1]) and all((n or "").casefold() == want[0].casefold() for n in got[1])
        else:
            ok = bool(got) and font_ok(got[1], want)
        right += ok
        if not ok:
            print(f"out/{rel} {key}: {got[1] if got else None} (want {want})")
    return right / total if total else 1.0


run([("colors", colors), ("fonts", fonts), ("content", content)])
