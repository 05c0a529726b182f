# --- the photo batch with Pillow: thumbnails, contact sheet, GIF frames, report ---
import json
import os
import sys

from PIL import Image, ImageSequence

TASK = json.loads(sys.argv[1])
with open(TASK["spec"], encoding="utf-8") as handle:
    SPEC = json.load(handle)


def flat(image):
    if image.mode == "P" and "transparency" in image.info:
        image = image.convert("RGBA")
    if image.mode in ("RGBA", "LA", "PA"):
        image = image.convert("RGBA")
        background = Image.new("RGB", image.size, (255, 255, 255))
        background.paste(image, mask=image.getchannel("A"))
        return background
    return image.convert("RGB")


thumbs, skipped, report = {}, [], {}
os.makedirs("out/thumbs", exist_ok=True)
for name in sorted(os.listdir("photos")):
    path = os.path.join("photos", name)
    if not os.path.isfile(path):
        continue
    try:
        with Image.open(path) as image:
            image.load()
            picture = flat(image)
    except Exception as exc:
        if name.lower().endswith((".png", ".jpg", ".jpeg", ".gif")):
            skipped.append(path)
            print(f"skipping {path}: {exc}")
        continue
    picture.thumbnail(tuple(SPEC["thumbnails"]["box"]), Image.LANCZOS)
    stem = os.path.splitext(name)[0]
    picture.save(f"out/thumbs/{stem}.jpg", "JPEG", quality=92)
    thumbs[stem] = picture
report["thumbnails"] = {stem: list(image.size) for stem, image in thumbs.items()}
report["skipped"] = skipped

if "contact_sheet" in SPEC:
    spec = SPEC["contact_sheet"]
    columns, (cw, ch), pad = spec["columns"], spec["cell"], spec["padding"]
    rows = (len(thumbs) + columns - 1) // columns
    sheet = Image.new("RGB", (columns * cw + (columns + 1) * pad, rows * ch + (rows + 1) * pad), spec["background"])
    for index, stem in enumerate(sorted(thumbs)):
        image = thumbs[stem]
        x = pad + (index % columns) * (cw + pad) + (cw - image.width) // 2
        y = pad + (index // columns) * (ch + pad) + (ch - image.height) // 2
        sheet.paste(image, (x, y))
    sheet.save(spec["file"], "PNG")

if "frames" in SPEC:
    os.makedirs("out/frames", exist_ok=True)
    durations = []
    with Image.open(SPEC["frames"]["source"]) as animation:
        for index, frame in enumerate(ImageSequence.Iterator(animation)):
            durations.append(frame.info.get("duration"))
            frame.convert("RGB").save(f"out/frames/frame_{index + 1:03d}.png", "PNG")
    report["frames"] = {"count": len(durations), "durations_ms": durations}

with open("out/report.json", "w", encoding="utf-8") as handle:
    json.dump(report, handle, indent=2)
print(f"{len(thumbs)} thumbnails, {len(skipped)} skipped")
