"""Distributed mode: one service as a long-running process. The worker consumes in a background
thread; FastAPI serves ``/healthz`` (process up), ``/readyz`` (consuming, every dependency
answering, no partition stalled; the body says what is wrong) and ``/metrics`` (Prometheus)."""

from __future__ import annotations

import json
import logging
import threading
import time
from collections.abc import Callable
from dataclasses import asdict
from functools import partial
from pathlib import Path
from typing import Any

import uvicorn
from fastapi import FastAPI, Response
from prometheus_client import CONTENT_TYPE_LATEST, generate_latest
from pydantic import Field
from skillgym_core import metrics
from skillgym_core.bus.base import Bus
from skillgym_core.bus.factory import make_bus
from skillgym_core.context import ServiceContext
from skillgym_core.contracts.topics import ALL_TOPICS, dlq
from skillgym_core.errors import TransientError
from skillgym_core.failures import backoff_delay, describe
from skillgym_core.health import BROKER, STORE, DependencyHealth, ProgressTracker
from skillgym_core.sandbox.factory import make_sandbox
from skillgym_core.service import Service, Worker
from skillgym_core.settings import CommonSettings
from skillgym_core.store.base import Store
from skillgym_core.store.factory import make_store

from skillgym.wiring import create_service

log = logging.getLogger("skillgym.serve")


class ServeSettings(CommonSettings):
    http_host: str = "0.0.0.0"
    scratch_dir: str = "/tmp/skillgym-scratch"
    poll_timeout_s: float = 1.0
    stall_after_s: float = Field(
        300.0, gt=0, description="not ready once records wait this long on a partition without one being settled"
    )
    probe_interval_s: float = Field(
        5.0, gt=0, description="how often the store and broker are checked (an idle worker uses neither)"
    )


class ServiceRunner:
    """Drives one service's worker in a background thread and reports its state."""

    def __init__(self, service: Service, bus: Bus, store: Store, settings: ServeSettings) -> None:
        self.name = service.name
        self.settings = settings
        self.store = store
        self.bus = bus
        self.service = service
        self.stop = threading.Event()
        self.subscribed = threading.Event()
        self.health = DependencyHealth(self.name, (STORE, BROKER))
        self.progress = ProgressTracker(settings.stall_after_s)
        self.worker = Worker(
            service,
            bus,
            store,
            max_attempts=settings.max_attempts,
            backoff_s=settings.retry_backoff_s,
            backoff_max_s=settings.retry_backoff_max_s,
            concurrency=settings.worker_concurrency,
            health=self.health,
            progress=self.progress,
            pause=self.stop.wait,
        )
        self.failing: str | None = None  # an unexpected worker exception, until a batch goes through
        self.last_error: dict[str, Any] | None = None
        self._next_probe = 0.0
        self.thread = threading.Thread(target=self._loop, name=f"{self.name}-worker", daemon=True)
        for topic in service.consumes:
            metrics.CONSUMER_STALLED_PARTITIONS.labels(self.name, topic).set_function(
                partial(self.progress.stalled_count, topic)
            )

    def _loop(self) -> None:
        """Consume until stopped. The worker waits out dependency failures itself; anything else
        it raises is logged, reported and retried with capped exponential backoff."""
        failures = 0
        try:
            while not self.stop.is_set():
                interruptions = self.worker.stats.interruptions
                try:
                    count = self.worker.run_once(timeout_s=self.settings.poll_timeout_s)
                except Exception as exc:
                    failures += 1
                    self.failing = f"{type(exc).__name__}: {exc}"
                    self.last_error = {"at": time.time(), "message": self.failing}
                    log.exception("worker failed", extra={"service": self.name, "failures": failures})
                    self.stop.wait(backoff_delay(self.settings.retry_backoff_s, self.settings.retry_backoff_max_s, failures))
                    continue
                failures = 0
                self.failing = None
                if self.worker.current_subscription is not None:
                    self.subscribed.set()
                idle = count == 0 and self.worker.stats.interruptions == interruptions
                self._observe(idle)
        finally:
            self.subscribed.clear()
            self.worker.close()

    def _observe(self, idle: bool) -> None:
        """Measure the backlog every time; check the dependencies every ``probe_interval_s``.
        A probe may mark a dependency down at any time, but up only while the worker is idle:
        while records flow, whether they settle is the better witness."""
        subscription = self.worker.current_subscription
        if subscription is not None:
            try:
                self.progress.observe(subscription.backlog())
            except Exception as exc:
                self.health.failed(BROKER, exc)
        now = time.monotonic()
        if now < self._next_probe:
            return
        self._next_probe = now + self.settings.probe_interval_s
        self._probe(BROKER, self._update_lag, idle)
        if idle:
            self._probe(STORE, lambda: self.store.exists(f"state/{self.name}/health-probe"), idle)

    def _probe(self, dependency: str, check: Callable[[], object], idle: bool) -> None:
        try:
            check()
        except Exception as exc:
            self.health.failed(dependency, exc)
            return
        if idle:
            self.health.answered(dependency)

    def _update_lag(self) -> None:
        lag_of = getattr(self.bus, "lag", None)
        if lag_of is None:
            return
        lags: dict[str, int] = lag_of(self.worker.group, self.service.consumes)
        for topic, value in lags.items():
            metrics.CONSUMER_LAG.labels(self.name, topic).set(value)

    def status(self) -> dict[str, Any]:
        alive = self.thread.is_alive()
        stalled = self.progress.stalled()
        problems = [] if alive else ["worker stopped"]
        if alive and not self.subscribed.is_set():
            problems.append("not subscribed yet")
        if self.failing:
            problems.append(f"worker failing: {self.failing}")
        problems += [f"{name} unreachable" for name in self.health.down()]
        problems += [
            f"{s.topic}[{s.partition}] stalled: {s.backlog} waiting, none settled for {s.seconds_without_progress:.0f}s"
            for s in stalled
        ]
        dependencies = self.health.snapshot()
        return {
            "service": self.name,
            "worker_alive": alive,
            "ready": not problems,
            "store": self.store.describe(),
            "consumed": self.worker.stats.consumed,
            "produced": self.worker.stats.produced,
            "dead_lettered": self.worker.stats.dead_lettered,
            "interruptions": self.worker.stats.interruptions,
            "dependencies": dependencies,
            "stalled": [asdict(s) for s in stalled],
            "stall_after_s": self.progress.stall_after_s,
            "error": "; ".join(problems) or None,
            "last_error": self._latest_error(dependencies),
        }

    def _latest_error(self, dependencies: dict[str, dict[str, Any]]) -> dict[str, Any] | None:
        seen = [
            {"at": state["last_failure_at"], "dependency": name, "message": state["last_error"]}
            for name, state in dependencies.items()
            if state["last_failure_at"] is not None
        ]
        if self.last_error is not None:
            seen.append(self.last_error)
        return max(seen, key=lambda error: error["at"], default=None)


class Startup:
    """A service between process start and a running worker: the HTTP endpoints answer from the
    first second (live, not ready, saying what start-up waits for), so a dependency that is down
    at start does not get the process restarted by its liveness probe."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.runner: ServiceRunner | None = None
        self.failed: BaseException | None = None
        self.stop = threading.Event()
        self._waiting_on: dict[str, Any] | None = None

    def waiting(self, exc: BaseException) -> None:
        self._waiting_on = {"at": time.time(), "message": describe(exc)}

    def alive(self) -> bool:
        if self.runner is not None:
            return self.runner.thread.is_alive()
        return self.failed is None

    def status(self) -> dict[str, Any]:
        if self.runner is not None:
            return self.runner.status()
        if self.failed is not None:
            problem = f"start-up failed: {describe(self.failed)}"
        elif self._waiting_on is not None:
            problem = f"starting: waiting for a dependency ({self._waiting_on['message']})"
        else:
            problem = "starting"
        return {"service": self.name, "worker_alive": False, "ready": False, "starting": self.failed is None,
                "error": problem, "last_error": self._waiting_on}


def build_app(source: ServiceRunner | Startup) -> FastAPI:
    app = FastAPI(title=f"skillgym-{source.name}")

    @app.get("/healthz")
    def healthz() -> Response:
        ok = source.alive() if isinstance(source, Startup) else source.thread.is_alive()
        return Response(status_code=200 if ok else 500, content=source.name if ok else "worker stopped")

    @app.get("/readyz")
    def readyz() -> Response:
        status = source.status()
        return Response(
            status_code=200 if status["ready"] else 503,
            content=json.dumps(status),
            media_type="application/json",
        )

    @app.get("/metrics")
    def metrics_endpoint() -> Response:
        return Response(content=generate_latest(), media_type=CONTENT_TYPE_LATEST)

    return app


def runner_from_settings(name: str, settings: ServeSettings) -> ServiceRunner:
    store = make_store(settings)
    bus = make_bus(settings)
    bus.ensure_topics([*ALL_TOPICS, *(dlq(t) for t in ALL_TOPICS)])
    ctx = ServiceContext(store=store, sandbox=make_sandbox(settings), scratch=Path(settings.scratch_dir))
    return ServiceRunner(create_service(name, ctx), bus, store, settings)


def runner_once_reachable(
    name: str,
    settings: ServeSettings,
    pause: Callable[[float], object] = time.sleep,
    *,
    on_wait: Callable[[BaseException], None] | None = None,
    stop: threading.Event | None = None,
) -> ServiceRunner | None:
    """:func:`runner_from_settings` once the store and the broker answer (None when ``stop`` is
    set first). A dependency that is down at start is waited out like one that goes down later:
    exiting instead would add the orchestrator's crash back-off to the outage. Permanent
    failures (bad credentials) still raise."""
    failures = 0
    while stop is None or not stop.is_set():
        try:
            return runner_from_settings(name, settings)
        except TransientError as exc:
            failures += 1
            delay = backoff_delay(settings.retry_backoff_s, settings.retry_backoff_max_s, failures)
            log.warning(
                "a dependency is unreachable at start; trying again",
                extra={"service": name, "retry_in_s": delay, "error": describe(exc)},
            )
            if on_wait is not None:
                on_wait(exc)
            pause(delay)
    return None


def start_in_background(startup: Startup, settings: ServeSettings, on_failure: Callable[[], None]) -> threading.Thread:
    """Build the runner (waiting out dependencies) and start its worker, off the HTTP thread."""

    def start() -> None:
        try:
            runner = runner_once_reachable(
                startup.name, settings, startup.stop.wait, on_wait=startup.waiting, stop=startup.stop
            )
        except BaseException as exc:
            startup.failed = exc
            log.error("start-up failed", extra={"service": startup.name, "error": describe(exc)})
            on_failure()
            return
        if runner is None:
            return
        startup.runner = runner
        runner.thread.start()

    thread = threading.Thread(target=start, name=f"{startup.name}-start", daemon=True)
    thread.start()
    return thread


def serve(name: str, settings: ServeSettings | None = None) -> None:
    settings = settings or ServeSettings()
    startup = Startup(name)
    server = uvicorn.Server(
        uvicorn.Config(build_app(startup), host=settings.http_host, port=settings.metrics_port, log_level="warning")
    )

    def end_serving() -> None:
        server.should_exit = True

    starter = start_in_background(startup, settings, end_serving)
    try:
        server.run()
    finally:
        startup.stop.set()
        starter.join(timeout=10)
        if startup.runner is not None:
            startup.runner.stop.set()
            startup.runner.thread.join(timeout=10)
            startup.runner.bus.close()
    if startup.failed is not None:
        raise startup.failed
