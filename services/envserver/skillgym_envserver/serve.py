"""``skillgym serve-env``: the environment server as a process, its backends from settings."""

from __future__ import annotations

import logging

import uvicorn
from skillgym_core.bus.factory import make_bus
from skillgym_core.envbuild import environment_provider
from skillgym_core.sandbox.factory import make_sandbox
from skillgym_core.store.factory import make_store
from skillgym_core.taskrun import TaskRunner

from skillgym_envserver.app import EnvServer, create_app
from skillgym_envserver.settings import EnvServerSettings

log = logging.getLogger("skillgym.envserver")


def build_server(settings: EnvServerSettings) -> EnvServer:
    """Store, sandbox, environment builder and (with ``SKILLGYM_BUS=kafka``) the broker that
    ``trajectory-verified`` goes to; without a broker, rollouts are only stored."""
    sandbox = make_sandbox(settings)
    runner = TaskRunner(sandbox, pass_threshold=settings.pass_threshold,
                        environment=environment_provider(settings, sandbox.name))
    bus = make_bus(settings) if settings.bus == "kafka" else None
    if bus is None:
        log.warning("no broker configured: finished episodes are stored but not published")
    return EnvServer.build(settings, make_store(settings), runner, bus)


def serve_env(settings: EnvServerSettings) -> None:
    app = create_app(build_server(settings))
    uvicorn.run(app, host=settings.host, port=settings.port, log_level="info")
