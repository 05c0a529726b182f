"""What the builder agent is told."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

from skillgym_builder.blueprint import Blueprint
from skillgym_builder.skillcard import SkillCard
from skillgym_builder.templates.base import TemplateSpec

if TYPE_CHECKING:
    from skillgym_builder.agent.author import Seed

SYSTEM = """You write executable practice tasks (Harbor task directories) from agent skills.
Work only through the tools. Write these files in the draft:
- instruction.md: what the solver must do, in English, without mentioning the verifier, the
  reference solution, or any file under tests/ or solution/;
- environment/workspace/...: the initial files the solver finds in /app, generated inputs with planted,
  checkable properties (not text copied from the skill);
- environment/requirements.txt: Python packages the task needs (the skill's own library), one per line;
- tests/test.sh: the verifier entry point; it must always write /logs/verifier/reward.txt (a number)
  or /logs/verifier/reward.json. tests/checks.py is provided: `run([(name, fn), ...])` writes a
  weighted rubric from tests/rubric.json ({"name","weight","kind"} items, weights sum to 1);
- solution/solve.sh: a reference solution that works the way a solver would (read the skill, inspect the
  inputs, write and run a script); solution/alternatives/*.sh: at least one other valid solution
  (another method) that the verifier also accepts;
- tests/equivalences.json (optional): meaning-preserving changes of each output the verifier accepts,
  e.g. {"out/result.json": ["reformat_json", "reorder_keys", "reorder_lists"]};
- task_plan.json: {"protected": [workspace paths the solver must not change],
  "skill_claim": {"claimed": true|false, "reason": why the reference solution cannot succeed without the skill},
  "blueprint": {"goal","challenge","environment_facts","information_boundary",
  "acceptance_criteria","execution_requirements"}, "new_pattern": optional {"id","demand","name","description"}}.
Requirements: the verifier fails the untouched workspace and passes the reference solution; it
rejects wrong, empty, partial or forged answers and accepts equivalent correct ones; answers
never appear in the instruction, the workspace or the skill; the task needs the skill's content.
The verifier never executes the solver's code or runs git on the solver's repository directly: it uses
`run_untrusted([...])` and `git(...)` from tests/checks.py, which run them without the right to read
tests/ or write /logs; it writes both reward files, which must agree. The reviewer reads test.sh,
the Python it starts and the test modules that imports, and refuses any other way of running the
solver's code (subprocess, os.system, runpy, importlib, /app on sys.path, pytest from test.sh).
The instruction states the goal, not the procedure: using the skill must be the shortest path.
The verifier and solution run without network. You start from a seed task of a task family (see the
brief): keep its checker style (tests/checks.py rubric, hidden expected values, structural comparison
with tolerances, protected inputs) and its limits. Check your work with run_command (the draft is at
/draft, the skill at /skills, the seed task at /seed) and with validate, which runs the task as the
reviewer will. If the skill cannot support such a task, call skip with the reason. Call finish when done."""


def _seed_text(seed: Seed, spec: TemplateSpec) -> str:
    rubric = ", ".join(f"{item.name} ({item.weight:g})" for item in spec.rubric)
    where = (
        "The draft starts as this family's task for this very skill: adapt it (make it use what the skill "
        "teaches, its scripts where it ships them) rather than starting over."
        if seed.for_this_skill else
        "No family fits this skill, so the seed is the family's task for its own example skill, read-only under "
        "seed/: write a new task for this skill in the same style."
    )
    limits = spec.limits
    return (
        f"Task family `{seed.family}`: {spec.title}. {spec.description}\n{where}\n"
        f"Checker rubric of the family: {rubric}. Limits: agent {limits.agent_timeout_sec:g}s, verifier "
        f"{limits.verifier_timeout_sec:g}s, {limits.memory_mb} MB."
    )


def brief(
    card: SkillCard,
    spec: TemplateSpec,
    blueprint: Blueprint,
    patterns: list[dict[str, str]],
    *,
    seed: Seed | None = None,
    feedback: dict[str, object] | None = None,
    diagnosis: dict[str, object] | None = None,
) -> str:
    parts = [
        f"Skill `{card.name}` ({card.record.description}) is available read-only as skill/ "
        f"(in commands: /skills/{card.dir_name}/). Its files:\n"
        + "\n".join(f"- {f.path} ({f.size} bytes)" for f in card.record.files[:60]),
        _seed_text(seed, spec) if seed is not None else f"Task profile: {spec.profile} ({spec.title}). {spec.description}",
        "Blueprint to refine:\n" + json.dumps(blueprint.model_dump(), indent=2),
    ]
    if patterns:
        parts.append("Difficulty patterns to apply:\n" + "\n".join(f"- {p['id']}: {p['description']}" for p in patterns))
    if feedback:
        parts.append(
            "Reviewer feedback on the previous revision (its files are already in the draft; fix them):\n"
            + json.dumps(feedback, indent=2)
        )
    if diagnosis:
        parts.append(
            "Hardening: solvers found the previous revision easy. Diagnosis of their solved runs:\n"
            + json.dumps(diagnosis, indent=2)
            + "\nUpdate blueprint, instruction, workspace and verifier together so the shortcut no longer works."
        )
    return "\n\n".join(parts)
