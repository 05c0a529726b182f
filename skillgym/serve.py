"""Distributed mode: one service as a long-running process. The worker consumes in a background
thread; FastAPI serves ``/healthz`` (process up), ``/readyz`` (consuming, store reachable) and
``/metrics`` (Prometheus)."""

from __future__ import annotations

import json
import logging
import threading
import time
from pathlib import Path
from typing import Any

import uvicorn
from fastapi import FastAPI, Response
from prometheus_client import CONTENT_TYPE_LATEST, generate_latest
from skillgym_core import metrics
from skillgym_core.bus.base import Bus
from skillgym_core.bus.factory import make_bus
from skillgym_core.context import ServiceContext
from skillgym_core.contracts.topics import ALL_TOPICS, dlq
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


class ServiceRunner:
    """Drives one service's worker in a background thread and reports its state."""

    def __init__(self, service: Service, bus: Bus, store: Store, settings: ServeSettings) -> None:
        self.name = service.name
        self.settings = settings
        self.store = store
        self.bus = bus
        self.service = service
        self.worker = Worker(
            service,
            bus,
            store,
            max_attempts=settings.max_attempts,
            backoff_s=settings.retry_backoff_s,
            backoff_max_s=settings.retry_backoff_max_s,
        )
        self.stop = threading.Event()
        self.ready = threading.Event()
        self.last_poll = 0.0
        self.error: str | None = None
        self.thread = threading.Thread(target=self._loop, name=f"{self.name}-worker", daemon=True)

    def _loop(self) -> None:
        """Consume until stopped. A failing poll (broker or store outage) is retried with capped
        exponential backoff; readiness is withdrawn while it fails and restored once it works."""
        failures = 0
        try:
            while not self.stop.is_set():
                try:
                    _ = self.worker.subscription
                    self.ready.set()
                    self.worker.run_once(timeout_s=self.settings.poll_timeout_s)
                    failures = 0
                    self.error = None
                except Exception as exc:
                    failures += 1
                    self.error = f"{type(exc).__name__}: {exc}"
                    self.ready.clear()
                    log.exception("worker poll failed", extra={"service": self.name, "failures": failures})
                    delay = min(self.settings.retry_backoff_max_s, self.settings.retry_backoff_s * 2 ** (failures - 1))
                    self.stop.wait(delay)
                    continue
                self.last_poll = time.monotonic()
                self._update_lag()
        finally:
            self.ready.clear()
            self.worker.close()

    def _update_lag(self) -> None:
        lag_of = getattr(self.bus, "lag", None)
        if lag_of is None:
            return
        try:
            lags: dict[str, int] = lag_of(self.worker.group, self.service.consumes)
        except Exception:
            return
        for topic, value in lags.items():
            metrics.CONSUMER_LAG.labels(self.name, topic).set(value)

    def status(self) -> dict[str, Any]:
        alive = self.thread.is_alive()
        return {
            "service": self.name,
            "worker_alive": alive,
            "ready": alive and self.ready.is_set(),
            "store": self.store.describe(),
            "consumed": self.worker.stats.consumed,
            "produced": self.worker.stats.produced,
            "dead_lettered": self.worker.stats.dead_lettered,
            "error": self.error,
        }


def build_app(runner: ServiceRunner) -> FastAPI:
    app = FastAPI(title=f"skillgym-{runner.name}")

    @app.get("/healthz")
    def healthz() -> Response:
        ok = runner.thread.is_alive()
        return Response(status_code=200 if ok else 500, content=runner.name if ok else "worker stopped")

    @app.get("/readyz")
    def readyz() -> Response:
        status = runner.status()
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


def serve(name: str, settings: ServeSettings | None = None) -> None:
    settings = settings or ServeSettings()
    runner = runner_from_settings(name, settings)
    runner.thread.start()
    app = build_app(runner)
    try:
        uvicorn.run(app, host=settings.http_host, port=settings.metrics_port, log_level="warning")
    finally:
        runner.stop.set()
        runner.thread.join(timeout=10)
        runner.bus.close()
