"""Verifier for image-compose. Processing: thumbnails, contact sheet and GIF frames recomputed
with Pillow from the protected inputs and compared with tolerances; the report exact. Generative:
the agent's sketch runs confined (run_untrusted) with hidden seeds: byte-identical reruns,
seed-dependent, exact palette, coverage window, default seed, density, and the gallery it wrote.
A p5.js page (the medium of skills written for p5.js) is opened in Chromium instead, confined the
same way (p5_render.py), and must also seed p5's generators with the seed it is given."""

import io
import json
import os
import secrets
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import numpy as np
from checks import app_path, load_expected, run, run_untrusted
from PIL import Image, ImageSequence

E = load_expected()
MAX_BYTES = 32 * 1024 * 1024
Image.MAX_IMAGE_PIXELS = 4096 * 4096


def read_bytes(path):
    if os.path.islink(path) or not os.path.isfile(path) or os.path.getsize(path) > MAX_BYTES:
        raise ValueError(f"{path}: missing, not a regular file, or too large")
    with open(path, "rb") as handle:
        return handle.read(MAX_BYTES)


def load(path):
    image = Image.open(io.BytesIO(read_bytes(path)))
    image.load()
    return image


def rgb(image, background=(255, 255, 255)):
    """``image`` as RGB, transparency flattened onto ``background``."""
    if image.mode == "P" and "transparency" in image.info:
        image = image.convert("RGBA")
    if image.mode in ("RGBA", "LA", "PA"):
        image = image.convert("RGBA")
        flat = Image.new("RGB", image.size, background)
        flat.paste(image, mask=image.getchannel("A"))
        return flat
    return image.convert("RGB")


def difference(mine, want):
    """Mean absolute difference per channel (0-255) after bringing ``want`` to ``mine``'s size."""
    if want.size != mine.size:
        want = want.resize(mine.size, Image.LANCZOS)
    return float(np.abs(np.asarray(mine, dtype=np.int16) - np.asarray(want, dtype=np.int16)).mean())


def fit(image, box):
    copy = image.copy()
    copy.thumbnail(tuple(box), Image.LANCZOS)
    return copy


def sheet(images, columns, cell, padding, background):
    rows = (len(images) + columns - 1) // columns
    size = (columns * cell[0] + (columns + 1) * padding, rows * cell[1] + (rows + 1) * padding)
    canvas = Image.new("RGB", size, background)
    for index, image in enumerate(images):
        small = fit(image, cell)
        x = padding + (index % columns) * (cell[0] + padding) + (cell[0] - small.width) // 2
        y = padding + (index // columns) * (cell[1] + padding) + (cell[1] - small.height) // 2
        canvas.paste(small, (x, y))
    return canvas


def hex_rgb(value):
    return tuple(int(value[i:i + 2], 16) for i in (1, 3, 5))


# --- processing ---

def stem(rel):
    return os.path.splitext(os.path.basename(rel))[0]


EXPECTED_THUMBS = {}


def expected_thumbs():
    if not EXPECTED_THUMBS:
        box = E["spec"]["thumbnails"]["box"]
        for rel in E["photos"]:
            if rel not in E["unreadable"]:
                EXPECTED_THUMBS[stem(rel)] = fit(rgb(load(app_path(rel))), box)
    return EXPECTED_THUMBS


def thumbnails_ok():
    right = 0
    wanted = expected_thumbs()
    written = sorted(os.listdir(app_path("out/thumbs"))) if os.path.isdir(app_path("out/thumbs")) else []
    if written != sorted(f"{name}.jpg" for name in wanted):
        print(f"out/thumbs holds {written}")
        return 0.0
    for name, want in wanted.items():
        try:
            mine = load(app_path(f"out/thumbs/{name}.jpg"))
            ok = (mine.format == "JPEG" and mine.mode == "RGB" and abs(mine.width - want.width) <= 1
                  and abs(mine.height - want.height) <= 1 and difference(mine, want) <= 12)
        except Exception as exc:  # an unreadable output fails this image only
            print(f"{name}: {exc}")
            ok = False
        if not ok:
            print(f"out/thumbs/{name}.jpg differs from the expected thumbnail {want.size}")
        right += ok
    return right / len(wanted)


def frames_expected():
    source = load(app_path(E["spec"]["frames"]["source"]))
    frames = [frame.convert("RGB") for frame in ImageSequence.Iterator(source)]
    durations = [frame.info.get("duration") for frame in ImageSequence.Iterator(load(app_path(E["spec"]["frames"]["source"])))]
    return frames, durations


def frames_ok():
    frames, _ = frames_expected()
    folder = app_path("out/frames")
    names = sorted(os.listdir(folder)) if os.path.isdir(folder) else []
    if names != [f"frame_{i + 1:03d}.png" for i in range(len(frames))]:
        print(f"out/frames holds {names[:5]}... for {len(frames)} frames")
        return 0.0
    right = 0
    for index, want in enumerate(frames):
        mine = load(os.path.join(folder, names[index]))
        right += mine.format == "PNG" and mine.mode == "RGB" and mine.size == want.size and difference(mine, want) <= 2
    return right / len(frames)


def images():
    parts = [thumbnails_ok()] + ([frames_ok()] if "frames" in E["spec"] else [])
    return sum(parts) / len(parts)


def report():
    mine = json.loads(read_bytes(app_path("out/report.json")))
    wanted = expected_thumbs()
    sizes = {name: list(load(app_path(f"out/thumbs/{name}.jpg")).size) for name in wanted}
    checks = [mine["thumbnails"] == sizes, sorted(mine["skipped"]) == sorted(E["unreadable"])]
    if "frames" in E["spec"]:
        frames, durations = frames_expected()
        checks.append(mine["frames"] == {"count": len(frames), "durations_ms": durations})
    return all(checks)


def composition():
    spec = E["spec"]["contact_sheet"]
    wanted = expected_thumbs()
    want = sheet([wanted[name] for name in sorted(wanted)], spec["columns"], spec["cell"], spec["padding"],
                 hex_rgb(spec["background"]))
    mine = load(app_path(spec["file"]))
    print(f"contact sheet {mine.size} (want {want.size})")
    return mine.format == "PNG" and mine.mode == "RGB" and mine.size == want.size and difference(mine, want) <= 12


# --- generative ---

WORK = tempfile.mkdtemp(prefix="art-check-")
os.chmod(WORK, 0o777)
RUNS = {}
SEEDED = {}  # p5.js medium: run -> one p5 canvas, drawn with the run's seed given to randomSeed or noiseSeed
# Renderings share one confined process (a Python start with Pillow and numpy costs about a second);
# the repeat of the first hidden seed runs in a process of its own, so state that differs between
# processes (hash order, the clock, leftovers in /tmp) shows up as a different file.
BATCH = """import json, os, runpy, signal, sys, traceback
sys.path.insert(0, os.path.abspath("art"))


def expire(signum, frame):
    raise TimeoutError("the sketch ran past its time limit")


signal.signal(signal.SIGALRM, expire)
for job in json.load(open(sys.argv[1])):
    sys.argv = ["art/sketch.py", *job["args"]]
    signal.alarm(20)
    try:
        runpy.run_path("art/sketch.py", run_name="__main__")
    except SystemExit as exc:
        if exc.code not in (None, 0):
            print(job["args"], "exit", exc.code, file=sys.stderr)
    except TimeoutError:
        print(job["args"], "timed out; the remaining renderings are skipped", file=sys.stderr)
        break
    except BaseException:
        traceback.print_exc(limit=3)
    finally:
        signal.alarm(0)
"""


def wanted_runs():
    runs = [(s, None, "") for s in E["hidden"]] + [(None, None, ""), (E["default_seed"], None, "")]
    if E.get("density"):
        runs += [(E["hidden"][0], 0.2, ""), (E["hidden"][0], 0.8, "")]
    seeds = E["gallery"][:2] + E["gallery"][-2:]
    return list(dict.fromkeys(runs + [(s, None, "") for s in seeds]))


def arguments(seed, density, out):
    return ["--out", out] + (["--seed", str(seed)] if seed is not None else []) + (
        ["--density", str(density)] if density is not None else [])


def collect(key, out):
    try:
        RUNS[key] = read_bytes(out)
    except ValueError:
        RUNS[key] = None


def render_all():
    jobs = []
    for index, (seed, density, _) in enumerate(wanted_runs()):
        jobs.append({"args": arguments(seed, density, os.path.join(WORK, f"run-{index}-{secrets.token_hex(6)}.png"))})
    with open(os.path.join(WORK, "jobs.json"), "w", encoding="utf-8") as handle:
        json.dump(jobs, handle)
    with open(os.path.join(WORK, "batch.py"), "w", encoding="utf-8") as handle:
        handle.write(BATCH)
    done = run_untrusted(["python3", os.path.join(WORK, "batch.py"), os.path.join(WORK, "jobs.json")],
                         timeout=min(200, 25 * len(jobs)), writable=("/tmp",))
    print(done.stderr.strip()[-600:])
    for key, job in zip(wanted_runs(), jobs, strict=True):
        collect(key, job["args"][1])
    again = os.path.join(WORK, f"again-{secrets.token_hex(6)}.png")
    run_untrusted(["python3", "art/sketch.py", *arguments(E["hidden"][0], None, again)], timeout=25,
                  writable=("/tmp",))
    collect((E["hidden"][0], None, "again"), again)


def render_page_all():
    """The p5.js medium: the solver's page opened in Chromium once per wanted run; the repeat of
    the first hidden seed in a browser of its own, as the Python medium's repeat is a process of
    its own."""
    from p5_render import library, page_text, render_pages

    text, p5_bytes = page_text(), library(E["library"]["path"], E["library"]["sha256"])
    runs = wanted_runs()
    again = (E["hidden"][0], None, "again")

    def query(seed, density):
        return "&".join([*([f"seed={seed}"] if seed is not None else []),
                         *([f"density={density}"] if density is not None else [])])

    drawings = render_pages(text, p5_bytes, [query(seed, density) for seed, density, _ in runs], WORK)
    drawings += render_pages(text, p5_bytes, [query(again[0], None)], WORK)
    for (seed, density, tag), drawn in zip([*runs, again], drawings, strict=True):
        RUNS[(seed, density, tag)] = drawn["png"] if drawn else None
        want = E["default_seed"] if seed is None else seed
        SEEDED[(seed, density, tag)] = bool(drawn) and drawn["canvases"] == 1 and any(
            isinstance(pair, list) and len(pair) == 2 and pair[1] == want for pair in drawn["seeds"])


def render(seed, density=None, tag=""):
    """Bytes the sketch wrote for ``seed`` (None: no --seed); None when it failed."""
    if not RUNS:
        render_page_all() if E.get("medium") == "p5" else render_all()
    return RUNS.get((seed, density, tag))


def decode(data):
    image = Image.open(io.BytesIO(data))
    image.load()
    return image


def coverage(image):
    pixels = np.asarray(image.convert("RGB"))
    return float((pixels != np.array(hex_rgb(E["background"]), dtype=pixels.dtype)).any(axis=2).mean())


def on_brief(data):
    image = decode(data)
    if image.format != "PNG" or list(image.size) != E["canvas"]:
        print(f"image {image.format} {image.size} (want PNG {E['canvas']})")
        return False
    pixels = np.asarray(image.convert("RGB")).reshape(-1, 3)
    colors = {tuple(int(v) for v in c) for c in np.unique(pixels, axis=0)}
    palette = {hex_rgb(c) for c in E["palette"]}
    share = coverage(image)
    ok = colors <= palette and len(colors) >= E["min_colors"] and E["coverage"][0] <= share <= E["coverage"][1]
    if not ok:
        print(f"{len(colors - palette)} colours off the palette, {len(colors)} used, coverage {share:.3f}")
    return ok


def changed_share(a, b):
    a, b = (decode(x) if isinstance(x, bytes) else x for x in (a, b))
    return float((np.asarray(a.convert("RGB")) != np.asarray(b.convert("RGB"))).any(axis=2).mean())


def reproducible():
    first = E["hidden"][0]
    again = render(first, tag="again")
    runs = [render(s) for s in E["hidden"]]
    if None in runs or again is None or again != runs[0]:
        print("the same seed did not give the same bytes")
        return 0.0
    if E.get("medium") == "p5" and not all(SEEDED.get(key) for key in [(s, None, "") for s in E["hidden"]]
                                           + [(None, None, "")]):
        print("the page did not seed p5's generators with the seed it was given, on one p5 canvas")
        return 0.0
    distinct = all(changed_share(a, b) >= 0.05 for i, a in enumerate(runs) for b in runs[i + 1:])
    default = render(None)
    return (distinct + (default is not None and default == render(E["default_seed"]))) / 2


def constraints():
    runs = [render(s) for s in [*E["hidden"], E["default_seed"]]]
    met = [data is not None and on_brief(data) for data in runs]
    if E.get("density"):
        low, high = render(E["hidden"][0], 0.2), render(E["hidden"][0], 0.8)
        met.append(low is not None and high is not None and coverage(decode(high)) >= coverage(decode(low)) + 0.1)
    return sum(met) / len(met)


def gallery():
    """The gallery on the brief; the first and last two seeds rerun (each rerun costs seconds)."""
    right, images = 0, []
    rerun_seeds = set(E["gallery"][:2] + E["gallery"][-2:])
    for seed in E["gallery"]:
        mine = read_bytes(app_path(f"out/gallery/seed-{seed}.png"))
        same = True
        if seed in rerun_seeds:
            rerun = render(seed)
            same = rerun is not None and np.array_equal(np.asarray(decode(mine).convert("RGB")),
                                                        np.asarray(decode(rerun).convert("RGB")))
        right += same and on_brief(mine)
        images.append(decode(mine).convert("RGB"))
    if any(changed_share(a, b) < 0.05 for i, a in enumerate(images) for b in images[i + 1:]):
        print("two gallery images are nearly the same")
        return 0.0
    score = right / len(E["gallery"])
    if "sheet" in E:
        spec = E["sheet"]
        want = sheet(images, spec["columns"], spec["cell"], spec["padding"], hex_rgb(E["background"]))
        mine = load(app_path(spec["file"]))
        score *= mine.format == "PNG" and mine.mode == "RGB" and mine.size == want.size and difference(mine, want) <= 12
    return score


if E["kind"] == "processing":
    checks = [("images", images), ("report", report)]
    if "contact_sheet" in E["spec"]:
        checks.append(("composition", composition))
else:
    checks = [("reproducible", reproducible), ("constraints", constraints), ("gallery", gallery)]
run(checks)
