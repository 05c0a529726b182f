"""creative-media/graphic-design: off-brand artifacts (a web page with its stylesheet, SVG charts
and diagrams, a matplotlib style, a slide deck drawn with python-pptx) restyled to the brand the
skill describes: every colour from the palette by role, accents in the brand's cycle, heading and
body fonts with their fallbacks, and nothing else changed."""

from __future__ import annotations

import hashlib
import json
import random
from importlib import resources
from typing import Any

from skillgym_builder.families import brand_assets as assets
from skillgym_builder.families import knobs as knob_rules
from skillgym_builder.families.base import Fit, SkillClaim, family_text, load_family_spec
from skillgym_builder.families.brand_facts import Brand, read_brand
from skillgym_builder.families.common import agent_solution, requirements, rubric, source, verifier_files
from skillgym_builder.families.evidence import SkillEvidence, assess
from skillgym_builder.families.render import RenderJob
from skillgym_builder.skillcard import SkillCard
from skillgym_builder.templates.base import TemplateOutput

FAMILY_ID = "brand-restyle"
ROLES_FILE = "design/style-roles.md"
BRIEF_FILE = "design/brand.md"
MAX_DECK_SHAPES = 8


def facts_helper() -> dict[str, str]:
    """The brand reader the reference solutions import: this package's own module."""
    text = resources.files("skillgym_builder.families").joinpath("brand_facts.py").read_text(encoding="utf-8")
    return {"brandfacts.py": text}


def expected_value(brand: Brand, slot: dict[str, Any]) -> Any:
    role = slot["role"]
    if role == "shape":
        return brand.accents[slot["index"] % len(brand.accents)]
    if role == "cycle":
        return list(brand.accents)
    if role in ("heading", "body"):
        return list(brand.fonts[role])
    return brand.roles[role]


def _kind(path: str) -> str:
    return {"css": "css", "html": "html", "svg": "svg", "pptx": "pptx"}.get(path.rsplit(".", 1)[-1], "mplstyle")


def legacy_brief(rng: random.Random, paint: assets.Painter) -> str:
    colors = [paint.color() for _ in range(6)]
    return f"""# Brand sheet (2019, retired)

Superseded by the current brand; kept for reference only.

- Night: `{colors[0]}` - primary text and dark backgrounds
- Snow: `{colors[1]}` - light backgrounds and text on dark
- Haze: `{colors[2]}` - subtle backgrounds
- Ember: `{colors[3]}` - primary accent
- Lagoon: `{colors[4]}` - secondary accent
- Fern: `{colors[5]}` - tertiary accent

- Headings: {rng.choice(assets.FONTS)} (with Arial fallback)
- Body text: {rng.choice(assets.FONTS)} (with Times fallback)
"""


class BrandRestyleFamily:
    def __init__(self) -> None:
        self.spec = load_family_spec(FAMILY_ID)

    def suitability(self, card: SkillCard) -> Fit:
        return assess(self.spec, SkillEvidence.of(card))

    def instantiate(self, card: SkillCard, seed: int, knobs: dict[str, float]) -> TemplateOutput:
        values = knob_rules.validate(self.spec, knobs)
        rng = random.Random(f"{FAMILY_ID}:{card.record.skill_id}:{seed}")
        skill_brand = read_brand(card.skill_md)
        brand = skill_brand or read_brand(family_text(FAMILY_ID, "default_brand.md"))
        assert brand is not None
        palette = set(brand.roles.values()) | set(brand.accents)
        paint = assets.Painter(rng, float(values["noise_level"]), palette)
        roles, count = set(brand.roles), int(values["record_count"])
        inst = assets.Instance()
        decoys = bool(values["distractor_files"])
        assets.site(inst, rng, paint, roles, count)
        assets.chart(inst, rng, paint, roles, count, "charts/orders-by-channel.svg")
        if values["long_horizon"] >= 2:
            assets.mplstyle(inst, rng, paint, roles, "styles/report.mplstyle")
        if values["long_horizon"] >= 3:
            assets.diagram(inst, rng, paint, roles, "charts/review-flow.svg")
        if values["multi_step"]:
            assets.deck(inst, rng, paint, min(count, MAX_DECK_SHAPES), "deck/quarterly-review.pptx")
        workspace = {path: text.encode() for path, text in inst.files.items()}
        workspace[ROLES_FILE] = (_roles_doc(inst) + "\n").encode()
        if skill_brand is None:
            workspace[BRIEF_FILE] = family_text(FAMILY_ID, "default_brand.md").encode()
        if decoys:
            workspace["design/legacy-brand.md"] = legacy_brief(rng, paint).encode()
            workspace["site/vendor/normalize.css"] = (
                f"html {{ line-height: 1.15; color: {paint.color()}; }}\nbody {{ margin: 0; }}\n").encode()
        jobs = []
        if inst.deck is not None:
            jobs.append(RenderJob(script=family_text(FAMILY_ID, "render_deck.py"), params=inst.deck,
                                  requirements=tuple(self.spec.dependencies.build_python), produces=(inst.deck["file"],)))
        expected = self._expected(brand, inst, workspace)
        claim = self._claim(skill_brand)
        items = rubric(self.spec, ["colors", "fonts", "content"])
        task = json.dumps({"brand": "skill" if skill_brand else BRIEF_FILE, "roles": ROLES_FILE})
        inspect = [f"sed -n '1,80p' {ROLES_FILE}", "ls -R ."]
        solve = agent_solution(card, inspect=inspect, helpers=facts_helper(), script=source(FAMILY_ID, "solve_restyle.py"),
                               name="restyle.py", run=f"python3 /tmp/work/restyle.py '{task}'")
        alternative = agent_solution(card, inspect=inspect, helpers=facts_helper(),
                                     script=source(FAMILY_ID, "solve_tokens.py"), name="restyle.py",
                                     run=f"python3 /tmp/work/restyle.py '{task}'")
        reqs, skipped = requirements(self.spec, card)
        targets = sorted(inst.slots)
        return TemplateOutput(
            instruction=_instruction(card, targets, skill_brand is not None),
            workspace=workspace,
            protected=sorted([*workspace, *(j.produces[0] for j in jobs)]),
            tests=verifier_files(self.spec, expected, items),
            solution_steps=[],
            solve_script=solve,
            alternative_scripts={"css-custom-properties": alternative},
            blueprint=self.spec.blueprint,
            params={"artifacts": len(targets), "slots": sum(len(s) for s in inst.slots.values()), "shapes": count},
            requirements=reqs,
            equivalences={k: list(v) for k, v in self.spec.equivalences.items()},
            metadata={"skill_claim": claim.model_dump(), "skill_dependencies_skipped": skipped,
                      "rubric": [i.model_dump() for i in items], "render_jobs": len(jobs)},
            render_jobs=jobs,
        )

    def _expected(self, brand: Brand, inst: assets.Instance, workspace: dict[str, bytes]) -> dict[str, Any]:
        files = {}
        for path, slots in inst.slots.items():
            entry: dict[str, Any] = {"kind": _kind(path),
                                     "slots": {f"{s['where']}|{s['property']}": expected_value(brand, s) for s in slots}}
            if path in workspace:
                entry["digest"] = hashlib.sha256(workspace[path]).hexdigest()
            files[path] = entry
        palette = sorted(set(brand.roles.values()) | set(brand.accents))
        return {"palette": palette, "files": files}

    @staticmethod
    def _claim(brand: Brand | None) -> SkillClaim:
        if brand is None:
            return SkillClaim(claimed=False, reason="the skill describes no complete brand; the workspace's brief does")
        facts = {name: f"SKILL.md:{line}" for name, line in sorted(brand.lines.items())}
        return SkillClaim(claimed=True, facts=facts,
                          reason="the palette and its roles, the accent cycle and the fonts exist only in the skill")


def _roles_doc(inst: assets.Instance) -> str:
    return f"""# Style roles

Every colour and font in the artifacts below plays one of these roles. Shapes take the brand's accent
colours in turn, in the brand's order, counted in the order they are listed here and starting again in each
file; an accent cycle lists every accent once, in that order.

{assets.roles_table(inst)}"""


def _instruction(card: SkillCard, targets: list[str], from_skill: bool) -> str:
    brand = (f"the brand that the `{card.name}` skill in your skills directory describes" if from_skill
             else f"the brand described in `/app/{BRIEF_FILE}`")
    listed = "\n".join(f"- `/app/{path}`" for path in targets)
    return f"""# Restyle the artifacts to the brand

These artifacts were made with off-brand colours and fonts:

{listed}

Restyle them to {brand}. `/app/{ROLES_FILE}` gives the role of every colour and font in them.

Write each restyled artifact to `/app/out/` under the same relative path (for example
`/app/out/{targets[0]}`), and nothing else under `/app/out/`. In the restyled files:

- every colour is the brand colour for its role (in any CSS notation; a style file's colours as bare hex);
- fonts follow the brand: a font list names the brand font, then its fallback, optionally followed by a
  generic family; in the slide deck every text run uses the brand font;
- everything else stays as it was: the same elements, rules, declarations, attributes, text, shapes and
  geometry, in the same order (a stylesheet may gain one `:root` rule of custom properties).

Leave the files in `/app` as they are.
"""
