"""Rendering a p5.js page's canvas to a PNG with headless Chromium (a copy of the page gets a
short script that, once the sketch has drawn, writes the canvas as a data URL into the document,
which Chromium prints with --dump-dom), and a contact sheet of rendered images."""

import base64
import html
import os
import re
import subprocess
import tempfile

from PIL import Image

DUMP = """<script>
addEventListener("load", () => setTimeout(() => {
  const canvas = document.querySelector("canvas");
  const out = document.createElement("pre");
  out.id = "canvas-dump";
  out.textContent = canvas ? canvas.toDataURL("image/png") : "";
  document.body.appendChild(out);
}, 2000));
</script>
"""


def render(page, out, query=""):
    """Write the canvas ``page`` draws (opened with ``?query``) to ``out`` as a PNG."""
    with open(page, encoding="utf-8") as handle:
        text = handle.read()
    copy = os.path.join(os.path.dirname(os.path.abspath(page)), f".render-{os.getpid()}.html")
    with open(copy, "w", encoding="utf-8") as handle:
        handle.write(text.replace("</body>", DUMP + "</body>", 1))
    try:
        with tempfile.TemporaryDirectory() as profile:
            done = subprocess.run(
                ["chromium", "--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                 "--no-first-run", f"--user-data-dir={profile}", "--virtual-time-budget=6000", "--dump-dom",
                 f"file://{copy}" + (f"?{query}" if query else "")],
                capture_output=True, text=True, timeout=120, env={**os.environ, "HOME": profile})
    finally:
        os.remove(copy)
    found = re.search(r'<pre id="canvas-dump">data:image/png;base64,([^<]+)</pre>', done.stdout)
    if not found:
        raise SystemExit(f"no canvas from {page}?{query}: {done.stderr.strip()[-400:]}")
    with open(out, "wb") as handle:
        handle.write(base64.b64decode(html.unescape(found.group(1))))


def contact_sheet(files, spec, background):
    """The images in order on a grid: each scaled to fit and centred in its cell."""
    columns, (cw, ch), pad = spec["columns"], spec["cell"], spec["padding"]
    rows = (len(files) + columns - 1) // columns
    sheet = Image.new("RGB", (columns * cw + (columns + 1) * pad, rows * ch + (rows + 1) * pad), background)
    for index, path in enumerate(files):
        tile = Image.open(path).convert("RGB")
        tile.thumbnail((cw, ch), Image.LANCZOS)
        sheet.paste(tile, (pad + (index % columns) * (cw + pad) + (cw - tile.width) // 2,
                           pad + (index // columns) * (ch + pad) + (ch - tile.height) // 2))
    sheet.save(spec["file"], "PNG")


def render_gallery(page, brief):
    """Every gallery seed's canvas under out/gallery/, and the contact sheet when the brief asks."""
    os.makedirs("out/gallery", exist_ok=True)
    files = [f"out/gallery/seed-{seed}.png" for seed in brief["gallery"]]
    for seed, path in zip(brief["gallery"], files, strict=True):
        render(page, path, f"seed={seed}")
    if "sheet" in brief:
        contact_sheet(files, brief["sheet"], brief["background"])
