# --- write a seeded Pillow sketch, render the gallery (and its contact sheet) ---
import json
import os
import subprocess
import sys

from PIL import Image

TASK = json.loads(sys.argv[1])
with open(TASK["brief"], encoding="utf-8") as handle:
    BRIEF = json.load(handle)
if TASK["skill"]:
    from artfacts import installed_conventions

    BRIEF.update({k: v for k, v in installed_conventions().items() if k != "lines"})

SKETCH = '''"""Drifting discs and bars on a calm ground, one composition per seed."""
import argparse
import random

from PIL import Image, ImageDraw

CANVAS = {canvas!r}
DEFAULT_SEED = {seed!r}
PALETTE = {palette!r}
LOW, HIGH = {low!r}, {high!r}
MAX_MARKS = 20000


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--seed", type=int, default=DEFAULT_SEED)
    parser.add_argument("--density", type=float, default=0.5)
    parser.add_argument("--out", required=True)
    args = parser.parse_args()
    rng = random.Random(args.seed)
    target = LOW + (HIGH - LOW) * (0.15 + 0.7 * min(1.0, max(0.0, args.density)))
    width, height = CANVAS
    image = Image.new("RGB", CANVAS, PALETTE[0])
    draw = ImageDraw.Draw(image)
    inks = PALETTE[1:]
    unit = max(4, min(width, height) // 24)
    covered = 0.0
    for drawn in range(MAX_MARKS):
        if covered >= target:
            break
        x, y = rng.randrange(width), rng.randrange(height)
        size = rng.randrange(unit // 2, unit * 2)
        ink = inks[drawn % len(inks)] if drawn < len(inks) else rng.choice(inks)
        if rng.random() < 0.6:
            draw.ellipse([x - size, y - size, x + size, y + size], fill=ink)
        else:
            draw.rectangle([x - size * 2, y - size // 3, x + size * 2, y + size // 3], fill=ink)
        if drawn % 8 == 7:
            counts = dict((color, count) for count, color in image.getcolors(len(PALETTE) + 1))
            covered = 1 - counts.get(tuple(int(PALETTE[0][i:i + 2], 16) for i in (1, 3, 5)), 0) / (width * height)
    image.save(args.out, format="PNG")


if __name__ == "__main__":
    main()
'''

os.makedirs("art", exist_ok=True)
with open("art/sketch.py", "w", encoding="utf-8") as handle:
    handle.write(SKETCH.format(canvas=tuple(BRIEF["canvas"]), seed=BRIEF["default_seed"], palette=BRIEF["palette"],
                               low=BRIEF["coverage"][0], high=BRIEF["coverage"][1]))
os.makedirs("out/gallery", exist_ok=True)
for seed in BRIEF["gallery"]:
    subprocess.run([sys.executable, "art/sketch.py", "--seed", str(seed), "--out", f"out/gallery/seed-{seed}.png"],
                   check=True)
if "sheet" in BRIEF:
    spec = BRIEF["sheet"]
    columns, (cw, ch), pad = spec["columns"], spec["cell"], spec["padding"]
    rows = (len(BRIEF["gallery"]) + columns - 1) // columns
    sheet = Image.new("RGB", (columns * cw + (columns + 1) * pad, rows * ch + (rows + 1) * pad), BRIEF["background"])
    for index, seed in enumerate(BRIEF["gallery"]):
        tile = Image.open(f"out/gallery/seed-{seed}.png").convert("RGB")
        tile.thumbnail((cw, ch), Image.LANCZOS)
        sheet.paste(tile, (pad + (index % columns) * (cw + pad) + (cw - tile.width) // 2,
                           pad + (index // columns) * (ch + pad) + (ch - tile.height) // 2))
    sheet.save(spec["file"], "PNG")
print(f"rendered {len(BRIEF['gallery'])} seeds at {BRIEF['canvas']}")
