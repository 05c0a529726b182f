# --- restyling with design tokens: CSS custom properties, text edits for SVG, raw deck XML ---
import io
import json
import os
import re
import sys
import zipfile

from brandfacts import brief_brand, installed_brand

TASK = json.loads(sys.argv[1])
BRAND = installed_brand() if TASK["brand"] == "skill" else brief_brand(TASK["brand"])
ROLE_KEYS = {"primary text": "text", "page background": "background", "subtle background": "surface",
             "secondary element": "muted", "dark background": "dark", "text on dark": "on_dark", "shape": "shape",
             "heading font": "heading", "body font": "body", "accent cycle": "cycle"}
NAMED = ("white|black|navy|tomato|teal|slategray|gold|crimson|whitesmoke|steelblue|seagreen|darkslateblue|orchid|"
         "gainsboro|dimgray|midnightblue")
COLOR = re.compile(r"#[0-9a-fA-F]{3,8}\b|\brgba?\([^()]*\)|\b(?:" + NAMED + r")\b", re.I)


def rows():
    with open(TASK["roles"], encoding="utf-8") as handle:
        for line in handle:
            cells = [c.strip() for c in line.strip().strip("|").split("|")]
            if len(cells) == 4 and cells[3] in ROLE_KEYS:
                yield cells[0], cells[1].strip("`"), cells[2], ROLE_KEYS[cells[3]]


def token(role, path, counters):
    """The custom property (CSS) or the literal value (elsewhere) for a role."""
    if role == "shape":
        k = counters.get(path, 0)
        counters[path] = k + 1
        return f"accent-{k % len(BRAND.accents) + 1}"
    return role


def literal(name):
    if name.startswith("accent-"):
        return BRAND.accents[int(name.split("-")[1]) - 1]
    if name in ("heading", "body"):
        return ", ".join(f'"{f}"' if " " in f else f for f in BRAND.fonts[name])
    return BRAND.roles[name]


def new_value(prop, old, value):
    return value if prop == "font-family" else COLOR.sub(value, old)


def edit_declaration(text, prop, value, stop):
    """``prop`` in a declaration list (values end at a character of ``stop``) with its colours, or
    its whole font list, replaced."""
    pattern = re.compile(rf"((?:^|[;\s\"']){re.escape(prop)}\s*:\s*)([^{stop}]*)")
    return pattern.sub(lambda m: m.group(1) + new_value(prop, m.group(2), value), text, count=1)


def edit_tag(tag, prop, value):
    """An attribute ``prop`` of the tag, else ``prop`` inside its style attribute."""
    attribute = re.search(rf"(\s{re.escape(prop)}=)([\"'])(.*?)\2", tag)
    if attribute:
        written = new_value(prop, attribute.group(3), value)
        quote = "'" if '"' in written else '"'
        return tag[: attribute.start()] + attribute.group(1) + quote + written + quote + tag[attribute.end():]
    style = re.search(r'(\sstyle=)"([^"]*)"', tag)
    edited = edit_declaration(style.group(2), prop, value.replace('"', "'"), ";")
    return tag[: style.start()] + style.group(1) + '"' + edited + '"' + tag[style.end():]


def css(text, wanted):
    names = [*sorted(BRAND.roles), *(f"accent-{k + 1}" for k in range(len(BRAND.accents)))]
    variables = ":root {\n" + "".join(f"  --brand-{n}: {literal(n)};\n" for n in names) + "}\n\n"

    def rule(match):
        selector = ", ".join(part.strip() for part in " ".join(match.group(1).split()).split(","))
        block = match.group(2)
        for (where, prop), name in wanted.items():
            if where == selector:
                value = literal(name) if name in ("heading", "body") else f"var(--brand-{name})"
                block = edit_declaration(block, prop, value, ";")
        return match.group(1) + "{" + block + "}"

    return variables + re.sub(r"([^{}]*)\{([^{}]*)\}", rule, text)


def tagged(text, wanted, value_of):
    """Edit the tag holding each element id (HTML inline styles, SVG attributes and style attributes)."""
    for (where, prop), name in wanted.items():
        ident = where.lstrip("#")
        match = re.search(rf'<[a-zA-Z][^>]*\bid="{re.escape(ident)}"[^>]*>', text)
        text = text[: match.start()] + edit_tag(match.group(0), prop, value_of(name)) + text[match.end():]
    return text


def mplstyle(text, wanted):
    out = []
    for line in text.splitlines():
        key = line.partition(":")[0].strip()
        name = wanted.get((key, key))
        if name == "cycle":
            line = re.sub(r"\[.*\]", "[" + ", ".join(f"'{c[1:]}'" for c in BRAND.accents) + "]", line)
        elif name:
            line = f"{key}: {literal(name)[1:]}"
        out.append(line)
    return "\n".join(out) + "\n"


def deck(source, target, wanted):
    """Edit the slide XML inside the package: srgbClr values and latin typefaces."""
    def hexval(name):
        return literal(name)[1:].upper()

    with zipfile.ZipFile(source) as archive:
        parts = {info.filename: archive.read(info.filename) for info in archive.infolist()}
    for part in list(parts):
        found = re.match(r"ppt/slides/slide(\d+)\.xml$", part)
        if not found:
            continue
        xml = parts[part].decode("utf-8")
        background = wanted.get((f"slide {found.group(1)}", "background"))
        if background:
            fill = f'srgbClr val="{hexval(background)}"'
            xml = re.sub(r"<p:bg>.*?</p:bg>", lambda m, fill=fill: re.sub(r'srgbClr val="\w+"', fill, m.group(0)),
                         xml, flags=re.S)

        def shape(match):
            block = match.group(0)
            name = re.search(r'<p:cNvPr [^>]*name="([^"]+)"', block).group(1)
            if (name, "fill") in wanted:
                block = re.sub(r"(<p:spPr>.*?</p:spPr>)", lambda m: re.sub(
                    r'srgbClr val="\w+"', f'srgbClr val="{hexval(wanted[(name, "fill")])}"', m.group(1)), block, flags=re.S)
            if (name, "text color") in wanted:
                block = re.sub(r"(<a:rPr.*?</a:rPr>)", lambda m: re.sub(
                    r'srgbClr val="\w+"', f'srgbClr val="{hexval(wanted[(name, "text color")])}"', m.group(1)),
                    block, flags=re.S)
            if (name, "font") in wanted:
                font = BRAND.fonts[wanted[(name, "font")]][0]
                block = re.sub(r'<a:latin typeface="[^"]*"', f'<a:latin typeface="{font}"', block)
            return block

        parts[part] = re.sub(r"<p:sp>.*?</p:sp>", shape, xml, flags=re.S).encode("utf-8")
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, data in parts.items():
            archive.writestr(name, data)
    with open(target, "wb") as handle:
        handle.write(buffer.getvalue())


plan, counters = {}, {}
for path, where, prop, role in rows():
    plan.setdefault(path, {})[(where, prop)] = token(role, path, counters)
for path, wanted in plan.items():
    target = os.path.join("out", path)
    os.makedirs(os.path.dirname(target), exist_ok=True)
    if path.endswith(".pptx"):
        deck(path, target, wanted)
        continue
    with open(path, encoding="utf-8") as handle:
        text = handle.read()
    if path.endswith(".css"):
        text = css(text, wanted)
    elif path.endswith(".html"):
        text = tagged(text, wanted, lambda n: f"var(--brand-{n})")
    elif path.endswith(".svg"):
        text = tagged(text, wanted, literal)
    else:
        text = mplstyle(text, wanted)
    with open(target, "w", encoding="utf-8") as handle:
        handle.write(text)
    print(f"restyled {path} -> {target}")
