"""writing/business-communication: a team's weekly update written from a tracker export, a
metrics export and meeting notes, in the update format the skill prescribes (its sections and
their order, header line, sentence limits, banned terms). Planted facts must land in the right
section; decoys (another team's work, last week's work, superseded figures, later work) and a
draft's planted errors must stay out."""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import random
import re
from importlib import resources
from typing import Any

from skillgym_builder.families import comms_template
from skillgym_builder.families import knobs as knob_rules
from skillgym_builder.families.base import Fit, SkillClaim, load_family_spec
from skillgym_builder.families.common import agent_solution, requirements, rubric, source, verifier_files
from skillgym_builder.families.comms_sources import Generator, Sources
from skillgym_builder.families.evidence import SkillEvidence, assess
from skillgym_builder.skillcard import SkillCard
from skillgym_builder.templates.base import TemplateOutput

FAMILY_ID = "comms-draft"
SKILL_SHINGLE, SOURCE_SHINGLE = 8, 20
# the format stated in the instruction when the skill prescribes none
PLAIN_FORMAT: dict[str, Any] = {
    "style": "lines", "level": 0, "source": None, "banned": [], "header_placeholder": None,
    "header": {"team": True, "dates": True, "emoji": False},
    "sections": [{"label": label, "kind": kind, "max_sentences": 3, "placeholder": ""}
                 for label, kind in (("Done", "progress"), ("Next", "plans"), ("Blocked", "problems"))],
}


def shingles(text: str, size: int) -> set[str]:
    """Hashes of every run of ``size`` words: how the verifier spots pasted text without holding it."""
    words = re.findall(r"[a-z0-9]+", text.casefold())
    return {hashlib.sha256(" ".join(words[i:i + size]).encode()).hexdigest()[:12]
            for i in range(max(0, len(words) - size + 1))}


def comms_evidence(card: SkillCard, terms: list[str]) -> list[str]:
    return [t for t in terms if re.search(t, card.skill_md, re.I)]


class CommsDraftFamily:
    def __init__(self) -> None:
        self.spec = load_family_spec(FAMILY_ID)

    def skill_format(self, card: SkillCard) -> dict[str, Any] | None:
        return comms_template.read_format(comms_template.skill_files(str(card.root)))

    def suitability(self, card: SkillCard) -> Fit:
        verdict = assess(self.spec, SkillEvidence.of(card))
        if not verdict.fits or verdict.code != "subcategory":
            return verdict
        # a served subcategory alone is not enough: the skill must be about writing communications
        if self.skill_format(card) or comms_evidence(card, self.spec.fit.terms):
            return verdict
        return Fit(family=self.spec.id, fits=False, code="subcategory_not_served",
                   reason=f"classified {card.record.subcategory}, but SKILL.md describes no update, report or "
                          "announcement to write and prescribes no update format")

    def instantiate(self, card: SkillCard, seed: int, knobs: dict[str, float]) -> TemplateOutput:
        values = knob_rules.validate(self.spec, knobs)
        rng = random.Random(f"{FAMILY_ID}:{card.record.skill_id}:{seed}")
        found = self.skill_format(card)
        fmt = found or PLAIN_FORMAT
        generator = Generator(rng, values)
        src = generator.build(list(fmt["banned"]))
        labels = {s["kind"]: s["label"] for s in fmt["sections"]}
        facts = _facts(src, labels)
        word_limit = 60 + 22 * len(facts)
        period = {"team": generator.team, "start": generator.start.isoformat(), "end": generator.end.isoformat(),
                  "next_start": generator.next_days[0].isoformat(), "next_end": generator.next_days[-1].isoformat()}
        skill_text = "\n".join(comms_template.skill_files(str(card.root)).values())
        prose = "\n".join(src.files[p].decode() for p in src.prose)
        expected = {**period, "format": fmt, "word_limit": word_limit, "facts": facts, "absent": src.absent,
                    "absent_in": [{**a, "section": labels[a["kind"]]} for a in src.absent_in],
                    "copied": {"skill": sorted(shingles(skill_text, SKILL_SHINGLE)), "skill_size": SKILL_SHINGLE,
                               "sources": sorted(shingles(prose, SOURCE_SHINGLE)), "sources_size": SOURCE_SHINGLE}}
        facts_claimed = {"update_format": found["source"]} if found else {}
        if found and found["banned"]:
            facts_claimed["banned_terms"] = "SKILL.md"
        claim = SkillClaim(
            claimed=bool(found), facts=facts_claimed,
            reason="the update's sections, their order, header and limits come from the skill's template" if found
            else "the skill prescribes no update format; the instruction states one")
        task = {**period, "word_limit": word_limit, "format": None if found else fmt}
        argument = json.dumps(task)
        helper = {"comms_template.py": resources.files("skillgym_builder.families").joinpath(
            "comms_template.py").read_text(encoding="utf-8")}
        inspect = ["ls -R sources", "head -5 sources/tracker.csv", "cat sources/meeting-notes.md"]
        solve = agent_solution(card, inspect=inspect, helpers=helper, script=source(FAMILY_ID, "solve_lines.py"),
                               name="write_update.py", run=f"python3 /tmp/work/write_update.py '{argument}'")
        alternative = agent_solution(card, inspect=inspect[:1], helpers=helper,
                                     script=source(FAMILY_ID, "solve_template.py"), name="write_update.py",
                                     run=f"python3 /tmp/work/write_update.py '{argument}'")
        items = rubric(self.spec, ["format", "content"])
        reqs, skipped = requirements(self.spec, card)
        return TemplateOutput(
            instruction=_instruction(card, period, found is not None, fmt, word_limit, sorted(src.files)),
            workspace=src.files,
            protected=sorted(src.files),
            tests=verifier_files(self.spec, expected, items),
            solution_steps=[],
            solve_script=solve,
            alternative_scripts={"string-template": alternative},
            blueprint=self.spec.blueprint,
            params={"tracker_rows": int(values["record_count"]), "facts": len(facts), "decoys": len(src.absent),
                    "style": fmt["style"]},
            requirements=reqs,
            equivalences={k: list(v) for k, v in self.spec.equivalences.items()},
            metadata={"skill_claim": claim.model_dump(), "skill_dependencies_skipped": skipped,
                      "rubric": [i.model_dump() for i in items]},
        )


def _facts(src: Sources, labels: dict[str, str]) -> list[dict[str, str]]:
    metrics_at = labels.get("metrics", labels["progress"])
    return ([{"section": labels["progress"], "key": item.key} for item in src.done]
            + [{"section": labels["plans"], "key": item.key, "date": day.isoformat()} for item, day in src.plans]
            + [{"section": labels["problems"], "key": item.key, "name": item.owner} for item in src.blocked]
            + [{"section": metrics_at, "number": value} for _, value, _ in src.metrics])


def _day(iso: str) -> str:
    return dt.date.fromisoformat(iso).strftime("%A %d %B %Y").replace(" 0", " ")


def _instruction(card: SkillCard, period: dict[str, str], from_skill: bool, fmt: dict[str, Any], word_limit: int,
                 files: list[str]) -> str:
    team = period["team"]
    if from_skill:
        layout = (f"Use the format the `{card.name}` skill in your skills directory prescribes for a team's weekly "
                  "update: its header, its sections in their order, and every limit and wording rule it sets. "
                  "Nothing outside that format.")
    else:
        layout = ("Format: a first line with the team name and the period's first and last day, then exactly three "
                  "lines `Done: ...`, `Next: ...` and `Blocked: ...`, each at most 3 sentences. Nothing else.")
    draft = ("\nA colleague started a draft in `/app/drafts/update-draft.md`. It is not in the right format and some of "
             "its facts are wrong; check everything against the sources.\n" if "drafts/update-draft.md" in files else "")
    listed = "\n".join(f"- `/app/{name}`" for name in files)
    return f"""# Write the {team} weekly update

Leadership wants this week's update from the **{team}** team, covering {_day(period['start'])} to
{_day(period['end'])}. Write it in Markdown to `/app/out/update.md`.

{layout}

The sources:

{listed}
{draft}
What the update must say:

- progress: every {team} tracker item completed within the period, cited by its key (like `PLAT-123`), and
  the current value of each {team} metric (in the metrics section, where the format has one);
- plans: every open {team} item due next week ({_day(period['next_start'])} to {_day(period['next_end'])}),
  with its key and due date;
- problems: every blocked {team} item, with its key and its owner's full name.

The meeting notes are newer than the exports: where they move a date, unblock an item or correct a figure,
they win. Write dates as `YYYY-MM-DD` or with the month's name (`3 June`, `June 3`) and figures with their
exact exported or corrected values. Leave out other teams' work, work finished before the period, work due later, and superseded or
corrected figures. Stay within {word_limit} words, and write it in your own words rather than pasting the
sources or the skill. Do not modify anything under `/app/sources/`{' or `/app/drafts/`' if draft else ''}.
"""
