"""Dataset statistics over sampled trajectories (funnel, pass rates, Skill-Dep., Appendix-B lengths)."""

from skillgym_sampler.report.build import build_report

__all__ = ["build_report"]
