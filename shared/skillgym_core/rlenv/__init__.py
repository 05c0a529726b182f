"""Validated tasks as RL environments: the episode API's wire models, the reward shaping it
offers, and an HTTP client for it. The server is ``skillgym_envserver``."""

from skillgym_core.rlenv.api import (
    TOOL_SCHEMAS,
    EpisodeLimits,
    EpisodeStarted,
    EpisodeState,
    EpisodeStatus,
    FinishResult,
    RewardMode,
    SampleSpec,
    StartEpisode,
    StepRequest,
    StepResult,
    tool_schemas,
)
from skillgym_core.rlenv.client import EnvClient, EnvServerError

__all__ = [
    "TOOL_SCHEMAS",
    "EnvClient",
    "EnvServerError",
    "EpisodeLimits",
    "EpisodeStarted",
    "EpisodeState",
    "EpisodeStatus",
    "FinishResult",
    "RewardMode",
    "SampleSpec",
    "StartEpisode",
    "StepRequest",
    "StepResult",
    "tool_schemas",
]
