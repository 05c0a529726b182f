"""What the builder agent is told."""

from __future__ import annotations

import json

from skillgym_builder.blueprint import Blueprint
from skillgym_builder.skillcard import SkillCard
from skillgym_builder.templates.base import TemplateSpec

SYSTEM = """You write executable practice tasks (Harbor task directories) from agent skills.
Work only through the tools. Write these files in the draft:
- instruction.md: what the solver must do, in English, without mentioning the verifier, the
  reference solution, or any file under tests/ or solution/;
- environment/workspace/...: the initial files the solver finds in /app;
- tests/test.sh: the verifier entry point; it must always write /logs/verifier/reward.txt (a number)
  or /logs/verifier/reward.json. tests/checks.py is provided: `run([(name, fn), ...])` writes a
  weighted rubric from tests/rubric.json ({"name","weight","kind"} items, weights sum to 1);
- solution/solve.sh: a reference solution, a few separate commands (bash + python3 stdlib only),
  that derives the answer the way a solver would; optional solution/alternatives/*.sh must be
  other valid solutions that the verifier also accepts;
- task_plan.json: {"protected": [workspace paths the solver must not change],
  "blueprint": {"goal","challenge","environment_facts","information_boundary",
  "acceptance_criteria","execution_requirements"}, "new_pattern": optional {"id","demand","name","description"}}.
Requirements: the verifier fails the untouched workspace and passes the reference solution; it
rejects wrong, empty, partial or forged answers and accepts equivalent correct ones; answers
never appear in the instruction, the workspace or the skill; the task needs the skill's content.
The verifier never executes the solver's code or runs git on the solver's repository directly: it uses
`run_untrusted([...])` and `git(...)` from tests/checks.py, which run them without the right to read
tests/ or write /logs; it writes both reward files, which must agree.
The verifier and solution run without network. Check your work with run_command (the draft is
at /draft, the skill at /skills). If the skill cannot support such a task, call skip with the
reason. Call finish when done."""


def brief(
    card: SkillCard,
    spec: TemplateSpec,
    blueprint: Blueprint,
    patterns: list[dict[str, str]],
    *,
    feedback: dict[str, object] | None = None,
    diagnosis: dict[str, object] | None = None,
) -> str:
    parts = [
        f"Skill `{card.name}` ({card.record.description}) is available read-only as skill/ "
        f"(in commands: /skills/{card.dir_name}/). Its files:\n"
        + "\n".join(f"- {f.path} ({f.size} bytes)" for f in card.record.files[:60]),
        f"Task profile: {spec.profile} ({spec.title}). {spec.description}",
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
