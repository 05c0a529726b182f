"""productivity/note-taking and knowledge-management: a generated Markdown vault (front matter,
wikilinks with aliases and headings, inline tags, tasks with due dates) is indexed into JSON
(backlinks, orphans, broken links, duplicate titles, tag counts, overdue tasks) and an index
page laid out the way the skill prescribes; the verifier recomputes everything from the vault."""

from __future__ import annotations

import json
import random
import re

from skillgym_builder.families import knobs as knob_rules
from skillgym_builder.families.base import Fit, SkillClaim, load_family_spec
from skillgym_builder.families.common import agent_solution, requirements, rubric, skill_helpers, source, verifier_files
from skillgym_builder.families.evidence import SkillEvidence, assess
from skillgym_builder.families.notes_vault_assets import make_vault
from skillgym_builder.families.skillfacts import Fact, body_lines
from skillgym_builder.skillcard import SkillCard, clean_inline
from skillgym_builder.templates.base import TemplateOutput

FAMILY_ID = "notes-vault"
DEFAULT_SECTIONS = ["Orphans", "Broken links", "Overdue tasks"]
_HEADING = re.compile(r"^(#{1,6})\s+(.+?)\s*#*\s*$")
_NUMBERED = re.compile(r"^\s{0,3}\d+[.)]\s+(.+)$")
_INDEX_TITLE = re.compile(r"\b(index|hub|review|overview)\b.*\b(sections?|layout|structure|outline|page|note)\b", re.I)
ROLES = {"orphans": r"orphan|unlinked|isolated", "broken": r"broken|dead|missing",
         "tasks": r"task|overdue|late|due|attention", "tags": r"\btags?\b"}


def section_roles(sections: list[str]) -> dict[str, str]:
    """Which section lists the orphans, the broken targets, the overdue tasks and the tags (first match wins)."""
    roles: dict[str, str] = {}
    for role, pattern in ROLES.items():
        match = next((s for s in sections if re.search(pattern, s, re.I) and s not in roles.values()), None)
        if match:
            roles[role] = match
    return roles


def index_sections(card: SkillCard) -> Fact | None:
    """The numbered section list under a heading like "Index page layout". Mirrored by
    ``data/families/notes-vault/vaultfacts.py``."""
    lines = body_lines(card.skill_md)
    for position, (number, raw) in enumerate(lines):
        heading = _HEADING.match(raw)
        if not heading or not _INDEX_TITLE.search(clean_inline(heading.group(2))):
            continue
        items = []
        for _, text in lines[position + 1 :]:
            if _HEADING.match(text):
                break
            if numbered := _NUMBERED.match(text):
                items.append(re.split(r"\s+[-\u2013\u2014:]\s+|:\s", clean_inline(numbered.group(1)))[0].strip())
        if 3 <= len(items) <= 10 and all(0 < len(i) <= 40 for i in items):
            return Fact(items, number)
    return None


class NotesVaultFamily:
    def __init__(self) -> None:
        self.spec = load_family_spec(FAMILY_ID)

    def suitability(self, card: SkillCard) -> Fit:
        return assess(self.spec, SkillEvidence.of(card))

    def instantiate(self, card: SkillCard, seed: int, knobs: dict[str, float]) -> TemplateOutput:
        values = knob_rules.validate(self.spec, knobs)
        rng = random.Random(f"{FAMILY_ID}:{card.record.skill_id}:{seed}")
        fact = index_sections(card)
        sections = list(fact.value) if fact and isinstance(fact.value, list) else DEFAULT_SECTIONS
        vault = make_vault(rng, notes=int(values["record_count"]), noise=bool(values["noise_level"]),
                           decoys=bool(values["distractor_files"]), headings=bool(values["multi_step"]),
                           broken_yaml=bool(values["error_recovery"]))
        facts = {"index_sections": fact.source()} if fact else {}
        claim = SkillClaim(claimed=bool(facts), facts=facts,
                           reason="the index page's sections and their order come from the skill" if facts
                           else "the skill prescribes no index layout; the instruction states it")
        expected = {"today": vault.today, "ignored": vault.ignored, "sections": sections, "roles": section_roles(sections)}
        items = rubric(self.spec, ["links", "notes", "tasks", "page"])
        task = {"today": vault.today, "ignored": vault.ignored, "sections": None if facts else sections}
        argument = json.dumps(task)
        helpers = skill_helpers(FAMILY_ID, "vaultfacts.py")
        solve = agent_solution(card, inspect=["find vault -type f | sort | head -60"], helpers=helpers,
                               script=source(FAMILY_ID, "solve_yaml.py"), name="index.py",
                               run=f"python3 /tmp/work/index.py '{argument}'")
        alternative = agent_solution(card, inspect=["ls -R vault | head -40"], helpers=helpers,
                                     script=source(FAMILY_ID, "solve_stdlib.py"), name="index.py",
                                     run=f"python3 /tmp/work/index.py '{argument}'")
        reqs, skipped = requirements(self.spec, card)
        return TemplateOutput(
            instruction=_instruction(card, vault.today, vault.ignored, None if facts else sections),
            workspace={path: text.encode() for path, text in vault.files.items()},
            protected=sorted(vault.files),
            tests=verifier_files(self.spec, expected, items),
            solution_steps=[],
            solve_script=solve,
            alternative_scripts={"stdlib-parser": alternative},
            blueprint=self.spec.blueprint,
            params={"notes": sum(1 for p in vault.files if not any(f"/{d}/" in p for d in vault.ignored))},
            requirements=reqs,
            equivalences={k: list(v) for k, v in self.spec.equivalences.items()},
            metadata={"skill_claim": claim.model_dump(), "skill_dependencies_skipped": skipped,
                      "rubric": [i.model_dump() for i in items]},
        )


def _instruction(card: SkillCard, today: str, ignored: list[str], sections: list[str] | None) -> str:
    outside = ("Folders " + ", ".join(f"`vault/{d}/`" for d in ignored) + " are not part of the vault: ignore their "
               "files entirely.\n") if ignored else ""
    if sections is None:
        layout = (f"lay it out the way the `{card.name}` skill in your skills directory prescribes for an index page "
                  "(its sections, in its order, as `##` headings)")
    else:
        layout = "give it the `##` sections " + ", ".join(f"`{s}`" for s in sections) + ", in this order"
    return f"""# Index the notes vault

`/app/vault/` is a Markdown notes vault. Today is {today}. {outside}
A note is any `.md` file in the vault; its id is its path relative to `/app/vault/` (like `projects/Alpha launch.md`).
Its title is the `title` of its YAML front matter, else its file name without `.md`. A wikilink `[[target]]`
(also `[[target|shown text]]`, `[[target#Heading]]`) points at the note whose file name (or path, when the target
contains `/`) matches the target without any `.md`, ignoring case; if none matches, the link is broken. Text in
code blocks and inline code holds no links, tags or tasks. A note whose front matter does not parse counts
as having none.

Write `/app/out/vault_index.json` with:

- `notes`: the number of notes;
- `backlinks`: note id -> the sorted ids of the other notes linking to it (only notes with at least one);
- `orphans`: sorted ids of notes no other note links to;
- `broken_links`: `{{"source": <note id>, "target": <link target as written, before any # or |>}}` for each
  distinct broken link;
- `duplicate_titles`: lists of the ids of notes sharing a title (ignoring case), each list sorted;
- `tags`: tag (lower case, without `#`) -> the number of notes carrying it, in front matter `tags` or inline
  as `#tag` in the text;
- `overdue_tasks`: `{{"note": <note id>, "task": <text between the checkbox and the 📅>, "due": "YYYY-MM-DD"}}` for
  each open task (`- [ ]`) due before today;
- `invalid_front_matter`: sorted ids of notes whose front matter does not parse.

Also write the index page `/app/out/index.md`: {layout}. Link every orphan in its orphans section and every
broken target in its broken-links section as `[[...]]` wikilinks, give each overdue task's text and due date in
its tasks section and each tag with its count in its tags section; no section is left empty. Do not modify the
vault.
"""
