"""The instructions of image-compose's instances: a photo batch to process, or a seeded sketch to
write as a Python program or, for a skill written for p5.js, as a p5.js page."""

from __future__ import annotations

from typing import Any

from skillgym_builder.families.web_assets import WebAsset
from skillgym_builder.skillcard import SkillCard


def processing_instruction(spec: dict[str, Any]) -> str:
    thumbs = spec["thumbnails"]
    steps = [f"- a thumbnail of every readable image in `/app/photos/` (not its subfolders) as `/app/out/thumbs/<name "
             f"without extension>.jpg`: an RGB JPEG (quality 85 or better) that fits in {thumbs['box'][0]}x{thumbs['box'][1]} "
             "keeping the aspect ratio (never enlarged); transparency is flattened onto white;"]
    if "contact_sheet" in spec:
        sheet = spec["contact_sheet"]
        steps.append(f"- `/app/{sheet['file']}`: the thumbnails in name order on a grid of {sheet['columns']} columns, "
                     f"each centred in a {sheet['cell'][0]}x{sheet['cell'][1]} cell, cells and edges separated by "
                     f"{sheet['padding']} px of {sheet['background']}; an RGB PNG just large enough for the grid;")
    if "frames" in spec:
        steps.append("- every frame of `/app/anim/loader.gif` as an RGB PNG `/app/out/frames/frame_001.png`, "
                     "`frame_002.png`, ... in order;")
    return f"""# Process the photo batch

`/app/jobs/spec.json` describes this batch. Produce:

{chr(10).join(steps)}
- `/app/out/report.json`: `{{"thumbnails": {{"<name>": [width, height]}}, "skipped": ["photos/<file>", ...]{
    ', "frames": {"count": <n>, "durations_ms": [...]}' if "frames" in spec else ""}}}`, where `skipped` lists
  the images that cannot be decoded.

Do not modify the inputs.
"""


def generative_instruction(card: SkillCard, brief: dict[str, Any], from_skill: bool, starter: bool,
                           p5: WebAsset | None = None) -> str:
    """The sketch as a Python program, or as a p5.js page when ``p5`` (the library it loads) is given."""
    skill = f"the `{card.name}` skill in your skills directory"
    if p5 is None:
        file, medium = "art/sketch.py", PROGRAM
        where = (f"at the canvas size {skill} uses, and falls back to that skill's default seed when `--seed` is not "
                 "given" if from_skill else
                 "at the canvas size and with the default seed (when `--seed` is not given) that the brief names")
        density_how = "accepts `--density D` (0 to 1, default 0.5)"
        tail = ("uses no network, clock or other outside state, and finishes within 20 seconds.",
                "Render every gallery seed to `/app/out/gallery/seed-<seed>.png`.",
                "The checker runs your program with other seeds too.")
    else:
        file, medium = "art/piece.html", PAGE.format(version=p5.version)
        where = "one still image at pixel density 1, " + (
            f"at the canvas size {skill} uses, and uses that skill's default seed when the address gives none"
            if from_skill else
            "at the canvas size the brief names, and uses the brief's default seed when the address gives none")
        density_how = "reads a density from the address too (`piece.html?seed=N&density=D`, 0 to 1, default 0.5)"
        tail = ("uses no network, clock or other outside state, and has drawn within a few seconds of loading.",
                "Save the canvas for every gallery seed as `/app/out/gallery/seed-<seed>.png` (exactly the canvas's\n"
                "pixels). Chromium is installed (`chromium --headless`).",
                "The checker opens your page in Chromium with other seeds too.")
    density = (f"\n- {density_how}: at 0.8 the covered share is at least 0.1 above the share at "
               "0.2 for the same seed;" if brief["density"] else "")
    sheet = (f"\n\nAlso write `/app/{brief['sheet']['file']}`: the gallery images in seed order on a grid of "
             f"{brief['sheet']['columns']} columns, each scaled to fit and centred in a {brief['sheet']['cell'][0]}x"
             f"{brief['sheet']['cell'][1]} cell, cells and edges {brief['sheet']['padding']} px apart, on the "
             "background colour; an RGB PNG just large enough for the grid." if "sheet" in brief else "")
    fix = f"\nThe existing `/app/{file}` is a draft that does not meet this; replace it." if starter else ""
    return medium + f"""- draws {where};
- is reproducible: the same seed always gives {"a byte-identical file" if p5 is None else "the same canvas"}, and
  different seeds give clearly different images;
- uses only palette colours (every pixel exactly one of them, no anti-aliasing or blending) and at least
  `min_colors` of them;
- covers a share of the canvas with non-background pixels inside the `coverage` window;{density}
- {tail[0]}
{fix}
{tail[1]}{sheet} {tail[2]}
"""


PROGRAM = """# A seeded generative sketch

Write `/app/art/sketch.py`, a Python program (Pillow and numpy are installed) run as
`python3 art/sketch.py --seed N --out PATH` that writes a PNG artwork to `PATH`. `/app/art/brief.json` holds
the palette (its first colour is the background), the coverage window and the gallery seeds. The program:

"""
PAGE = """# A seeded p5.js artwork

Write `/app/art/piece.html`: one self-contained HTML page that draws a generative artwork with p5.js.
There is no network here: the page loads p5.js {version} from `../lib/p5.min.js` and no other script
file (everything else inline). `/app/art/brief.json` holds the palette (its first colour is the
background), the coverage window and the gallery seeds. The page:

- takes its seed from its address (`piece.html?seed=N`) and seeds p5's random and noise generators with it;
"""
