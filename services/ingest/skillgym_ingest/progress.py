"""A rich progress bar for long ingests; a no-op when disabled."""

from __future__ import annotations

from rich.progress import BarColumn, MofNCompleteColumn, Progress, TaskID, TextColumn, TimeElapsedColumn


class ProgressReporter:
    def __init__(self, enabled: bool) -> None:
        self.enabled = enabled
        self._progress: Progress | None = None
        self._task: TaskID | None = None
        self._accepted = 0

    def __enter__(self) -> ProgressReporter:
        if self.enabled:
            self._progress = Progress(
                TextColumn("ingest"), BarColumn(), MofNCompleteColumn(), TextColumn("{task.fields[accepted]} accepted"),
                TimeElapsedColumn(), transient=False,
            )
            self._progress.start()
            self._task = self._progress.add_task("ingest", total=None, accepted=0)
        return self

    def advance(self, accepted: bool) -> None:
        if self._progress is None or self._task is None:
            return
        self._accepted += int(accepted)
        self._progress.update(self._task, advance=1, accepted=self._accepted)

    def __exit__(self, *exc: object) -> None:
        if self._progress is not None:
            self._progress.stop()
