"""Prompt variants of the built-in agent: system prompt, tool name, argument name and description.
Varying them diversifies the sampled data (the papers vary system prompts, tool names and schemas)."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

DEFAULT_SYSTEM = """You are an autonomous software agent working in a Linux sandbox without network access.
The task workspace is {workdir}; commands run there with bash through the `{tool_name}` tool, each in a
fresh shell (state such as the current directory does not carry over between calls).
{skills_section}
Work step by step: inspect, act, then check your result. When the task is complete, reply with a short
summary and no tool call."""

TERSE_SYSTEM = """Solve the task in {workdir} using the `{tool_name}` tool (one bash command per call, fresh
shell each time, no network). {skills_section}
Stop calling tools once the result is verified and say what you did."""

SKILLS_SECTION = """Skills are installed under {skills_root}: each folder holds a SKILL.md with a procedure,
plus scripts and references. Read the SKILL.md of a relevant skill before you start.
Available skills:
{skill_list}"""


class PromptVariant(BaseModel):
    model_config = ConfigDict(extra="forbid")
    system_prompt: str = DEFAULT_SYSTEM
    tool_name: str = Field("bash", pattern=r"^[A-Za-z_][A-Za-z0-9_-]{0,63}$")
    argument_name: str = Field("command", pattern=r"^[A-Za-z_][A-Za-z0-9_]{0,63}$")
    tool_description: str = "Run a bash command in the task workspace and return its exit code and output."
    skills_section: str = SKILLS_SECTION

    def tool_definition(self) -> dict[str, Any]:
        return {
            "type": "function",
            "function": {
                "name": self.tool_name,
                "description": self.tool_description,
                "parameters": {
                    "type": "object",
                    "properties": {
                        self.argument_name: {"type": "string", "description": "the bash command to run"}
                    },
                    "required": [self.argument_name],
                },
            },
        }

    def render_system(self, *, workdir: str, skills_root: str | None, skills: list[tuple[str, str]]) -> str:
        section = ""
        if skills_root is not None:
            listing = "\n".join(f"- {name}: {description}" for name, description in skills) or "- (none)"
            section = self.skills_section.format(skills_root=skills_root, skill_list=listing)
        return self.system_prompt.format(workdir=workdir, tool_name=self.tool_name, skills_section=section).strip()


DEFAULT_VARIANTS: dict[str, PromptVariant] = {
    "default": PromptVariant(),
    "terse": PromptVariant(system_prompt=TERSE_SYSTEM),
    "shell-tool": PromptVariant(
        tool_name="run_shell",
        argument_name="cmd",
        tool_description="Execute a shell command (bash) in the workspace; returns exit status and output.",
    ),
}

_FRONT_MATTER = re.compile(r"\A---\s*\n(.*?)\n---", re.S)


def describe_skills(skills_dir: Path | None) -> list[tuple[str, str]]:
    """(name, description) of each skill folder, read from its SKILL.md front matter."""
    if skills_dir is None or not skills_dir.is_dir():
        return []
    found = []
    for skill_md in sorted(skills_dir.glob("*/SKILL.md")):
        text = skill_md.read_text(errors="replace")[:8000]
        description = ""
        match = _FRONT_MATTER.match(text)
        if match:
            for line in match.group(1).splitlines():
                if line.startswith("description:"):
                    description = line.split(":", 1)[1].strip().strip("'\"")
        found.append((skill_md.parent.name, description[:300]))
    return found
