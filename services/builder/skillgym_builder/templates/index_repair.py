"""Abductive template: symptoms of a misconfigured index build are given, the faulty setting is
hidden; the agent fixes the system (the configuration), rebuilds and names the cause."""

from __future__ import annotations

import json
import random
import re

from skillgym_builder.blueprint import Blueprint
from skillgym_builder.skillcard import SkillCard
from skillgym_builder.templates.base import TemplateOutput, data_text, load_spec, verifier_files
from skillgym_builder.templates.common import solution_files

TEMPLATE_ID = "index-repair"
_HEADING = re.compile(r"^(#{1,6})\s+(.+?)\s*#*\s*$")
HEALTHY_EXCLUDE = ["^Draft:", "^TODO\\b"]
NOISE = [
    "WARN cache directory /var/cache/index is not writable; continuing without cache",
    "WARN locale C.UTF-8 assumed",
    "INFO portal sync skipped: offline mode",
    "WARN deprecated option 'pretty' ignored",
]


def headings(skill_md: str) -> list[dict[str, object]]:
    """The headings exactly as the shipped tool reads them."""
    lines = skill_md.split("\n")
    start = 0
    if lines and lines[0].strip() == "---":
        start = next((i + 1 for i in range(1, len(lines)) if lines[i].strip() in ("---", "...")), 0)
    out, fenced = [], False
    for number, raw in enumerate(lines, start=1):
        if number <= start:
            continue
        if re.match(r"^\s*(```|~~~)", raw):
            fenced = not fenced
            continue
        match = None if fenced else _HEADING.match(raw)
        if match:
            title = re.sub(r"[*_`]+", "", match.group(2)).strip()
            if title:
                out.append({"title": title, "level": len(match.group(1)), "line": number})
    return out


class IndexRepairTemplate:
    supported_knobs: tuple[str, ...] = ("noisy_logs",)

    def __init__(self) -> None:
        self.spec = load_spec(TEMPLATE_ID)

    def unsuitable_reason(self, card: SkillCard) -> str | None:
        found = headings(card.skill_md)
        if len(found) < 3:
            return f"{TEMPLATE_ID} needs at least 3 headings; SKILL.md has {len(found)}"
        if any(re.search(p, str(h["title"])) for p in HEALTHY_EXCLUDE for h in found):
            return f"{TEMPLATE_ID}: a heading matches the tool's default exclusions"
        return None

    def generate(self, card: SkillCard, rng: random.Random, blueprint: Blueprint) -> TemplateOutput:
        found = headings(card.skill_md)
        skill_file = f"/skills/{card.dir_name}/SKILL.md"
        config: dict[str, object] = {"skill_file": skill_file, "min_level": 1, "max_level": 6,
                                     "exclude": list(HEALTHY_EXCLUDE), "output": "index.json"}
        levels = sorted({int(str(h["level"])) for h in found})
        faults = ["exclude", "skill_file"] + (["max_level"] if len(levels) > 1 else [])
        fault = rng.choice(faults)
        missing: list[dict[str, object]] = []
        if fault == "exclude":
            target = rng.choice(found[1:])
            prefix = re.escape(str(target["title"])[: max(3, len(str(target["title"])) // 2)])
            config["exclude"] = [*HEALTHY_EXCLUDE, f"^{prefix}"]
            missing = [h for h in found if re.search(f"^{prefix}", str(h["title"]))]
        elif fault == "max_level":
            config["max_level"] = levels[-2]
            missing = [h for h in found if int(str(h["level"])) > levels[-2]]
        else:
            config["skill_file"] = f"/skills/{card.dir_name}-v1/SKILL.md"
        log = _symptoms(fault, config, found, missing)
        if "noisy_logs" in blueprint.patterns:
            lines = log.splitlines() + rng.sample(NOISE, k=3)
            rng.shuffle(lines)
            log = "\n".join(lines) + "\n"
        expected = {"headings": found, "skill_file": skill_file, "faulty_key": fault}
        return TemplateOutput(
            instruction=_instruction(card),
            workspace={
                "tools/build_index.py": data_text("templates", TEMPLATE_ID, "workspace", "build_index.py").encode(),
                "index.conf.json": (json.dumps(config, indent=2) + "\n").encode(),
                "logs/last_run.log": log.encode(),
            },
            protected=["tools/build_index.py", "logs/last_run.log"],
            tests=verifier_files(TEMPLATE_ID, expected, self.spec.rubric),
            solution_steps=["python3 /solution/repair.py"],
            solution_files=solution_files(TEMPLATE_ID, ("repair.py",), with_skillmd=False),
            alternatives={"broad-configuration": ["python3 /solution/repair.py --broad"]},
            blueprint=blueprint,
            params={"headings": len(found), "fault": "hidden"},
        )


def _symptoms(fault: str, config: dict[str, object], found: list[dict[str, object]],
              missing: list[dict[str, object]]) -> str:
    if fault == "skill_file":
        return (
            "$ python3 tools/build_index.py\nTraceback (most recent call last):\n"
            f"FileNotFoundError: [Errno 2] No such file or directory: '{config['skill_file']}'\n"
            "index.json was not updated\n"
        )
    lines = ", ".join(str(h["line"]) for h in missing)
    return (
        "$ python3 tools/build_index.py\n"
        f"indexed {len(found) - len(missing)} headings into index.json\n"
        f"portal check FAILED: the skill document has {len(found)} headings, the index lists "
        f"{len(found) - len(missing)}; headings at SKILL.md lines {lines} are absent\n"
    )


def _instruction(card: SkillCard) -> str:
    return f"""# Repair the `{card.name}` index build

The documentation portal shows an incomplete or stale heading index for the `{card.name}` skill
(installed in your skills directory as `{card.dir_name}/SKILL.md`). The last run's output is in
`/app/logs/last_run.log`. The indexing tool `/app/tools/build_index.py` is known to be correct;
it is driven by `/app/index.conf.json`.

1. Find the configuration setting that causes the problem and fix `/app/index.conf.json`
   (do not modify the tool or the log) so that every heading of the skill's `SKILL.md` is indexed.
2. Rebuild the index by running `python3 tools/build_index.py` in `/app`, producing `/app/index.json`.
3. Write `/app/diagnosis.json` as `{{"faulty_key": "<the configuration key that was wrong>"}}`.
"""
