"""The reviewer service: builds and runs each task, approves it or sends typed feedback."""

from skillgym_reviewer.report import GateResult, ReviewReport
from skillgym_reviewer.service import ReviewerService
from skillgym_reviewer.settings import ReviewerSettings
from skillgym_reviewer.taskdir import DirReviewer, TaskDirError, review_task_dir, verify_task_workspace

__all__ = [
    "DirReviewer",
    "GateResult",
    "ReviewReport",
    "ReviewerService",
    "ReviewerSettings",
    "TaskDirError",
    "review_task_dir",
    "verify_task_workspace",
]
