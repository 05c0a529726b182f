"""ai-agents/skill-authoring: draft agent skills (SKILL.md front matter and body, references,
scripts) with planted loader defects, plus function-calling tool manifests and prompt templates
for the agent-tooling and prompt-engineering sides; the agent fixes the drafts in place and, as
a second step, packages each skill into an archive with the required layout."""

from __future__ import annotations

import json
import random
import re
from typing import Any

from skillgym_builder.errors import UnsuitableSkillError
from skillgym_builder.families import knobs as knob_rules
from skillgym_builder.families.base import Fit, SkillClaim, family_text, load_family_spec
from skillgym_builder.families.common import agent_solution, requirements, rubric, skill_helpers, source, verifier_files
from skillgym_builder.families.evidence import SkillEvidence, assess
from skillgym_builder.families.skill_drafts import (
    DEFAULT_KEYS,
    SKILL_DEFECTS,
    Draft,
    Rules,
    describe,
    fields,
    skill_files,
)
from skillgym_builder.families.skill_extras import manifest, prompt
from skillgym_builder.families.skillfacts import Fact, body_lines
from skillgym_builder.skillcard import SkillCard
from skillgym_builder.templates.base import TemplateOutput

FAMILY_ID = "skill-package"
DESCRIPTION_LIMIT = re.compile(r"\b(\d{2,5})\s*(?:characters|chars)\b", re.I)
KEY_CUE = re.compile(r"\b(allowed|permitted|supported)\b.*\b(keys|fields|properties)\b", re.I)
KEY_TOKEN = re.compile(r"`([a-z][a-z0-9-]*)`")
ARCHIVE_CUE = re.compile(r"\b(packag\w*|archives?|bundled?)\b", re.I)
EXTENSION = re.compile(r"`[^`\s]*?(\.[a-z][a-z0-9]{1,7})`")
NOT_ARCHIVES = {".md", ".py", ".sh", ".json", ".yaml", ".yml", ".txt", ".js", ".ts", ".toml", ".html", ".csv",
                ".gz", ".tgz", ".tar", ".bz2", ".xz", ".7z", ".rar"}
JUNK = {".DS_Store": b"\x00\x00\x00\x01Bud1\x00\x00\x10\x00", "scripts/__pycache__/common.cpython-311.pyc": b"\xa7\r\r\n\x00\x00"}
TEMPLATE = "---\nname: <skill-name>\ndescription: <what the skill does and when to use it>\n---\n\n# <Title>\n"
DOCS = "# Drafts\n\nEach folder here is a skill draft. `docs/template/` is the starting point for new skills.\n"


def description_max(card: SkillCard) -> Fact | None:
    """A description length limit ("descriptions of at most 300 characters")."""
    for number, raw in body_lines(card.skill_md):
        found = DESCRIPTION_LIMIT.search(raw)
        if found and re.search(r"\bdescriptions?\b", raw, re.I):
            return Fact(int(found.group(1)), number)
    return None


def allowed_keys(card: SkillCard) -> Fact | None:
    """The front matter keys the skill allows, listed in backticks on the line that says so."""
    lines = body_lines(card.skill_md)
    for position, (number, raw) in enumerate(lines):
        if not KEY_CUE.search(raw):
            continue
        keys = KEY_TOKEN.findall(raw)
        if len(keys) < 3 and raw.rstrip().endswith(":"):
            for _, text in lines[position + 1 :]:
                bullet = re.match(r"\s*[-*+]\s+`([a-z][a-z0-9-]*)`", text)
                if not bullet and (keys or text.strip()):
                    break
                keys += [bullet.group(1)] if bullet else []
        if len(keys) >= 3 and {"name", "description"} <= set(keys):
            return Fact(list(dict.fromkeys(keys)), number)
    return None


def archive_extension(card: SkillCard) -> Fact | None:
    """The file extension of a packaged skill, named in backticks where packaging is described."""
    for number, raw in body_lines(card.skill_md):
        if ARCHIVE_CUE.search(raw):
            for extension in EXTENSION.findall(raw):
                if extension not in NOT_ARCHIVES:
                    return Fact(extension, number)
    return None


def skill_rules(card: SkillCard, package: bool) -> tuple[Rules, dict[str, Fact]]:
    """The rules in force and the facts only the skill gives that change what a fix must do."""
    limit, keys, extension = description_max(card), allowed_keys(card), archive_extension(card)
    used: dict[str, Fact] = {}
    rules = Rules()
    if limit is not None and isinstance(limit.value, int) and limit.value < 1024:
        if limit.value < 150:
            raise UnsuitableSkillError(f"the skill's description limit ({limit.value}) leaves no room for the drafts")
        rules = Rules(description_max=limit.value)
        if limit.value <= 900:
            used["description_max"] = limit
    if keys is not None and isinstance(keys.value, list) and set(keys.value) != set(DEFAULT_KEYS):
        rules = Rules(rules.description_max, tuple(keys.value), rules.archive_ext)
        used["allowed_keys"] = keys
    if package and extension is not None and extension.value != ".zip":
        rules = Rules(rules.description_max, rules.allowed_keys, str(extension.value))
        used["archive_ext"] = extension
    return rules, used


def _claim_key(rules: Rules, rng: random.Random) -> str | None:
    """A key whose fate differs between the skill's key list and the default one."""
    differing = sorted((set(DEFAULT_KEYS) ^ set(rules.allowed_keys)) - {"name", "description", "metadata"})
    return rng.choice(differing) if differing else None


class SkillPackageFamily:
    def __init__(self) -> None:
        self.spec = load_family_spec(FAMILY_ID)

    def suitability(self, card: SkillCard) -> Fit:
        return assess(self.spec, SkillEvidence.of(card))

    def instantiate(self, card: SkillCard, seed: int, knobs: dict[str, float]) -> TemplateOutput:
        values = knob_rules.validate(self.spec, knobs)
        rng = random.Random(f"{FAMILY_ID}:{card.record.skill_id}:{seed}")
        catalog = json.loads(family_text(FAMILY_ID, "catalog.json"))
        package = bool(values["multi_step"])
        rules, used = skill_rules(card, package)
        topics = rng.sample(catalog["topics"], int(values["record_count"]))
        drafts = [Draft(t["slug"], t, []) for t in topics]
        kinds = list(SKILL_DEFECTS)
        rng.shuffle(kinds)
        for index, kind in enumerate(kinds + [rng.choice(kinds) for _ in range(len(drafts) - len(kinds))]):
            if kind not in drafts[index % len(drafts)].defects:
                drafts[index % len(drafts)].defects.append(kind)
        if values["error_recovery"]:
            rng.choice(drafts).defects.append("yaml")
        claim_key = _claim_key(rules, rng) if "allowed_keys" in used else None
        keyed = rng.choice(drafts)
        workspace: dict[str, bytes] = {}
        protected: list[str] = []
        for draft in drafts:
            describe(draft, rules, catalog["filler"], rng)
            fields(draft, rules, catalog, rng, claim_key if draft is keyed else None)
            files = skill_files(draft, catalog, rng, rng.random() < float(values["noise_level"]))
            for rel, data in files.items():
                workspace[f"drafts/{draft.slug}/{rel}"] = data
                protected += [f"drafts/{draft.slug}/{rel}"] if rel != "SKILL.md" else []
        if values["distractor_files"]:
            decoys = {"drafts/docs/README.md": DOCS.encode(), "drafts/docs/template/SKILL.md": TEMPLATE.encode()}
            workspace.update(decoys)
            protected += list(decoys)
            for draft in rng.sample(drafts, min(2, len(drafts))):
                workspace.update({f"drafts/{draft.slug}/{rel}": data for rel, data in JUNK.items()})
        subcategory = card.record.subcategory
        expected: dict[str, Any] = {
            "rules": {"description_max": rules.description_max, "allowed_keys": list(rules.allowed_keys),
                      "archive_ext": rules.archive_ext},
            "package": package, "skills": {d.slug: d.expectation for d in drafts}, "tools": {}, "prompts": {},
        }
        noisy = float(values["noise_level"]) > 0
        if subcategory == "agent-tooling" or values["long_horizon"]:
            toolset = rng.choice(catalog["toolsets"])
            data, expected["tools"][toolset["file"]], _ = manifest(toolset, rng, noisy)
            workspace[f"tools/{toolset['file']}"] = data
        if subcategory == "prompt-engineering" or values["long_horizon"]:
            for template in rng.sample(catalog["prompts"], 2):
                data, expected["prompts"][template["file"]] = prompt(template, catalog["spare_variables"], rng, noisy)
                workspace[f"prompts/{template['file']}"] = data
        names = ["front_matter", "content", *(["tools"] if expected["tools"] else []),
                 *(["prompts"] if expected["prompts"] else []), *(["archives"] if package else [])]
        items = rubric(self.spec, names)
        stated = {"description_max": rules.description_max, "allowed_keys": list(rules.allowed_keys),
                  "archive_ext": rules.archive_ext}
        defaults = Rules()
        for name in used:  # what the instruction leaves to the skill, the solution must read there
            stated[name] = list(defaults.allowed_keys) if name == "allowed_keys" else getattr(defaults, name)
        task = {"package": package, "from_skill": sorted(used), "rules": stated}
        argument = json.dumps(task)
        helpers = skill_helpers(FAMILY_ID, "skill_rules.py")
        solve = agent_solution(card, inspect=["ls -R drafts | head -n 60", "ls tools prompts 2>/dev/null || true"], helpers=helpers,
                               script=source(FAMILY_ID, "solve_yaml.py"), name="fix_skills.py",
                               run=f"python3 /tmp/work/fix_skills.py '{argument}'")
        alternative = agent_solution(card, inspect=["find drafts -maxdepth 2 -name SKILL.md"], helpers=helpers,
                                     script=source(FAMILY_ID, "solve_stdlib.py"), name="fix_skills.py",
                                     run=f"python3 /tmp/work/fix_skills.py '{argument}'")
        reqs, skipped = requirements(self.spec, card)
        claim = SkillClaim(
            claimed=bool(used), facts={name: fact.source() for name, fact in used.items()},
            reason="the description limit, the allowed keys or the archive extension come from the skill" if used
            else "the skill states none of the rules the drafts break; the instruction does")
        return TemplateOutput(
            instruction=_instruction(card.name, rules, used, package, sorted(expected["tools"]), sorted(expected["prompts"])),
            workspace=workspace,
            protected=sorted(protected),
            tests=verifier_files(self.spec, expected, items),
            solution_steps=[],
            solve_script=solve,
            alternative_scripts={"stdlib-fixer": alternative},
            blueprint=self.spec.blueprint,
            params={"skills": len(drafts), "defects": sum(len(d.defects) for d in drafts), "package": package},
            requirements=reqs,
            equivalences={k: list(v) for k, v in self.spec.equivalences.items()},
            metadata={"skill_claim": claim.model_dump(), "skill_dependencies_skipped": skipped,
                      "rubric": [i.model_dump() for i in items], "defects": {d.slug: d.defects for d in drafts}},
        )


def _instruction(skill: str, rules: Rules, used: dict[str, Fact], package: bool, tools: list[str],
                 prompts: list[str]) -> str:
    by_skill = f"the `{skill}` skill in your skills directory"
    limit = f"within the length limit {by_skill} sets" if "description_max" in used else \
        f"of at most {rules.description_max} characters"
    keys = f"those {by_skill} allows" if "allowed_keys" in used else ", ".join(f"`{k}`" for k in rules.allowed_keys)
    parts = [f"""# Fix{" and package" if package else ""} the draft skills

The agent skills drafted in `/app/drafts/` are rejected by the skill loader. A skill is a direct subfolder of
`/app/drafts/` that holds a `SKILL.md`; anything else under `/app/drafts/` is not a skill and stays as it is.

Fix every skill in place so that it passes these rules:

1. `SKILL.md` is UTF-8 without a byte-order mark, has LF line endings and opens with YAML front matter between two `---` lines that parses to a mapping.
2. `name` is the skill's folder name: 1-64 characters, lowercase letters, digits and single hyphens, with no hyphen at either end.
3. `description` is a non-empty string {limit}, with no `<` or `>`. Where a description must be shortened, keep its first sentence word for word; a description that breaks no rule stays as it is.
4. The only top-level keys are {keys}. Move any other key into `metadata` (a mapping of strings) or drop it; allowed keys keep their values.
5. Every relative link and every `scripts/...` path in the body names a file that exists in the skill. Fix `SKILL.md`, not the files: files under `references/` and `scripts/` keep their names and content.
6. Scripts under `scripts/` that start with `#!` are executable.
7. Apart from these fixes the body stays as written. Do not delete, rename or add skills.
"""]
    if tools:
        listed = ", ".join(f"`/app/tools/{name}`" for name in tools)
        parts.append(f"""The tool manifest {listed} lists function-calling tools as `{{"tools": [{{"name", "description", "input_schema"}}, ...]}}`. Fix it in place: tool names are unique (drop exact duplicates), every `type` is a JSON Schema type name (`string`, `integer`, `number`, `boolean`, `array`, `object`, `null`), and a property is required only through its object's `required` array, which names only defined properties. Add, remove or rename no property and change no description.
""")
    if prompts:
        listed = ", ".join(f"`/app/prompts/{name}`" for name in prompts)
        parts.append(f"""The prompt templates {listed} declare their inputs in the front matter list `variables`. Make each list name exactly the `{{{{ placeholder }}}}` variables its template uses, without changing the template text or the other keys.
""")
    if package:
        extension = f"after the skill, with the file extension {by_skill} gives packaged skills" \
            if "archive_ext" in used else f"`<skill-name>{rules.archive_ext}`"
        parts.append(f"""Then package every fixed skill into `/app/dist/`: one zip archive per skill, named {extension}, whose entries all sit under a `<skill-name>/` folder (`<skill-name>/SKILL.md`, ...) and hold every file of the fixed skill except `.DS_Store`, `__pycache__/` and `*.pyc` files, with scripts keeping their executable bit. Nothing else goes into `/app/dist/`.
""")
    return "\n".join(parts)
