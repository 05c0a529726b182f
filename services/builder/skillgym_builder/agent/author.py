"""The builder agent loop: chat with tools until the model finishes, skips or runs out of turns,
then turn the draft into template-shaped output the package writer understands."""

from __future__ import annotations

import logging
import shutil
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import ValidationError
from skillgym_core.llm import LLMClient
from skillgym_core.sandbox.base import Sandbox

from skillgym_builder.agent.draft import TOOLS, Draft
from skillgym_builder.agent.prompts import SYSTEM, brief
from skillgym_builder.blueprint import Blueprint
from skillgym_builder.errors import BuildError, UnsuitableSkillError
from skillgym_builder.skillcard import SkillCard
from skillgym_builder.templates.base import TemplateOutput, TemplateSpec, data_text

log = logging.getLogger(__name__)


@dataclass
class AuthoredTask:
    output: TemplateOutput
    new_pattern: dict[str, Any] | None
    turns: int
    usage: dict[str, float | int] = field(default_factory=dict)


class LLMTaskAuthor:
    def __init__(self, client: LLMClient, sandbox: Sandbox, *, max_turns: int = 40) -> None:
        self.client = client
        self.sandbox = sandbox
        self.max_turns = max_turns

    def author(
        self,
        card: SkillCard,
        spec: TemplateSpec,
        blueprint: Blueprint,
        patterns: list[dict[str, str]],
        workdir: Path,
        *,
        previous: Path | None = None,
        feedback: dict[str, Any] | None = None,
        diagnosis: dict[str, Any] | None = None,
    ) -> AuthoredTask:
        skills = workdir / "skills" / card.dir_name
        shutil.copytree(card.root, skills)
        draft = Draft(workdir / "draft", skills, self.sandbox)
        if previous is not None:
            draft.seed_from(previous)
        draft.write("tests/checks.py", data_text("verifier", "checks.py"))
        messages: list[dict[str, Any]] = [
            {"role": "system", "content": SYSTEM},
            {"role": "user", "content": brief(card, spec, blueprint, patterns, feedback=feedback, diagnosis=diagnosis)},
        ]
        for turn in range(1, self.max_turns + 1):
            response = self.client.chat(messages, tools=TOOLS)
            messages.append(response.assistant_message())
            if not response.tool_calls:
                return self._collect(draft, blueprint, turn)
            for call in response.tool_calls:
                if call.name == "skip":
                    raise UnsuitableSkillError(
                        f"builder agent: {call.arguments.get('reason', 'no reason given')}", skill=card.name
                    )
                if call.name == "finish":
                    return self._collect(draft, blueprint, turn)
                messages.append({"role": "tool", "tool_call_id": call.id, "content": self._tool(draft, call.name, call.arguments)})
        raise BuildError(f"builder agent did not finish within {self.max_turns} turns", reason="agent_turns")

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

    def _collect(self, draft: Draft, base: Blueprint, turns: int) -> AuthoredTask:
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
        )
        new_pattern = plan.get("new_pattern") if isinstance(plan.get("new_pattern"), dict) else None
        return AuthoredTask(output, new_pattern, turns, self.client.usage.to_dict())
