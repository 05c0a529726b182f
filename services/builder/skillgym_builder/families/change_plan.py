"""productivity/task-planning and project-management: a change request against a small generated
repository is planned in the skill's plan template (sections, checklist syntax, item limits);
the plan must name the files the change really touches and none of their look-alikes, and run
the project's CI test command. Project-management instances add a work breakdown whose schedule
(critical path method, with a missing task and a cycle to report) goes into JSON."""

from __future__ import annotations

import hashlib
import json
import random
import re
from typing import Any

from skillgym_builder.families import knobs as knob_rules
from skillgym_builder.families.base import Fit, SkillClaim, family_text, load_family_spec
from skillgym_builder.families.change_plan_assets import breakdown_csv, make_breakdown, make_repo
from skillgym_builder.families.common import agent_solution, requirements, rubric, source, verifier_files
from skillgym_builder.families.evidence import SkillEvidence, assess
from skillgym_builder.families.skillfacts import Fact
from skillgym_builder.skillcard import SkillCard
from skillgym_builder.templates.base import TemplateOutput

FAMILY_ID = "change-plan"
SCHEDULING = "project-management"
DEFAULT_TEMPLATE: dict[str, Any] = {
    "title": "Plan", "sections": ["Summary", "Scope", "Steps", "Questions"], "checklist": "Steps", "marker": "- [ ]",
    "scope": "Scope", "labels": ["In", "Out"], "questions": "Questions", "placeholders": [],
}
_FENCE = re.compile(r"^\s*(```|~~~)")
_CHECKBOX = re.compile(r"^\s*([-*]\s+)?\[ \]\s*(.*)$")
_LABEL = re.compile(r"^\s*[-*]\s+([A-Za-z][\w ]{0,30}):\s*(<[^>]*>)?\s*$")
_BOUNDS = re.compile(r"(\d+)\s*(?:\u2013|\u2014|-|to)\s*(\d+)\s+(?:[\w-]+\s+){0,2}items\b", re.I)
_AT_MOST = re.compile(r"\b(?:max(?:imum)?|at most|up to|no more than)\s*:?\s*(\d+)", re.I)
_VERB_FIRST = re.compile(r"verb[- ]first|imperative|start(?:s|ing)? with (?:a|an) (?:action )?verb", re.I)


def _clean(text: str) -> str:
    return re.sub(r"[*_`]+", "", text).strip()


def plan_template(card: SkillCard) -> Fact | None:
    """The plan template a skill prescribes: a fenced Markdown block with a title, two or more
    sections and a checkbox list, plus the item bounds, the question limit and the verb-first
    rule stated around it. Mirrored by ``data/families/change-plan/planfacts.py``."""
    lines = card.skill_md.replace("\r\n", "\n").split("\n")
    start = 0
    if lines and lines[0].strip() == "---":
        start = next((i + 1 for i in range(1, len(lines)) if lines[i].strip() in ("---", "...")), 0)
    prose: list[str] = []
    blocks: list[tuple[int, list[str]]] = []
    block: list[str] | None = None
    for index in range(start, len(lines)):
        if _FENCE.match(lines[index]):
            if block is None:
                block, first = [], index + 2
            else:
                blocks.append((first, block))
                block = None
            continue
        (prose if block is None else block).append(lines[index])
    for first, body in blocks:
        template = _template_of(body)
        if template:
            text = "\n".join(_clean(line) for line in prose)
            return Fact({**template, **_limits(text, template)}, first)
    return None


def _template_of(body: list[str]) -> dict[str, Any] | None:
    titles = [line[2:].strip() for line in body if re.match(r"^#\s+\S", line)]
    sections: dict[str, list[str]] = {}
    current = None
    for line in body:
        heading = re.match(r"^##\s+(.+?)\s*$", line)
        if heading:
            current = _clean(heading.group(1))
            sections[current] = []
        elif current is not None and line.strip():
            sections[current].append(line)
    checklist = next((name for name, rows in sections.items() if any(_CHECKBOX.match(r) for r in rows)), None)
    if len(titles) != 1 or len(sections) < 2 or checklist is None:
        return None
    marker_line = next(r for r in sections[checklist] if _CHECKBOX.match(r))
    labelled = {name: [m.group(1).strip() for r in rows if (m := _LABEL.match(r))] for name, rows in sections.items()}
    scope = next((name for name, labels in labelled.items() if len(labels) >= 2), None)
    # the whole template: a placeholder under the title, before the first section, is one too
    placeholders = sorted({p.strip() for line in body for p in re.findall(r"<([^>]+)>", line)})
    return {
        "title": _clean(titles[0]), "sections": list(sections), "checklist": checklist,
        "marker": "- [ ]" if re.match(r"^\s*[-*]\s", marker_line) else "[ ]",
        "scope": scope, "labels": labelled[scope] if scope else [],
        "questions": next((n for n in sections if re.search(r"question|unknown", n, re.I)), None),
        "placeholders": placeholders,
    }


def _limits(text: str, template: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    bounds = next((m for m in _BOUNDS.finditer(text) if int(m.group(1)) < int(m.group(2))), None)
    if bounds:
        out["min_items"], out["max_items"] = int(bounds.group(1)), int(bounds.group(2))
    name = template["questions"]
    for line in text.split("\n") if name else []:
        limit = _AT_MOST.search(line)
        if limit and name.casefold() in line.casefold():
            out["max_questions"] = int(limit.group(1))
            break
    if _VERB_FIRST.search(text):
        out["verb_first"] = True
    return out


def digest(path: str) -> str:
    return hashlib.sha256(path.encode()).hexdigest()


class ChangePlanFamily:
    def __init__(self) -> None:
        self.spec = load_family_spec(FAMILY_ID)

    def suitability(self, card: SkillCard) -> Fit:
        return assess(self.spec, SkillEvidence.of(card))

    def instantiate(self, card: SkillCard, seed: int, knobs: dict[str, float]) -> TemplateOutput:
        values = knob_rules.validate(self.spec, knobs)
        rng = random.Random(f"{FAMILY_ID}:{card.record.skill_id}:{seed}")
        fact = plan_template(card)
        from_skill = dict(fact.value) if fact and isinstance(fact.value, dict) else {}
        template = {**DEFAULT_TEMPLATE, "min_items": 4, "max_items": 12, "max_questions": 3, "verb_first": True,
                    **from_skill}
        stated = sorted(k for k in ("min_items", "max_items", "max_questions", "verb_first") if k not in from_skill)
        faults = bool(values["error_recovery"])
        repo = make_repo(rng, modules=int(values["record_count"]), callers=int(values["multi_step"]),
                         decoys=int(values["distractor_files"]), noise=bool(values["noise_level"]), stale_path=faults)
        workspace = {f"repo/{path}": text.encode() for path, text in repo.files.items()}
        workspace["CHANGE_REQUEST.md"] = repo.request.encode()
        scheduling = card.record.subcategory == SCHEDULING
        if scheduling:
            tasks = make_breakdown(rng, 2 * int(values["record_count"]), faults=faults)
            workspace["work/breakdown.csv"] = breakdown_csv(tasks).encode()
        facts = {"plan_template": fact.source()} if fact else {}
        claim = SkillClaim(
            claimed=bool(facts), facts=facts,
            reason="the plan's title, sections, checklist syntax and limits come from the skill's template" if facts
            else "the skill prescribes no plan template; the instruction states the format")
        expected = {"template": template, "affected": sorted(digest(p) for p in repo.affected),
                    "decoys": sorted(digest(p) for p in repo.decoys), "test_command": repo.test_command,
                    "schedule": "work/breakdown.csv" if scheduling else None}
        items = rubric(self.spec, ["template", "files", "validation", *(["schedule"] if scheduling else [])])
        task = {"from_skill": bool(facts), "template": None if facts else template, "schedule": scheduling}
        argument = json.dumps(task)
        helpers = {"planfacts.py": family_text(FAMILY_ID, "planfacts.py")}
        solve = agent_solution(card, inspect=["cat CHANGE_REQUEST.md", "ls -R repo | head -80"], helpers=helpers,
                               script=source(FAMILY_ID, "solve_plan.py"), name="plan.py",
                               run=f"python3 /tmp/work/plan.py '{argument}'")
        alternative = agent_solution(card, inspect=["find repo -name '*.py' | sort"], helpers=helpers,
                                     script=source(FAMILY_ID, "solve_ast.py"), name="plan.py",
                                     run=f"python3 /tmp/work/plan.py '{argument}'")
        reqs, skipped = requirements(self.spec, card)
        return TemplateOutput(
            instruction=_instruction(card, template if not facts else None, stated, scheduling),
            workspace=workspace,
            protected=sorted(workspace),
            tests=verifier_files(self.spec, expected, items),
            solution_steps=[],
            solve_script=solve,
            alternative_scripts={"ast-references": alternative},
            blueprint=self.spec.blueprint,
            params={"modules": int(values["record_count"]), "affected": len(repo.affected),
                    "decoys": len(repo.decoys), "scheduling": scheduling},
            requirements=reqs,
            equivalences={k: list(v) for k, v in self.spec.equivalences.items()
                          if scheduling or not k.endswith(".json")},
            metadata={"skill_claim": claim.model_dump(), "skill_dependencies_skipped": skipped,
                      "rubric": [i.model_dump() for i in items]},
        )


def _format(card: SkillCard, template: dict[str, Any] | None, stated: list[str]) -> str:
    if template is None:
        text = (f"Write it in the format the `{card.name}` skill in your skills directory prescribes: its plan "
                "template's title, sections and checklist syntax, and its limits.")
    else:
        sections = ", ".join(f"`## {s}`" for s in template["sections"])
        text = (f"Write it as Markdown: the title `# {template['title']}`, a short intro paragraph, then the "
                f"sections {sections} in this order. `{template['scope']}` has one `- In:` and one `- Out:` line; "
                f"`{template['checklist']}` holds only checklist items written `{template['marker']} ...`; "
                f"`{template['questions']}` is a bullet list.")
    rules = {"max_items": "Use 4 to 12 checklist items.", "max_questions": "List at most 3 open questions.",
             "verb_first": "Every checklist item starts with a verb (\"Add ...\", \"Update ...\")."}
    return " ".join([text, *(rule for key, rule in rules.items() if key in stated or
                             (key == "max_items" and "min_items" in stated))])


def _instruction(card: SkillCard, template: dict[str, Any] | None, stated: list[str], scheduling: bool) -> str:
    schedule = ""
    if scheduling:
        schedule = """
The team's work breakdown for this change is `/app/work/breakdown.csv` (durations in days; `depends_on` lists
task ids separated by `;`). Write `/app/out/schedule.json` as:

```json
{"tasks": {"<id>": {"earliest_start": 0, "earliest_finish": 3}}, "critical_path": ["<id>", "..."],
 "total_duration": 0, "errors": [], "unscheduled": []}
```

A task with no dependencies starts at day 0 and starts as soon as all its dependencies have finished. The
critical path lists its tasks in order. `errors` reports each problem in the breakdown:
`{"kind": "missing_task", "task": "<id>", "dependency": "<unknown id>"}` for a dependency that names no task
(ignore that dependency) and `{"kind": "cycle", "tasks": [<ids on the cycle, sorted>]}` for tasks that depend
on each other. Tasks on a cycle, and every task that depends on one of them, cannot be scheduled: list them,
sorted, in `unscheduled` and leave them out of `tasks`, the critical path and the total.
"""
    return f"""# Plan the requested change

`/app/CHANGE_REQUEST.md` asks for a change to the project in `/app/repo`. Before anyone codes, write the
implementation plan to `/app/out/plan.md`. {_format(card, template, stated)}

The checklist items must name, by path relative to the repository root (like `src/<package>/<module>.py`),
every source and test file the change touches: each file under `src/` or `tests/` that defines, imports or
calls the function the request changes. Do not list files the change does not touch. One item runs the
project's test suite with the exact command the CI workflow runs, after the items that change code.
{schedule}
Do not modify {"the request, the repository or the work breakdown" if scheduling else "the request or the repository"}.
"""
