"""The HTTP API (``/v1/episodes``; OpenAPI at ``/openapi.json``), the janitor thread, and the
wiring of store, sandbox, bus and environment builder from settings."""

from __future__ import annotations

import logging
import secrets
import threading
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any

from fastapi import Depends, FastAPI, HTTPException, Request, Response, WebSocket
from fastapi.responses import JSONResponse
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer
from prometheus_client import CONTENT_TYPE_LATEST, generate_latest
from skillgym_core.bus.base import Bus
from skillgym_core.contracts.cloudevents import publish_event
from skillgym_core.contracts.events import Envelope, Payload
from skillgym_core.errors import SkillGymError
from skillgym_core.rlenv.api import EpisodeStarted, EpisodeState, FinishResult, StartEpisode, StepRequest, StepResult
from skillgym_core.store.base import Store
from skillgym_core.taskrun import TaskRunner

from skillgym_envserver.catalog import TaskCatalog, TaskNotServable
from skillgym_envserver.curriculum import Curriculum, NoTaskMatches
from skillgym_envserver.episodes import EpisodeError, EpisodeManager
from skillgym_envserver.openenv_ws import serve_session
from skillgym_envserver.settings import EnvServerSettings

log = logging.getLogger("skillgym.envserver")
PRODUCER = "envserver"


@dataclass
class EnvServer:
    settings: EnvServerSettings
    manager: EpisodeManager

    @classmethod
    def build(cls, settings: EnvServerSettings, store: Store, runner: TaskRunner, bus: Bus | None) -> EnvServer:
        def publish(payload: Payload, correlation_id: str) -> None:
            if bus is not None:
                publish_event(bus, Envelope.wrap(payload, producer=PRODUCER, correlation_id=correlation_id),
                              settings.event_mode)

        catalog = TaskCatalog(store, settings.state_dir / "tasks", settings.catalog_refresh_s)
        curriculum = Curriculum(settings.curriculum_band, settings.curriculum_min_episodes)
        manager = EpisodeManager(settings, store, runner, catalog, curriculum, publish)
        return cls(settings, manager)


class Janitor:
    def __init__(self, manager: EpisodeManager, interval_s: float) -> None:
        self.manager = manager
        self.interval_s = interval_s
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="envserver-janitor", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(timeout=10)

    def _run(self) -> None:
        while not self._stop.wait(self.interval_s):
            try:
                self.manager.sweep()
            except Exception:  # the janitor outlives any one bad sweep
                log.exception("janitor sweep failed")


def create_app(server: EnvServer) -> FastAPI:
    manager = server.manager
    settings = server.settings

    @asynccontextmanager
    async def lifespan(_: FastAPI) -> AsyncIterator[None]:
        resumed = manager.restore()
        log.info("environment server ready", extra={"resumed_episodes": resumed})
        janitor = Janitor(manager, settings.janitor_interval_s)
        janitor.start()
        try:
            yield
        finally:
            janitor.stop()

    app = FastAPI(title="SkillGym environment server", version="1", lifespan=lifespan,
                  description="Validated SkillGym tasks as RL environments: episodes, tool steps, verified rewards.")
    bearer = HTTPBearer(auto_error=False)

    def authorized(credentials: HTTPAuthorizationCredentials | None = Depends(bearer)) -> None:
        token = settings.token.get_secret_value()
        if token and (credentials is None or not secrets.compare_digest(credentials.credentials, token)):
            raise HTTPException(401, "a valid bearer token is required", headers={"WWW-Authenticate": "Bearer"})

    @app.exception_handler(SkillGymError)
    async def typed_error(_: Request, exc: SkillGymError) -> JSONResponse:
        status = _status_of(exc)
        headers = {"Retry-After": f"{settings.retry_after_s:g}"} if status == 429 else None
        return JSONResponse({"detail": exc.to_dict()}, status_code=status, headers=headers)

    guard = [Depends(authorized)]

    @app.post("/v1/episodes", status_code=201, dependencies=guard)
    def start_episode(request: StartEpisode) -> EpisodeStarted:
        return manager.start(request)

    @app.get("/v1/episodes/{episode_id}", dependencies=guard)
    def episode_state(episode_id: str) -> EpisodeState:
        return manager.state(episode_id).state()

    @app.post("/v1/episodes/{episode_id}/step", dependencies=guard)
    def step(episode_id: str, request: StepRequest) -> StepResult:
        return manager.step(episode_id, request)

    @app.post("/v1/episodes/{episode_id}/finish", dependencies=guard)
    def finish(episode_id: str) -> FinishResult:
        return manager.finish(episode_id)

    @app.delete("/v1/episodes/{episode_id}", status_code=204, dependencies=guard)
    def delete(episode_id: str) -> Response:
        manager.delete(episode_id)
        return Response(status_code=204)

    @app.get("/v1/tasks", dependencies=guard)
    def tasks() -> list[dict[str, Any]]:
        rows = []
        for entry in sorted(manager.catalog.entries(), key=lambda e: e.task_id):
            stats = manager.curriculum.stats(entry.task_id)
            rows.append({"task_id": entry.task_id, "family": entry.family, "category": entry.category,
                         "difficulty": entry.difficulty, "skill_name": entry.skill_name,
                         "episodes": stats.episodes, "pass_rate": stats.pass_rate})
        return rows

    @app.websocket("/openenv/ws")
    async def openenv_session(websocket: WebSocket) -> None:
        await serve_session(websocket, manager, settings.token.get_secret_value())

    @app.get("/healthz")
    def healthz() -> dict[str, str]:
        return {"status": "ok"}

    @app.get("/readyz")
    def readyz() -> JSONResponse:
        open_now = manager.open_count()
        ready = open_now < settings.max_open_episodes
        return JSONResponse({"ready": ready, "open_episodes": open_now, "capacity": settings.max_open_episodes},
                            status_code=200 if ready else 503)

    @app.get("/metrics")
    def prometheus_metrics() -> Response:
        return Response(generate_latest(), media_type=CONTENT_TYPE_LATEST)

    return app


def _status_of(exc: SkillGymError) -> int:
    if isinstance(exc, EpisodeError):
        return exc.status
    if isinstance(exc, TaskNotServable | NoTaskMatches):
        return 404
    return 503 if exc.retryable else 422
