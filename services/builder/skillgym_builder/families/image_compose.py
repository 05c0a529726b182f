"""creative-media/image-processing and generative-art. Processing: photos and an animated GIF drawn
with Pillow (odd modes, a truncated file, decoys) become thumbnails, a contact sheet and extracted
frames the verifier recomputes with Pillow. Generative: a seeded sketch the verifier runs as
untrusted code with hidden seeds (reproducible, seed-dependent, on palette, non-trivial), at the
canvas size and default seed the skill prescribes. A skill written for p5.js gets its sketch as a
p5.js page, with the version of p5.js the skill loads among the inputs; the verifier opens the page
in headless Chromium."""

from __future__ import annotations

import hashlib
import json
import random
from importlib import resources
from typing import Any

from skillgym_builder.families import knobs as knob_rules
from skillgym_builder.families.art_facts import read_conventions
from skillgym_builder.families.art_instructions import generative_instruction, processing_instruction
from skillgym_builder.families.base import Fit, SkillClaim, family_text, load_family_spec
from skillgym_builder.families.common import agent_solution, requirements, rubric, source, verifier_files
from skillgym_builder.families.evidence import SkillEvidence, assess
from skillgym_builder.families.libraries import web_libraries, web_library
from skillgym_builder.families.render import RenderJob
from skillgym_builder.families.web_assets import WebAsset, WebAssetError, fetch
from skillgym_builder.skillcard import SkillCard
from skillgym_builder.templates.base import TemplateOutput

FAMILY_ID = "image-compose"
SUBJECTS = ["harbor", "orchard", "quarry", "meadow", "canyon", "glacier", "market", "lighthouse", "vineyard",
            "bridge", "dunes", "terrace"]
MODES = ["RGBA", "P", "LA", "L"]
P5_PATH = "lib/p5.min.js"
PAGE = "art/piece.html"
BROWSER_PACKAGE = "chromium"


def helper() -> dict[str, str]:
    text = resources.files("skillgym_builder.families").joinpath("art_facts.py").read_text(encoding="utf-8")
    return {"artfacts.py": text}


def p5_library(card: SkillCard, web: list[str]) -> tuple[WebAsset | None, bytes, str | None]:
    """(asset, its bytes, why it could not be fetched) for a skill written for p5.js: the version
    the skill loads, else the family's own (in ``web``, ``p5@X.Y.Z``). Nothing for other skills."""
    wanted = web_libraries(card.skill_md)
    if "p5" not in wanted:
        return None, b"", None
    default = next(p.rsplit("@", 1)[1] for p in web if web_library(p) == "js:p5")
    versions = list(dict.fromkeys(v for v in (wanted["p5"], default) if v))
    failures = []
    for version in versions:
        try:
            asset = WebAsset("p5", version, "lib/p5.min.js")
            return asset, fetch(asset), ""
        except WebAssetError as exc:
            failures.append(f"p5@{version}: {exc}")
    return None, b"", "; ".join(failures)


def _hex(rng: random.Random) -> str:
    return "#" + "".join(f"{rng.randrange(256):02x}" for _ in range(3))


def processing(rng: random.Random, values: dict[str, float]) -> tuple[dict[str, Any], dict[str, Any], dict[str, bytes]]:
    """(render parameters, spec, extra workspace files) of a processing instance."""
    names = rng.sample(SUBJECTS, int(values["record_count"]))
    photos = []
    for name in names:
        noisy = rng.random() < values["noise_level"]
        jpeg = not noisy and rng.random() < 0.3
        photos.append({"file": f"photos/{name}.{'jpg' if jpeg else 'png'}", "seed": rng.randrange(10**6),
                       "size": [rng.randrange(240, 900), rng.randrange(180, 700)], "blobs": rng.randrange(4, 12),
                       "mode": rng.choice(MODES) if noisy else "RGB", "truncated": False})
    if values["error_recovery"]:
        photos[rng.randrange(len(photos))]["truncated"] = True
    box = rng.choice([128, 160, 200])
    spec: dict[str, Any] = {"thumbnails": {"box": [box, box], "format": "JPEG", "background": "#ffffff",
                                           "folder": "out/thumbs"}}
    params: dict[str, Any] = {"photos": photos}
    if values["multi_step"]:
        spec["contact_sheet"] = {"file": "out/contact_sheet.png", "columns": rng.choice([2, 3, 4]),
                                 "cell": [box, box], "padding": rng.choice([4, 8, 12]), "background": _hex(rng)}
    if values["long_horizon"] >= 2:
        count = rng.randrange(4, 9)
        params["animation"] = {"file": "anim/loader.gif", "size": [96, 64], "durations": [
            rng.choice([40, 60, 80, 120]) for _ in range(count)], "frames": [
            {"background": [rng.randrange(256) for _ in range(3)], "color": [rng.randrange(256) for _ in range(3)],
             "x": rng.randrange(0, 70)} for _ in range(count)]}
        spec["frames"] = {"source": "anim/loader.gif", "folder": "out/frames", "pattern": "frame_{index:03d}.png"}
    extra: dict[str, bytes] = {}
    if values["distractor_files"]:
        extra["photos/README.txt"] = b"Originals from the spring shoot. Do not edit.\n"
        extra["photos/old_thumbs/harbor_small.jpg.txt"] = b"placeholder for a thumbnail of the old export\n"
    return params, spec, extra


def generative(rng: random.Random, values: dict[str, float], conventions: dict[str, Any] | None) -> dict[str, Any]:
    palette: list[str] = []
    while len(palette) < rng.randrange(4, 7) or len(palette) < 4:
        color = _hex(rng)
        palette += [] if color in palette else [color]
    window = [0.3, 0.6] if values["noise_level"] else [0.15, 0.85]
    brief: dict[str, Any] = {
        "palette": palette, "background": palette[0], "coverage": window, "min_colors": 3,
        "gallery": sorted(rng.sample(range(1, 500), int(values["record_count"]))),
        "density": bool(values["multi_step"]),
    }
    if conventions is None:
        brief["canvas"] = [rng.choice([480, 640, 800]), rng.choice([480, 600])]
        brief["default_seed"] = rng.randrange(1, 10**5)
    if values["long_horizon"] >= 2:
        brief["sheet"] = {"file": "out/gallery/sheet.png", "columns": 3, "cell": [160, 160], "padding": 6}
    return brief


class ImageComposeFamily:
    def __init__(self) -> None:
        self.spec = load_family_spec(FAMILY_ID)

    def suitability(self, card: SkillCard) -> Fit:
        return assess(self.spec, SkillEvidence.of(card))

    def kind(self, card: SkillCard) -> str:
        if card.record.subcategory in ("generative-art", "image-processing"):
            return "generative" if card.record.subcategory == "generative-art" else "processing"
        return "generative" if read_conventions(card.skill_md) else "processing"

    def instantiate(self, card: SkillCard, seed: int, knobs: dict[str, float]) -> TemplateOutput:
        values = knob_rules.validate(self.spec, knobs)
        rng = random.Random(f"{FAMILY_ID}:{card.record.skill_id}:{seed}")
        reqs, skipped = requirements(self.spec, card)
        if self.kind(card) == "processing":
            return self._processing(card, rng, values, reqs, skipped)
        return self._generative(card, rng, values, reqs, skipped)

    def _output(self, card: SkillCard, **parts: Any) -> TemplateOutput:
        items = rubric(self.spec, parts.pop("items"))
        task = parts.pop("task")
        run = f"python3 /tmp/work/{parts['name']} '{json.dumps(task)}'"
        helpers = {**helper(), **parts.get("helpers", {})}
        solve = agent_solution(card, inspect=parts["inspect"], helpers=helpers, script=source(FAMILY_ID, parts["script"]),
                               name=parts["name"], run=run)
        alternative = agent_solution(card, inspect=parts["inspect"], helpers=helpers, name=parts["name"], run=run,
                                     script=source(FAMILY_ID, parts["alternative"]))
        return TemplateOutput(
            instruction=parts["instruction"], workspace=parts["workspace"], protected=parts["protected"],
            tests=verifier_files(self.spec, parts["expected"], items, parts.get("verifier_extra")), solution_steps=[],
            solve_script=solve, system_packages=parts.get("system_packages", []),
            alternative_scripts={parts["alternative_name"]: alternative}, blueprint=self.spec.blueprint,
            params=parts["params"], requirements=parts["reqs"],
            equivalences={k: list(v) for k, v in self.spec.equivalences.items()},
            metadata={"skill_claim": parts["claim"].model_dump(), "skill_dependencies_skipped": parts["skipped"],
                      "rubric": [i.model_dump() for i in items], "instance_kind": parts["kind"],
                      "render_jobs": len(parts["jobs"]), **parts.get("metadata", {})},
            render_jobs=parts["jobs"],
        )

    def _processing(self, card: SkillCard, rng: random.Random, values: dict[str, float], reqs: list[str],
                    skipped: dict[str, str]) -> TemplateOutput:
        params, spec, extra = processing(rng, values)
        produced = tuple(p["file"] for p in params["photos"]) + ((params["animation"]["file"],) if "animation" in params else ())
        job = RenderJob(script=family_text(FAMILY_ID, "render_images.py"), params=params,
                        requirements=tuple(self.spec.dependencies.build_python), produces=produced)
        workspace = {"jobs/spec.json": (json.dumps(spec, indent=2) + "\n").encode(), **extra}
        expected = {"kind": "processing", "spec": spec, "photos": [p["file"] for p in params["photos"]],
                    "unreadable": [p["file"] for p in params["photos"] if p["truncated"]]}
        claim = SkillClaim(claimed=False, reason="the spec carries every parameter; the skill teaches the library")
        return self._output(
            card, items=["images", "report", *(["composition"] if "contact_sheet" in spec else [])], task={"spec": "jobs/spec.json"},
            inspect=["cat jobs/spec.json", "ls -R photos anim 2>/dev/null || true"], script="solve_pillow.py",
            alternative="solve_numpy.py", alternative_name="numpy-arrays", name="process.py",
            instruction=processing_instruction(spec), workspace=workspace,
            protected=sorted([*workspace, *produced]), expected=expected, claim=claim, skipped=skipped, reqs=reqs,
            params={"photos": len(params["photos"]), "kind": "processing"}, kind="processing", jobs=[job])

    def _generative(self, card: SkillCard, rng: random.Random, values: dict[str, float], reqs: list[str],
                    skipped: dict[str, str]) -> TemplateOutput:
        conventions = read_conventions(card.skill_md)
        brief = generative(rng, values, conventions)
        asset, p5_bytes, no_p5 = p5_library(card, self.spec.dependencies.web)
        draft, sketch = ("draft_piece.html", PAGE) if asset else ("draft_sketch.py", "art/sketch.py")
        workspace = {"art/brief.json": (json.dumps(brief, indent=2) + "\n").encode()}
        if values["distractor_files"]:
            workspace[f"art/drafts/noise_test{'.html' if asset else '.py'}"] = source(FAMILY_ID, draft).encode()
        if values["error_recovery"]:
            workspace[sketch] = source(FAMILY_ID, draft).encode()
        full = {**brief, **({"canvas": conventions["canvas"], "default_seed": conventions["default_seed"]}
                            if conventions else {})}
        hidden = sorted(rng.sample(range(1000, 10**6), 3))
        expected = {"kind": "generative", **full, "hidden": hidden}
        if conventions:
            lines = conventions["lines"]
            assert isinstance(lines, dict)
            claim = SkillClaim(claimed=True, facts={k: f"SKILL.md:{v}" for k, v in lines.items()},
                               reason="the canvas size and the default seed come from the skill's conventions")
        else:
            claim = SkillClaim(claimed=False, reason="the skill states no canvas or default seed; the brief does")
        medium: dict[str, Any] = {
            "script": "solve_sketch.py", "alternative": "solve_sketch_numpy.py", "alternative_name": "numpy-cells",
            "metadata": {"medium": "python", **({"p5_unavailable": no_p5} if no_p5 else {})}}
        if asset:
            workspace[P5_PATH] = p5_bytes
            expected.update(medium="p5", library={"path": P5_PATH, "sha256": hashlib.sha256(p5_bytes).hexdigest(),
                                                  "package": f"{asset.package}@{asset.version}"})
            medium = {"script": "solve_p5.py", "alternative": "solve_p5_instance.py", "alternative_name": "instance-mode",
                      "helpers": {"p5kit.py": source(FAMILY_ID, "p5kit.py")}, "system_packages": [BROWSER_PACKAGE],
                      "verifier_extra": {name: source(FAMILY_ID, name).encode() for name in ("p5_render.py", "p5_browser.py")},
                      "metadata": {"medium": "p5", "web_libraries": {P5_PATH: f"{asset.package}@{asset.version}"}}}
        instruction = generative_instruction(card, brief, conventions is not None, bool(values["error_recovery"]), asset)
        return self._output(
            card, items=["reproducible", "constraints", "gallery"],
            task={"brief": "art/brief.json", "skill": conventions is not None},
            inspect=["cat art/brief.json", "ls -R art"], name="make_sketch.py", instruction=instruction,
            workspace=workspace, protected=sorted(p for p in workspace if p != sketch), expected=expected,
            claim=claim, skipped=skipped, reqs=reqs, params={"gallery": len(brief["gallery"]), "kind": "generative"},
            kind="generative", jobs=[], **medium)
