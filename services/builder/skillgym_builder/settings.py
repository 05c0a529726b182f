"""Builder settings (env prefix ``SKILLGYM_``)."""

from __future__ import annotations

from typing import Literal

from pydantic import Field, SecretStr
from skillgym_core.llm import ToolCallFormat
from skillgym_core.settings import CommonSettings


class BuilderSettings(CommonSettings):
    builder_llm_base_url: str | None = Field(None, description="OpenAI-compatible endpoint; unset = families only")
    builder_llm_model: str = Field("default", description="model name sent to the builder endpoint")
    builder_llm_api_key: SecretStr = SecretStr("")
    builder_llm_timeout_s: float = 300.0
    builder_llm_max_turns: int = Field(40, ge=1)
    builder_llm_max_validations: int = Field(3, ge=0, description="draft validation runs per LLM build")
    builder_llm_tool_call_format: ToolCallFormat = Field(
        "auto", description="where tool calls are read: native tool_calls, or text in one format (hermes, llama3, "
        "mistral, json; auto = native, else detected)")
    require_llm: bool = Field(False, description="a build the builder agent fails is an error (llm_required), "
                                                 "not a fallback to the family instance or a text template")
    preferred_templates: list[str] = Field(
        default_factory=list,
        description="the build plan: family ids tried first; the text templates are used only when named here",
    )
    family_difficulty: Literal["easy", "medium", "hard"] = Field("easy", description="knob preset of a first build")
    instances_per_skill: int = Field(1, ge=1, le=64, description="family tasks built per skill: instances of the "
                                                                  "chosen family from distinct seeds, each its own task")
    check_skill_dependence: bool = Field(True, description="run the reference solution with the skill hidden")
    max_hardening_rounds: int = Field(2, ge=0)
    max_revisions: int = Field(8, ge=1, description="revisions of one task lineage the builder makes at most")
    patterns_per_task: int = Field(1, ge=0, description="difficulty patterns applied to a first template build")
