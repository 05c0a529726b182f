"""The reviewer service: builds and runs each task, approves it or sends typed feedback."""

from skillgym_reviewer.service import ReviewerService
from skillgym_reviewer.settings import ReviewerSettings

__all__ = ["ReviewerService", "ReviewerSettings"]
