# --- a numpy sketch: a seeded mosaic of cells filled until the coverage target, saved with Pillow ---
import json
import os
import subprocess
import sys

import numpy as np
from PIL import Image

TASK = json.loads(sys.argv[1])
with open(TASK["brief"], encoding="utf-8") as handle:
    BRIEF = json.load(handle)
if TASK["skill"]:
    from artfacts import installed_conventions

    BRIEF.update({k: v for k, v in installed_conventions().items() if k != "lines"})

SKETCH = '''"""A seeded mosaic: cells of the palette fill the ground up to a coverage target."""
import argparse

import numpy as np
from PIL import Image

WIDTH, HEIGHT = {canvas!r}
DEFAULT_SEED = {seed!r}
COLORS = np.array({colors!r}, dtype=np.uint8)
LOW, HIGH = {low!r}, {high!r}


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--seed", type=int, default=DEFAULT_SEED)
    parser.add_argument("--density", type=float, default=0.5)
    parser.add_argument("--out", required=True)
    args = parser.parse_args()
    rng = np.random.default_rng(args.seed)
    cell = max(4, min(WIDTH, HEIGHT) // 30)
    rows, cols = -(-HEIGHT // cell), -(-WIDTH // cell)
    target = LOW + (HIGH - LOW) * (0.2 + 0.6 * float(np.clip(args.density, 0, 1)))
    order = rng.permutation(rows * cols)
    inks = rng.integers(1, len(COLORS), size=rows * cols)
    inks[order[: len(COLORS) - 1]] = np.arange(1, len(COLORS))
    canvas = np.zeros((HEIGHT, WIDTH), dtype=np.uint8)
    area = 0
    for index in order:
        if area >= target * WIDTH * HEIGHT:
            break
        r, c = divmod(int(index), cols)
        block = canvas[r * cell:(r + 1) * cell, c * cell:(c + 1) * cell]
        block[:] = inks[index]
        area += block.size
    Image.fromarray(COLORS[canvas]).save(args.out, format="PNG")


if __name__ == "__main__":
    main()
'''

colors = [[int(c[i:i + 2], 16) for i in (1, 3, 5)] for c in BRIEF["palette"]]
os.makedirs("art", exist_ok=True)
with open("art/sketch.py", "w", encoding="utf-8") as handle:
    handle.write(SKETCH.format(canvas=tuple(BRIEF["canvas"]), seed=BRIEF["default_seed"], colors=colors,
                               low=BRIEF["coverage"][0], high=BRIEF["coverage"][1]))
os.makedirs("out/gallery", exist_ok=True)
tiles = []
for seed in BRIEF["gallery"]:
    path = f"out/gallery/seed-{seed}.png"
    subprocess.run([sys.executable, "art/sketch.py", "--seed", str(seed), "--out", path], check=True)
    tiles.append(np.asarray(Image.open(path).convert("RGB")))
if "sheet" in BRIEF:
    spec = BRIEF["sheet"]
    columns, (cw, ch), pad = spec["columns"], spec["cell"], spec["padding"]
    rows = -(-len(tiles) // columns)
    grid = np.empty((rows * ch + (rows + 1) * pad, columns * cw + (columns + 1) * pad, 3), dtype=np.uint8)
    grid[:] = colors[0]
    for index, tile in enumerate(tiles):
        height, width = tile.shape[:2]
        scale = min(cw / width, ch / height, 1.0)
        small = np.asarray(Image.fromarray(tile).resize((max(1, round(width * scale)), max(1, round(height * scale))),
                                                        Image.BICUBIC))
        top = pad + (index // columns) * (ch + pad) + (ch - small.shape[0]) // 2
        left = pad + (index % columns) * (cw + pad) + (cw - small.shape[1]) // 2
        grid[top:top + small.shape[0], left:left + small.shape[1]] = small
    Image.fromarray(grid).save(spec["file"])
