"""``skillgym serve`` started while a dependency is down waits for it instead of exiting, and\nanswers on HTTP meanwhile."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
import uvicorn
from skillgym_core.bus.memory import MemoryBus
from skillgym_core.errors import StoreError, StoreUnavailable
from skillgym_core.store.local import LocalStore

from skillgym import serve
from skillgym.serve import ServeSettings, ServiceRunner, Startup, build_app, runner_once_reachable, start_in_background
from tests.skillgym.serve_support import FAST, EchoBuilder, readiness, wait_for, wait_for_readiness
from tests.support.services import free_port


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


def serve_http(app: Any) -> Iterator[str]:
    port = free_port()
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="error"))
    web = threading.Thread(target=server.run, daemon=True)
    web.start()
    base = f"http://127.0.0.1:{port}"
    wait_for(lambda: _answers(base))
    try:
        yield base
    finally:
        server.should_exit = True
        web.join(5)


def _answers(base: str) -> bool:
    try:
        httpx.get(base + "/healthz", timeout=1)
    except httpx.HTTPError:
        return False
    return True


def test_http_answers_while_start_up_waits_for_a_dependency(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store_up = threading.Event()
    attempts: list[int] = []

    def runner_from_settings(name: str, settings: ServeSettings) -> ServiceRunner:
        attempts.append(1)
        if not store_up.is_set():
            raise StoreUnavailable("connection refused")
        return ServiceRunner(EchoBuilder(), MemoryBus(), LocalStore(tmp_path / "store"), FAST)

    monkeypatch.setattr(serve, "runner_from_settings", runner_from_settings)
    startup = Startup("echo")
    failures: list[int] = []
    starter = start_in_background(startup, FAST, lambda: failures.append(1))
    try:
        for base in serve_http(build_app(startup)):
            wait_for(lambda: len(attempts) >= 2)
            assert httpx.get(base + "/healthz").status_code == 200, "waiting is alive: no liveness restart"
            code, body = readiness(base)
            assert code == 503 and body["starting"] is True
            assert "waiting for a dependency" in body["error"] and "connection refused" in body["error"]
            store_up.set()
            body = wait_for_readiness(base, 200)
            assert body["service"] == "echo" and body["worker_alive"] is True
    finally:
        startup.stop.set()
        starter.join(5)
        if startup.runner is not None:
            startup.runner.stop.set()
            startup.runner.thread.join(5)
    assert failures == []


def test_a_permanent_failure_at_start_is_reported_and_ends_serving(
    monkeypatch: pytest.MonkeyPatch
) -> None:
    def runner_from_settings(name: str, settings: ServeSettings) -> Any:
        raise StoreError("access denied", code="AccessDenied")

    monkeypatch.setattr(serve, "runner_from_settings", runner_from_settings)
    startup = Startup("echo")
    ended = threading.Event()
    start_in_background(startup, FAST, ended.set).join(5)
    assert ended.is_set() and isinstance(startup.failed, StoreError)
    assert not startup.alive()
    status = startup.status()
    assert status["ready"] is False and "start-up failed" in status["error"] and "access denied" in status["error"]


def test_a_stop_during_start_up_ends_the_wait() -> None:
    stop = threading.Event()
    stop.set()
    assert runner_once_reachable("builder", ServeSettings(), pause=lambda s: pytest.fail("no wait"), stop=stop) is None
