# --- write a seeded p5.js page (global mode), render the gallery with headless Chromium ---
import json
import os
import sys

from artfacts import load_brief
from p5kit import render_gallery

TASK = json.loads(sys.argv[1])
BRIEF = load_brief(TASK)

PAGE = """<!DOCTYPE html>
<html>
<head>
<meta charset="utf-8">
<title>Drift of cells</title>
<script src="../lib/p5.min.js"></script>
<style>
  body { margin: 0; display: flex; gap: 16px; font-family: sans-serif; background: #faf9f5; }
  #sidebar { width: 220px; padding: 12px; }
</style>
</head>
<body>
<div id="canvas-container"></div>
<div id="sidebar">
  <h3>Seed</h3>
  <div id="seed-display"></div>
  <button onclick="jump(params.seed - 1)">Previous</button>
  <button onclick="jump(params.seed + 1)">Next</button>
  <button onclick="jump(Math.floor(Math.random() * 100000))">Random</button>
  <input id="seed-input" type="number"><button onclick="jump(parseInt(document.getElementById('seed-input').value, 10))">Go</button>
  <h3>Parameters</h3>
  <label>Density <input type="range" min="0" max="1" step="0.05" oninput="params.density = parseFloat(this.value); redraw()"></label>
</div>
<script>
// Cells of the palette settle on a calm ground until they cover the share the density asks for.
const CANVAS = __CANVAS__;
const PALETTE = __PALETTE__;
const LOW = __LOW__, HIGH = __HIGH__;
const query = new URLSearchParams(location.search);
let params = {
  seed: query.has("seed") ? parseInt(query.get("seed"), 10) : __SEED__,
  density: query.has("density") ? parseFloat(query.get("density")) : 0.5,
};

function jump(seed) { params.seed = seed; redraw(); }

function setup() {
  pixelDensity(1);
  createCanvas(CANVAS[0], CANVAS[1]).parent("canvas-container");
  noStroke();
  noLoop();
}

function draw() {
  randomSeed(params.seed);
  noiseSeed(params.seed);
  document.getElementById("seed-display").textContent = params.seed;
  background(PALETTE[0]);
  const unit = max(4, floor(min(width, height) / 24));
  const cols = ceil(width / unit), rows = ceil(height / unit);
  const covered = new Uint8Array(cols * rows);
  const target = LOW + (HIGH - LOW) * (0.15 + 0.7 * constrain(params.density, 0, 1));
  const inks = PALETTE.slice(1);
  let area = 0;
  for (let mark = 0; area / (width * height) < target && mark < 50000; mark++) {
    const c = floor(random(cols)), r = floor(random(rows));
    const span = 1 + floor(noise(c * 0.15, r * 0.15) * 4);
    fill(mark < inks.length ? inks[mark] : random(inks));
    rect(c * unit, r * unit, span * unit, unit);
    for (let k = c; k < min(cols, c + span); k++) {
      if (!covered[r * cols + k]) {
        covered[r * cols + k] = 1;
        area += min(unit, width - k * unit) * min(unit, height - r * unit);
      }
    }
  }
}
</script>
</body>
</html>
"""

os.makedirs("art", exist_ok=True)
with open("art/piece.html", "w", encoding="utf-8") as handle:
    handle.write(PAGE.replace("__CANVAS__", json.dumps(BRIEF["canvas"])).replace("__PALETTE__", json.dumps(BRIEF["palette"]))
                 .replace("__LOW__", repr(BRIEF["coverage"][0])).replace("__HIGH__", repr(BRIEF["coverage"][1]))
                 .replace("__SEED__", str(BRIEF["default_seed"])))
render_gallery("art/piece.html", BRIEF)
print(f"rendered {len(BRIEF['gallery'])} seeds at {BRIEF['canvas']}")
