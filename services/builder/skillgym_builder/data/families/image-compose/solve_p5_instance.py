# --- a p5.js page in instance mode: noise-steered walkers paint a grid; gallery rendered in Chromium ---
import json
import os
import sys

from artfacts import load_brief
from p5kit import render_gallery

TASK = json.loads(sys.argv[1])
BRIEF = load_brief(TASK)
CONFIG = {"canvas": BRIEF["canvas"], "palette": BRIEF["palette"], "low": BRIEF["coverage"][0],
          "high": BRIEF["coverage"][1], "seed": BRIEF["default_seed"]}

PAGE = """<!DOCTYPE html>
<html>
<head>
<meta charset="utf-8">
<title>Walkers</title>
<script src="../lib/p5.min.js"></script>
</head>
<body style="margin:0">
<main id="art"></main>
<script>
const CONFIG = __CONFIG__;
const search = new URLSearchParams(window.location.search);
const seed = Number.parseInt(search.get("seed") ?? String(CONFIG.seed), 10);
const density = Number.parseFloat(search.get("density") ?? "0.5");

new p5((p) => {
  p.setup = () => {
    p.pixelDensity(1);
    p.createCanvas(CONFIG.canvas[0], CONFIG.canvas[1]);
    p.noLoop();
  };
  p.draw = () => {
    p.randomSeed(seed);
    p.noiseSeed(seed);
    p.background(CONFIG.palette[0]);
    p.noStroke();
    const cell = Math.max(4, Math.floor(Math.min(p.width, p.height) / 32));
    const cols = Math.ceil(p.width / cell), rows = Math.ceil(p.height / cell);
    const painted = new Set();
    let area = 0;
    const goal = (CONFIG.low + (CONFIG.high - CONFIG.low) * (0.2 + 0.6 * Math.min(1, Math.max(0, density)))) * p.width * p.height;
    const inks = CONFIG.palette.slice(1);
    for (let walker = 0; area < goal && walker < 4000; walker++) {
      let c = Math.floor(p.random(cols)), r = Math.floor(p.random(rows));
      p.fill(inks[walker % inks.length]);
      for (let step = 0; step < 40 && area < goal; step++) {
        p.rect(c * cell, r * cell, cell, cell);
        const key = r * cols + c;
        if (!painted.has(key)) {
          painted.add(key);
          area += Math.min(cell, p.width - c * cell) * Math.min(cell, p.height - r * cell);
        }
        const turn = Math.floor(p.noise(c * 0.1, r * 0.1, walker * 0.01) * 4);
        c = (c + [1, 0, -1, 0][turn] + cols) % cols;
        r = (r + [0, 1, 0, -1][turn] + rows) % rows;
      }
    }
  };
}, document.getElementById("art"));
</script>
</body>
</html>
"""

os.makedirs("art", exist_ok=True)
with open("art/piece.html", "w", encoding="utf-8") as handle:
    handle.write(PAGE.replace("__CONFIG__", json.dumps(CONFIG)))
render_gallery("art/piece.html", BRIEF)
print(f"rendered {len(BRIEF['gallery'])} seeds")
