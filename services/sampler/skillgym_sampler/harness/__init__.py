"""Agent harnesses the sampler can drive, chosen by name."""

from skillgym_sampler.harness.base import AgentEnv, AgentRun, Harness, RunSpec
from skillgym_sampler.harness.registry import HARNESS_NAMES, make_harness

__all__ = ["HARNESS_NAMES", "AgentEnv", "AgentRun", "Harness", "RunSpec", "make_harness"]
