"""The common library every SkillGym service builds on: contracts, backends, settings."""

__version__ = "0.1.0"
