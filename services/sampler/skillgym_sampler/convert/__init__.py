"""Converters from harness logs (mini-swe-agent, Claude Code, Codex) to ATIF."""

from skillgym_sampler.convert.claude import claude_session_to_atif
from skillgym_sampler.convert.codex import codex_rollout_to_atif
from skillgym_sampler.convert.miniswe import miniswe_to_atif

__all__ = ["claude_session_to_atif", "codex_rollout_to_atif", "miniswe_to_atif"]
