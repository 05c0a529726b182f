"""The sampler: runs agents in real harnesses on validated tasks, verifies every run with the
task's trusted verifier, and stores each run as an ATIF trajectory plus a verification record."""

from skillgym_sampler.service import SamplerService
from skillgym_sampler.settings import SamplerSettings

__all__ = ["SamplerService", "SamplerSettings"]
