"""Typed errors of the trainer."""

from __future__ import annotations

from skillgym_core.errors import ContractError, SkillGymError


class ExportError(ContractError):
    """A trajectory cannot be turned into a training example."""

    reason = "export"


class HiddenPathError(ExportError):
    """A training example names a path the agent never sees (the solution, tests or verifier logs)."""

    reason = "hidden_path_reference"


class DatasetError(SkillGymError):
    """A dataset cannot be built or read (empty after filters, unknown format...)."""

    reason = "dataset"


class TrainingError(SkillGymError):
    """Training could not run (bad configuration, nothing to train on, backend failure)."""

    reason = "training"


class LaunchError(SkillGymError):
    """A training job could not be handed to the cluster."""

    reason = "launch"
