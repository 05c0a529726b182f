"""The builder service: turns an ingested skill into an executable Harbor task."""

from skillgym_builder.service import BuilderService
from skillgym_builder.settings import BuilderSettings

__all__ = ["BuilderService", "BuilderSettings"]
