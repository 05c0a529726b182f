"""Distributed mode: one service as a long-running process. The worker consumes in a background
thread; FastAPI serves ``/healthz`` (process up), ``/readyz`` (consuming, store reachable) and
``/metrics`` (Prometheus)."""

from __future__ import annotations

import logging
import threading
import time
from typing import Any

import uvicorn
from fastapi import FastAPI, Response
from prometheus_client import CONTENT_TYPE_LATEST, generate_latest

from skillgym_core import metrics
from skillgym_core.bus.factory import make_bus
from skillgym_core.context import ServiceContext
from skillgym_core.contracts.topics import ALL_TOPICS, dlq
from skillgym_core.sandbox.factory import make_sandbox
from skillgym_core.service import Worker
from skillgym_core.settings import CommonSettings
from skillgym_core.store.factory import make_store

from skillgym.wiring import create_service

log = logging.getLogger("skillgym.serve")


class ServeSettings(CommonSettings):
    http_host: str = "0.0.0.0"
    scratch_dir: str = "/tmp/skillgym-scratch"
    poll_timeout_s: float = 1.0


class ServiceRunner:
    def __init__(self, name: str, settings: ServeSettings) -> None:
        self.name = name
        self.settings = settings
        self.store = make_store(settings)
        self.bus = make_bus(settings)
        self.bus.ensure_topics([*ALL_TOPICS, *(dlq(t) for t in ALL_TOPICS)])
        ctx = ServiceContext(store=self.store, sandbox=make_sandbox(settings), scratch=settings.scratch_dir)  # type: ignore[arg-type]
        self.service = create_service(name, ctx)
        self.worker = Worker(
            self.service,
            self.bus,
            self.store,
            max_attempts=settings.max_attempts,
            backoff_s=settings.retry_backoff_s,
            backoff_max_s=settings.retry_backoff_max_s,
        )
        self.stop = threading.Event()
        self.ready = threading.Event()
        self.last_poll = 0.0
        self.error: str | None = None
        self.thread = threading.Thread(target=self._loop, name=f"{name}-worker", daemon=True)

    def _loop(self) -> None:
        try:
            _ = self.worker.subscription
            self.ready.set()
            while not self.stop.is_set():
                self.worker.run_once(timeout_s=self.settings.poll_timeout_s)
                self.last_poll = time.monotonic()
                self._update_lag()
        except Exception as exc:
            self.error = f"{type(exc).__name__}: {exc}"
            log.exception("worker stopped")
            self.ready.clear()
        finally:
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
        ok = runner.thread.is_alive() or not runner.ready.is_set() and runner.error is None
        return Response(status_code=200 if ok else 500, content=runner.name if ok else str(runner.error))

    @app.get("/readyz")
    def readyz() -> dict[str, Any]:
        status = runner.status()
        if not status["ready"]:
            from fastapi import HTTPException

            raise HTTPException(status_code=503, detail=status)
        return status

    @app.get("/metrics")
    def metrics_endpoint() -> Response:
        return Response(content=generate_latest(), media_type=CONTENT_TYPE_LATEST)

    return app


def serve(name: str, settings: ServeSettings | None = None) -> None:
    settings = settings or ServeSettings()
    runner = ServiceRunner(name, settings)
    runner.thread.start()
    app = build_app(runner)
    try:
        uvicorn.run(app, host=settings.http_host, port=settings.metrics_port, log_level="warning")
    finally:
        runner.stop.set()
        runner.thread.join(timeout=10)
        runner.bus.close()
