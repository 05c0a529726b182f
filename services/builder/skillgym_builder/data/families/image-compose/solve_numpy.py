# --- the photo batch with numpy arrays: sizes computed by hand, bicubic resizes, array composition ---
import json
import os
import sys

import numpy as np
from PIL import Image

TASK = json.loads(sys.argv[1])
with open(TASK["spec"], encoding="utf-8") as handle:
    SPEC = json.load(handle)


def as_array(image):
    """RGB array with any transparency composited onto white."""
    rgba = np.asarray(image.convert("RGBA"), dtype=np.float64)
    alpha = rgba[..., 3:4] / 255.0
    return np.round(rgba[..., :3] * alpha + 255.0 * (1 - alpha)).astype(np.uint8)


def fitted(array, box):
    height, width = array.shape[:2]
    scale = min(box[0] / width, box[1] / height, 1.0)
    size = (max(1, round(width * scale)), max(1, round(height * scale)))
    return np.asarray(Image.fromarray(array).resize(size, Image.BICUBIC))


thumbs, skipped = {}, []
os.makedirs("out/thumbs", exist_ok=True)
for name in sorted(os.listdir("photos")):
    path = os.path.join("photos", name)
    if not os.path.isfile(path) or not name.lower().endswith((".png", ".jpg", ".jpeg")):
        continue
    try:
        image = Image.open(path)
        image.load()
    except Exception:
        skipped.append(path)
        continue
    stem = os.path.splitext(name)[0]
    thumbs[stem] = fitted(as_array(image), SPEC["thumbnails"]["box"])
    Image.fromarray(thumbs[stem]).save(f"out/thumbs/{stem}.jpg", quality=95)
report = {"thumbnails": {s: [a.shape[1], a.shape[0]] for s, a in thumbs.items()}, "skipped": skipped}

if "contact_sheet" in SPEC:
    spec = SPEC["contact_sheet"]
    columns, (cw, ch), pad = spec["columns"], spec["cell"], spec["padding"]
    rows = -(-len(thumbs) // columns)
    color = [int(spec["background"][i:i + 2], 16) for i in (1, 3, 5)]
    grid = np.empty((rows * ch + (rows + 1) * pad, columns * cw + (columns + 1) * pad, 3), dtype=np.uint8)
    grid[:] = color
    for index, stem in enumerate(sorted(thumbs)):
        tile = thumbs[stem]
        top = pad + (index // columns) * (ch + pad) + (ch - tile.shape[0]) // 2
        left = pad + (index % columns) * (cw + pad) + (cw - tile.shape[1]) // 2
        grid[top:top + tile.shape[0], left:left + tile.shape[1]] = tile
    Image.fromarray(grid).save(spec["file"])

if "frames" in SPEC:
    os.makedirs("out/frames", exist_ok=True)
    animation = Image.open(SPEC["frames"]["source"])
    durations = []
    for index in range(getattr(animation, "n_frames", 1)):
        animation.seek(index)
        durations.append(animation.info.get("duration"))
        Image.fromarray(np.asarray(animation.convert("RGB"))).save(f"out/frames/frame_{index + 1:03d}.png")
    report["frames"] = {"count": len(durations), "durations_ms": durations}

with open("out/report.json", "w", encoding="utf-8") as handle:
    json.dump(report, handle)
