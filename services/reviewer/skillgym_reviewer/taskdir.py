"""Reviewing task directories already on disk (Harbor layout), outside the event pipeline:
every reviewer gate, as the service runs them, on each directory. Also runs only the trusted
verifier on a given final workspace."""

from __future__ import annotations

import tempfile
from pathlib import Path

from skillgym_core.contracts.events import EnvBuilt
from skillgym_core.contracts.task import TaskDir
from skillgym_core.errors import SkillGymError
from skillgym_core.sandbox import janitor
from skillgym_core.sandbox.base import Sandbox
from skillgym_core.sandbox.factory import make_sandbox
from skillgym_core.taskrun import VerifierOutcome

from skillgym_reviewer.report import ReviewReport
from skillgym_reviewer.review import TaskReviewer
from skillgym_reviewer.settings import ReviewerSettings


class TaskDirError(SkillGymError):
    """A path given for review is not a task directory that can be read."""

    reason = "task_dir_missing"


def _existing_dir(path: Path, what: str) -> Path:
    if not path.exists():
        raise TaskDirError(f"{what} {path} does not exist", path=str(path))
    if not path.is_dir():
        raise TaskDirError(f"{what} {path} is not a directory", reason="not_a_directory", path=str(path))
    return path


def event_for(task: TaskDir) -> EnvBuilt:
    """What the builder would have announced for ``task``; a task.toml too broken to read still
    gets a review (conformance fails it), named after its directory."""
    try:
        meta = task.config().metadata
    except (SkillGymError, OSError, ValueError):
        return EnvBuilt(task_id=task.root.name, skill_id="unknown", package_key=str(task.root), template="unknown")
    return EnvBuilt(
        task_id=meta.task_id, skill_id=meta.skill_id, package_key=str(task.root), template=meta.template,
        revision=meta.revision, parent_task_id=meta.parent_task_id, builder=str(getattr(meta, "builder", "template")),
    )  # fmt: skip


class DirReviewer:
    """Reviews directories one after another with one sandbox and one reviewer (start them
    once, review many); close it, or use it as a context manager, when done."""

    def __init__(self, settings: ReviewerSettings | None = None, sandbox: Sandbox | None = None) -> None:
        self.settings = settings or ReviewerSettings()
        self.sandbox = sandbox or make_sandbox(self.settings)
        self.scratch = Path(tempfile.mkdtemp(prefix="skillgym-review-"))
        try:
            self.reviewer = TaskReviewer(self.sandbox, self.settings, self.scratch)
        except BaseException:
            self.scratch.rmdir()
            raise

    def __enter__(self) -> DirReviewer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        self.reviewer.close()
        janitor.remove_tree(self.scratch)

    def review(self, path: Path | str) -> ReviewReport:
        task = TaskDir(_existing_dir(Path(path), "task directory"))
        return self.reviewer.review(task, event_for(task))

    def verify(self, path: Path | str, workspace: Path | str) -> VerifierOutcome:
        task = TaskDir(_existing_dir(Path(path), "task directory"))
        return self.reviewer.runner.verify(task, _existing_dir(Path(workspace), "workspace"))


def review_task_dir(path: Path | str, settings: ReviewerSettings | None = None) -> ReviewReport:
    """Every reviewer gate on the task directory at ``path``: the report's ``passed``,
    ``failure_type``, ``reasons``, ``gates`` and ``mutation`` (score, per-item kills, survivors).
    Raises TaskDirError when ``path`` is not a directory."""
    with DirReviewer(settings) as reviewer:
        return reviewer.review(path)


def verify_task_workspace(path: Path | str, workspace: Path | str, settings: ReviewerSettings | None = None) -> VerifierOutcome:
    """Only the task's trusted verifier, on the final workspace at ``workspace``."""
    with DirReviewer(settings) as reviewer:
        return reviewer.verify(path, workspace)
