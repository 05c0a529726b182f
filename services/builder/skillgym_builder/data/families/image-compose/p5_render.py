"""Rendering the solver's p5.js page for the image-compose verifier. The page is copied into a
fresh folder beside the verifier's own copy of p5.js, with a probe inserted right after the
p5.js script, and opened in headless Chromium without the verifier's rights (run_untrusted).
The probe records the values given to p5's randomSeed and noiseSeed (global and instance mode
both go through p5's prototype) and, once the sketch has drawn, writes the canvas as a data URL
into the document under an id only this run knows, which p5_browser.py reads back. All the
openings of one check share one confined Chromium, each in a browser context of its own."""

import base64
import hashlib
import json
import os
import re
import secrets
import shutil
import tempfile

from checks import app_path, run_untrusted

PAGE = "art/piece.html"
MAX_PAGE_BYTES = 2 * 1024 * 1024
P5_TAG = re.compile(r"""<script\b[^>]*\bsrc\s*=\s*["']\.\./lib/p5\.min\.js["'][^>]*>\s*</script>""", re.I)
SCRIPT_SRC = re.compile(r"<script\b[^>]*\bsrc\s*=", re.I)
PNG_URL = "data:image/png;base64,"
PROBE = """<script>
(function () {
  const seeds = [];
  for (const name of ["randomSeed", "noiseSeed"]) {
    const original = p5.prototype[name];
    p5.prototype[name] = function (value) { seeds.push([name, Number(value)]); return original.apply(this, arguments); };
  }
  addEventListener("load", () => setTimeout(() => {
    const canvases = document.querySelectorAll("canvas");
    const drawn = document.querySelector("canvas.p5Canvas");
    const out = document.createElement("pre");
    out.id = "__ID__";
    out.textContent = JSON.stringify({seeds, canvases: canvases.length, canvas: drawn ? drawn.toDataURL("image/png") : null});
    document.documentElement.appendChild(out);
  }, 3000));
})();
</script>"""
def page_text():
    """The solver's page, if it is one the checker can open: a regular file under the size limit
    that loads p5.js once, from the task's copy, and no other script file."""
    path = app_path(PAGE)
    if os.path.islink(path) or not os.path.isfile(path) or os.path.getsize(path) > MAX_PAGE_BYTES:
        raise ValueError(f"{PAGE}: missing, not a regular file, or too large")
    with open(path, encoding="utf-8", errors="replace") as handle:
        text = handle.read()
    if len(P5_TAG.findall(text)) != 1 or len(SCRIPT_SRC.findall(text)) != 1:
        raise ValueError(f"{PAGE} must load p5.js once, from ../lib/p5.min.js, and no other script file")
    return text


def library(rel, sha256):
    """The task's p5.js, as the task shipped it."""
    with open(app_path(rel), "rb") as handle:
        data = handle.read()
    if hashlib.sha256(data).hexdigest() != sha256:
        raise ValueError(f"{rel} is not the p5.js the task shipped")
    return data


def _page_copy(text, p5_bytes, token, work):
    """A fresh folder with the page (the probe inserted after p5.js) beside the verifier's p5.js."""
    root = tempfile.mkdtemp(prefix="page-", dir=work)
    os.makedirs(os.path.join(root, "art"))
    os.makedirs(os.path.join(root, "lib"))
    with open(os.path.join(root, "lib", "p5.min.js"), "wb") as handle:
        handle.write(p5_bytes)
    probe = PROBE.replace("__ID__", token)
    with open(os.path.join(root, "art", "piece.html"), "w", encoding="utf-8") as handle:
        handle.write(P5_TAG.sub(lambda m: m.group(0) + probe, text, count=1))
    return root


def _drawing(query, state_text):
    if state_text is None:
        print(f"no drawing for ?{query}")
        return None
    try:
        state = json.loads(state_text)
        canvas = state.get("canvas") or ""
        seeds, canvases = state["seeds"], state["canvases"]
    except (ValueError, TypeError, KeyError, AttributeError):
        print(f"an unreadable probe record for ?{query}")
        return None
    if not isinstance(seeds, list) or not isinstance(canvases, int):
        print(f"an unreadable probe record for ?{query}")
        return None
    if not isinstance(canvas, str) or not canvas.startswith(PNG_URL):
        print(f"no p5 canvas for ?{query}")
        return None
    return {"png": base64.b64decode(canvas[len(PNG_URL):]), "seeds": seeds, "canvases": canvases}


def render_pages(text, p5_bytes, queries, work):
    """``{"png", "seeds", "canvases"}`` (None when it drew nothing) for the page opened with each
    ``?query``: every opening in a fresh copy of the page and a browser context of its own, all in
    one confined Chromium."""
    jobs = []
    for query in queries:
        token = secrets.token_hex(12)
        root = _page_copy(text, p5_bytes, token, work)
        jobs.append({"url": f"file://{root}/art/piece.html" + (f"?{query}" if query else ""), "token": token})
    batch = tempfile.mkdtemp(prefix="browser-", dir=work)
    driver = os.path.join(batch, "p5_browser.py")
    shutil.copyfile(os.path.join(os.path.dirname(os.path.abspath(__file__)), "p5_browser.py"), driver)
    with open(os.path.join(batch, "jobs.json"), "w", encoding="utf-8") as handle:
        json.dump(jobs, handle)
    profile = os.path.join(batch, "profile")
    os.makedirs(profile)
    done = run_untrusted(["python3", driver, os.path.join(batch, "jobs.json"), profile],
                         timeout=30 + 20 * len(jobs), writable=("/tmp",))
    texts = {}
    for line in done.stdout.splitlines():
        try:
            record = json.loads(line)
            texts[record["token"]] = record["text"]
        except (ValueError, TypeError, KeyError):
            continue
    if done.returncode != 0 or len(texts) < len(jobs):
        print(f"Chromium: exit {done.returncode}: {done.stderr.strip()[-300:]}")
    return [_drawing(query, texts.get(job["token"])) for query, job in zip(queries, jobs, strict=True)]
