"""The builder agent loop: chat with tools until the model finishes, skips or runs out of turns,
then turn the draft into template-shaped output the package writer understands."""

from __future__ import annotations

import logging
import shutil
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import ValidationError
from skillgym_core.builtin_verifier import runner_text
from skillgym_core.llm import LLMClient
from skillgym_core.sandbox.base import Sandbox

from skillgym_builder.agent.draft import TOOLS, Draft
from skillgym_builder.agent.prompts import SYSTEM, brief
from skillgym_builder.blueprint import Blueprint
from skillgym_builder.errors import BuildError, UnsuitableSkillError
from skillgym_builder.skillcard import SkillCard
from skillgym_builder.templates.base import TemplateOutput, TemplateSpec

log = logging.getLogger(__name__)


# builds a draft into a task and runs it: {"passed": bool, "problems": [...], ...}
DraftCheck = Callable[[SkillCard, TemplateSpec, TemplateOutput], dict[str, Any]]


@dataclass(frozen=True)
class Seed:
    """The family's seed task the agent starts from: an instance for this very skill (the draft
    starts as a copy) or, when the family does not fit it, an instance for the family's own
    example skill (read-only, as a model of the checker style)."""

    root: Path
    for_this_skill: bool
    family: str


@dataclass
class AuthoredTask:
    output: TemplateOutput
    new_pattern: dict[str, Any] | None
    turns: int
    usage: dict[str, float | int] = field(default_factory=dict)


class LLMTaskAuthor:
    def __init__(
        self, client: LLMClient, sandbox: Sandbox, *, max_turns: int = 40, check: DraftCheck | None = None,
        max_checks: int = 3,
    ) -> None:
        self.client = client
        self.sandbox = sandbox
        self.max_turns = max_turns
        self.check = check
        self.max_checks = max_checks

    def author(
        self,
        card: SkillCard,
        spec: TemplateSpec,
        blueprint: Blueprint,
        patterns: list[dict[str, str]],
        workdir: Path,
        *,
        seed: Seed | None = None,
        previous: Path | None = None,
        feedback: dict[str, Any] | None = None,
        diagnosis: dict[str, Any] | None = None,
    ) -> AuthoredTask:
        skills = workdir / "skills" / card.dir_name
        shutil.copytree(card.root, skills)
        draft = Draft(workdir / "draft", skills, self.sandbox, seed.root if seed else None)
        if previous is not None:
            draft.seed_from(previous)
        elif seed is not None and seed.for_this_skill:
            draft.seed_from(seed.root)
        draft.write("tests/checks.py", runner_text("checks.py"))
        messages: list[dict[str, Any]] = [
            {"role": "system", "content": SYSTEM},
            {"role": "user", "content": brief(card, spec, blueprint, patterns, seed=seed, feedback=feedback,
                                              diagnosis=diagnosis)},
        ]
        checks: list[dict[str, Any]] = []
        seeded = previous is not None or (seed is not None and seed.for_this_skill)
        for turn in range(1, self.max_turns + 1):
            response = self.client.chat(messages, tools=TOOLS)
            messages.append(response.assistant_message())
            if not response.tool_calls:
                if turn == 1:
                    raise BuildError(f"builder agent answered without calling a tool: {response.content[:200]!r}",
                                     reason="agent_no_tool_calls")
                return self._submit(draft, blueprint, turn, checks, seeded=seeded)
            for call in response.tool_calls:
                if call.name == "skip":
                    raise UnsuitableSkillError(
                        f"builder agent: {call.arguments.get('reason', 'no reason given')}", skill=card.name
                    )
                if call.name == "finish":
                    failed = self._finish_check(card, spec, draft, blueprint, checks)
                    if failed is None:
                        return self._submit(draft, blueprint, turn, checks, seeded=seeded)
                    content = failed
                elif call.name == "validate":
                    content = self._validate(card, spec, draft, blueprint, checks)
                else:
                    content = self._tool(draft, call.name, call.arguments)
                messages.append({"role": "tool", "tool_call_id": call.id, "content": content})
        raise BuildError(f"builder agent did not finish within {self.max_turns} turns", reason="agent_turns")

    def _validate(self, card: SkillCard, spec: TemplateSpec, draft: Draft, blueprint: Blueprint,
                  checks: list[dict[str, Any]]) -> str:
        if self.check is None:
            return "validation is not available here; check with run_command"
        if len(checks) >= self.max_checks:
            return f"validation budget spent ({self.max_checks} runs)"
        try:
            output = self._collect(draft, blueprint, 0, checks).output
        except BuildError as exc:
            result: dict[str, Any] = {"passed": False, "problems": [str(exc)]}
        else:
            result = self.check(card, spec, output)
        checks.append({**result, "at_change": draft.changes})
        if result["passed"]:
            return "validation passed: the untouched workspace fails and the reference solution passes"
        return "validation failed:\n- " + "\n- ".join(str(p) for p in result["problems"])

    def _finish_check(self, card: SkillCard, spec: TemplateSpec, draft: Draft, blueprint: Blueprint,
                      checks: list[dict[str, Any]]) -> str | None:
        """None when the draft may be submitted; else the failed validation, so the agent repairs it
        (while the validation budget lasts)."""
        current = bool(checks) and checks[-1]["passed"] and checks[-1]["at_change"] == draft.changes
        if self.check is None or len(checks) >= self.max_checks or current:
            return None
        report = self._validate(card, spec, draft, blueprint, checks)
        return None if checks[-1]["passed"] else report + "\nRepair the draft, then call finish again."

    def _tool(self, draft: Draft, name: str, args: dict[str, Any]) -> str:
        try:
            if name == "write_file":
                return draft.write(str(args["path"]), str(args.get("content", "")))
            if name == "delete_file":
                return draft.delete(str(args["path"]))
            if name == "read_file":
                return draft.read(str(args["path"]))
            if name == "list_files":
                return draft.listing()
            if name == "run_command":
                return draft.run(str(args["command"]))
        except (KeyError, BuildError) as exc:
            return f"error: {exc}"
        return f"error: unknown tool {name!r}"

    def _submit(self, draft: Draft, base: Blueprint, turns: int, checks: list[dict[str, Any]], *,
                seeded: bool) -> AuthoredTask:
        """The finished draft; a draft that is still the family's (or the previous revision's)
        files untouched was not built by the agent, so it is no LLM build."""
        if seeded and draft.changes == 0:
            raise BuildError("builder agent finished without changing the task it started from",
                             reason="agent_no_changes")
        return self._collect(draft, base, turns, checks)

    def _collect(self, draft: Draft, base: Blueprint, turns: int, checks: list[dict[str, Any]]) -> AuthoredTask:
        missing = [rel for rel in ("instruction.md", "tests/test.sh", "solution/solve.sh") if not (draft.root / rel).is_file()]
        if missing:
            raise BuildError(f"builder agent finished without {', '.join(missing)}", reason="draft_incomplete")
        plan = draft.plan()
        try:
            blueprint = Blueprint.model_validate({**base.model_dump(), **(plan.get("blueprint") or {}),
                                                  "patterns": base.patterns})
        except ValidationError as exc:
            raise BuildError(f"task_plan.json blueprint is invalid: {exc}", reason="draft_invalid") from exc
        workspace = draft.files("environment/workspace")
        protected = [p for p in plan.get("protected", []) if isinstance(p, str) and p in workspace]
        solution = draft.files("solution")
        script = solution.pop("solve.sh").decode("utf-8", "replace")
        tests = draft.files("tests")
        requirements_file = draft.root / "environment" / "requirements.txt"
        requirements = [line.strip() for line in requirements_file.read_text().splitlines()
                        if line.strip() and not line.lstrip().startswith("#")] if requirements_file.is_file() else []
        claim = plan.get("skill_claim") if isinstance(plan.get("skill_claim"), dict) else None
        output = TemplateOutput(
            instruction=(draft.root / "instruction.md").read_text(),
            workspace=workspace,
            protected=protected,
            tests=tests,
            solution_steps=[],
            solution_files=solution,
            blueprint=blueprint,
            params={"agent_turns": turns},
            solve_script=script,
            requirements=requirements,
            metadata={"llm_validation": checks[-1] if checks else None,
                      **({"skill_claim": claim} if claim is not None else {})},
        )
        new_pattern = plan.get("new_pattern") if isinstance(plan.get("new_pattern"), dict) else None
        return AuthoredTask(output, new_pattern, turns, self.client.usage.to_dict())
