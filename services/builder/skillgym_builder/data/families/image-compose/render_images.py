"""Draws the input images of one image-compose instance with Pillow (run in the sandbox)."""

import io
import json
import os
import random
import sys

from PIL import Image, ImageDraw


def picture(spec):
    rng = random.Random(spec["seed"])
    width, height = spec["size"]
    image = Image.new("RGB", (width, height))
    draw = ImageDraw.Draw(image)
    top, bottom = [tuple(rng.randrange(256) for _ in range(3)) for _ in range(2)]
    for y in range(height):
        t = y / max(1, height - 1)
        draw.line([(0, y), (width, y)], fill=tuple(round(a + (b - a) * t) for a, b in zip(top, bottom, strict=True)))
    for _ in range(spec["blobs"]):
        x, y = rng.randrange(width), rng.randrange(height)
        r = rng.randrange(8, max(9, min(width, height) // 3))
        box = [x - r, y - r, x + r, y + r]
        color = tuple(rng.randrange(256) for _ in range(3))
        (draw.ellipse if rng.random() < 0.5 else draw.rectangle)(box, fill=color)
    mode = spec["mode"]
    if mode == "RGBA":
        alpha = Image.new("L", (width, height), 255)
        ImageDraw.Draw(alpha).rectangle([0, 0, width // 3, height], fill=0)
        image.putalpha(alpha)
    elif mode == "P":
        image = image.quantize(colors=64)
    elif mode == "LA":
        image = image.convert("LA")
    elif mode == "L":
        image = image.convert("L")
    return image


def animation(spec):
    frames = []
    width, height = spec["size"]
    for index, frame in enumerate(spec["frames"]):
        image = Image.new("RGB", (width, height), tuple(frame["background"]))
        draw = ImageDraw.Draw(image)
        x = frame["x"]
        draw.ellipse([x, height // 2 - 12, x + 24, height // 2 + 12], fill=tuple(frame["color"]))
        draw.rectangle([0, height - 6, (index + 1) * width // len(spec["frames"]), height], fill=(30, 30, 30))
        frames.append(image.convert("P", palette=Image.ADAPTIVE, colors=32))
    buffer = io.BytesIO()
    frames[0].save(buffer, format="GIF", save_all=True, append_images=frames[1:], duration=spec["durations"], loop=0,
                   disposal=1)
    return buffer.getvalue()


params_path, out_dir = sys.argv[1], sys.argv[2]
with open(params_path, encoding="utf-8") as handle:
    params = json.load(handle)
outputs = {}
for spec in params["photos"]:
    buffer = io.BytesIO()
    image = picture(spec)
    image.save(buffer, format="JPEG" if spec["file"].endswith(".jpg") else "PNG", **(
        {"quality": 90} if spec["file"].endswith(".jpg") else {}))
    data = buffer.getvalue()
    outputs[spec["file"]] = data[: len(data) * 3 // 5] if spec.get("truncated") else data
if params.get("animation"):
    outputs[params["animation"]["file"]] = animation(params["animation"])
for rel, data in outputs.items():
    path = os.path.join(out_dir, rel)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "wb") as handle:
        handle.write(data)
