"""``skillgym serve`` started while a dependency is down waits for it instead of exiting."""

from __future__ import annotations

from typing import Any

import pytest
from skillgym_core.errors import StoreError, StoreUnavailable

from skillgym import serve
from skillgym.serve import ServeSettings, runner_once_reachable


def test_a_store_down_at_start_is_waited_out(monkeypatch: pytest.MonkeyPatch) -> None:
    answers: list[Any] = [StoreUnavailable("connection refused"), StoreUnavailable("connection refused"), "runner"]

    def runner_from_settings(name: str, settings: ServeSettings) -> Any:
        answer = answers.pop(0)
        if isinstance(answer, Exception):
            raise answer
        return answer

    monkeypatch.setattr(serve, "runner_from_settings", runner_from_settings)
    pauses: list[float] = []
    settings = ServeSettings(retry_backoff_s=0.5, retry_backoff_max_s=0.75)
    assert runner_once_reachable("builder", settings, pause=pauses.append) == "runner"
    assert pauses == [0.5, 0.75]


def test_a_permanent_failure_at_start_still_raises(monkeypatch: pytest.MonkeyPatch) -> None:
    def runner_from_settings(name: str, settings: ServeSettings) -> Any:
        raise StoreError("access denied", code="AccessDenied")

    monkeypatch.setattr(serve, "runner_from_settings", runner_from_settings)
    with pytest.raises(StoreError, match="access denied"):
        runner_once_reachable("builder", ServeSettings(), pause=lambda s: pytest.fail("no retry expected"))
