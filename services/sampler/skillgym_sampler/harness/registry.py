"""Build the harness a run spec names, configured from the sampler settings and the plan."""

from __future__ import annotations

from skillgym_sampler.errors import UnknownHarnessError
from skillgym_sampler.harness.base import Harness, RunSpec
from skillgym_sampler.harness.prompts import PromptVariant
from skillgym_sampler.settings import SamplerSettings

HARNESS_NAMES = ("oracle", "nop", "builtin", "mini-swe-agent", "claude-code", "codex")


def make_harness(
    spec: RunSpec,
    settings: SamplerSettings,
    *,
    variants: dict[str, PromptVariant] | None = None,
    base_url: str | None = None,
) -> Harness:
    if spec.harness == "oracle":
        from skillgym_sampler.harness.reference import OracleHarness

        return OracleHarness(observation_max_chars=settings.observation_max_chars, workdir=settings.reference_workdir)
    if spec.harness == "nop":
        from skillgym_sampler.harness.reference import NopHarness

        return NopHarness()
    llm = settings.llm_settings(model=spec.model, base_url=base_url)
    if spec.harness == "builtin":
        from skillgym_sampler.harness.builtin import BuiltinAgentHarness

        return BuiltinAgentHarness(
            llm,
            variants=variants,
            max_steps=settings.max_steps,
            max_seconds=settings.max_seconds,
            max_total_tokens=settings.max_total_tokens,
            observation_max_chars=settings.observation_max_chars,
        )
    if spec.harness == "mini-swe-agent":
        from skillgym_sampler.harness.miniswe import MiniSweAgentHarness

        return MiniSweAgentHarness(llm, step_limit=settings.miniswe_step_limit, max_seconds=settings.max_seconds)
    if spec.harness == "claude-code":
        from skillgym_sampler.harness.cli import ClaudeCodeHarness

        return ClaudeCodeHarness(llm, command=settings.claude_command, max_seconds=settings.max_seconds)
    if spec.harness == "codex":
        from skillgym_sampler.harness.cli import CodexHarness

        return CodexHarness(llm, command=settings.codex_command, max_seconds=settings.max_seconds)
    raise UnknownHarnessError(f"unknown harness {spec.harness!r}", harness=spec.harness, known=list(HARNESS_NAMES))
