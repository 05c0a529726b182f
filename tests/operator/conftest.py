"""Operator test fixtures: an emulated API server and the real operator (KopfRunner) against it."""

from __future__ import annotations

import logging
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from tests.operator.apiserver import ApiServer, run_apiserver
from tests.operator.node import SandboxNode
from tests.support.waiting import wait_for

NAMESPACE = "skillgym-test"


@pytest.fixture
def apiserver(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[ApiServer]:
    with run_apiserver(tmp_path, NAMESPACE) as server:
        monkeypatch.setenv("KUBECONFIG", str(server.kubeconfig))
        yield server


@pytest.fixture
def operator_settings(monkeypatch: pytest.MonkeyPatch) -> Any:
    from skillgym_operator import handlers

    monkeypatch.setattr(handlers.SETTINGS, "scanning_disabled", True)
    monkeypatch.setattr(handlers.SETTINGS, "retry_backoff_s", 0.2)
    monkeypatch.setattr(handlers.SETTINGS, "finished_pod_ttl_s", 0.0)
    return handlers.SETTINGS


@pytest.fixture
def node(apiserver: ApiServer, operator: Any, store: Any, tmp_path: Path) -> Iterator[SandboxNode]:
    """A stand-in kubelet running the operator's pods for real against the module's ``store``."""
    (tmp_path / "node").mkdir()
    with SandboxNode(apiserver, NAMESPACE, store, tmp_path / "node") as running:
        yield running
    assert not running.errors, running.errors


@pytest.fixture
def operator(apiserver: ApiServer, operator_settings: Any) -> Iterator[Any]:
    with running_operator() as runner:
        yield runner


@contextmanager
def running_operator() -> Iterator[Any]:
    """The real operator (``kopf run``) in this process until the block ends."""
    from kopf.testing import KopfRunner

    args = ["run", "--standalone", "--namespace", NAMESPACE, "-m", "skillgym_operator", "--verbose"]
    seen = LogLines()
    logging.getLogger("kopf").addHandler(seen)
    try:
        with KopfRunner(args, timeout=60) as runner:
            # Ready once every watched resource has its stream open.
            wait_for(lambda: seen.count("Starting the watch-stream") >= 5, 20, "operator watch streams")
            time.sleep(0.3)
            yield runner
    finally:
        logging.getLogger("kopf").removeHandler(seen)
    assert runner.exception is None, runner.output[-5000:]


class LogLines(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.lines: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.lines.append(record.getMessage())

    def count(self, fragment: str) -> int:
        return sum(fragment in line for line in list(self.lines))

