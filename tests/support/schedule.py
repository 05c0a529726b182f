"""Pytest plugin: the order test modules are handed to the worker processes.

Modules of unit tests come first, then those needing only the services installed up front, then
those waiting for each background build in the order it finishes: every test that can run while
the S3 server, the control plane and llama.cpp's server compile runs then, on every worker.
Within a group the longest modules go first (their number of tests times the seconds a test of
theirs took in the last run on this machine, or a second when never run), so no worker is left
finishing one long module while the other idles. A run of a few tests of a module (``-k``) still
records what a test of it takes.
pytest-xdist keeps this order only with ``--no-loadscope-reorder`` (its default sorts modules by
their number of tests); ``pyproject.toml`` passes it. Modules stay whole, so module fixtures are
set up once.

The times are kept in ``~/.cache/skillgym/test-durations.json`` (``SKILLGYM_TEST_DURATIONS``
overrides): written by the controlling process at the end of a run, read once by it and handed to
the workers, so every worker collects the same order."""

from __future__ import annotations

import contextlib
import json
import os
from collections import defaultdict
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import pytest

_HEAVY_MARKERS = ("slow", "integration", "e2e")
# The services ``make test`` builds in the background, by the fixtures that wait for them, in the
# order the install script builds them (containers, S3, Kubernetes, llama.cpp's server).
_DEFERRED_FIXTURES = {"podman": 2, "s3": 3, "kube": 4, "kube_namespace": 4, "llama": 5}
_LAST = max(_DEFERRED_FIXTURES.values())
DEFERRED_WAIT_S = 3600
# A module never run here is guessed at this many seconds a test.
_GUESS_S_PER_TEST = 1.0
_WORKER_KEY = "skillgym_module_seconds"
_RECORDED = pytest.StashKey[dict[str, float]]()


def durations_file() -> Path:
    override = os.environ.get("SKILLGYM_TEST_DURATIONS")
    if override:
        return Path(override)
    cache = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    return cache / "skillgym" / "test-durations.json"


def read_durations(path: Path) -> dict[str, float]:
    """Seconds a test per module from earlier runs; nothing when the file is missing or unreadable."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    if not isinstance(data, dict):
        return {}
    return {str(k): float(v) for k, v in data.items() if isinstance(v, int | float) and v >= 0}


def write_durations(path: Path, per_test: Mapping[str, float]) -> None:
    merged = {**read_durations(path), **{module: round(seconds, 3) for module, seconds in per_test.items()}}
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_name(f".{path.name}.{os.getpid()}")
    partial.write_text(json.dumps(dict(sorted(merged.items())), indent=0), encoding="utf-8")
    partial.replace(path)


def group_of(fixture_names: Iterable[str], markers: Iterable[str]) -> int:
    """0: a unit test; 1: needs the services installed up front; 2 and on: waits for that build."""
    names = set(fixture_names)
    waits_for = max((group for name, group in _DEFERRED_FIXTURES.items() if name in names), default=0)
    if waits_for:
        return waits_for
    marked = set(markers)
    if "deferred_service" in marked:
        return _LAST
    return 1 if marked & set(_HEAVY_MARKERS) else 0


def module_order(modules: Mapping[str, tuple[int, int]], recorded: Mapping[str, float]) -> list[str]:
    """Modules (name -> (group, number of tests)) by group, then longest first, then by name;
    ``recorded`` holds seconds a test."""
    def cost(module: str) -> float:
        return modules[module][1] * recorded.get(module, _GUESS_S_PER_TEST)

    return sorted(modules, key=lambda module: (modules[module][0], -cost(module), module))


def _module(nodeid: str) -> str:
    return nodeid.split("::", 1)[0]


class _Recorder:
    """In the controlling process: the seconds each module took, written at the end of the run."""

    def __init__(self) -> None:
        self.spent: dict[str, float] = defaultdict(float)
        self.tests: dict[str, set[str]] = defaultdict(set)

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        self.spent[_module(report.nodeid)] += report.duration
        self.tests[_module(report.nodeid)].add(report.nodeid)

    def pytest_sessionfinish(self, exitstatus: int) -> None:
        if self.spent and exitstatus != pytest.ExitCode.INTERRUPTED:
            per_test = {module: seconds / len(self.tests[module]) for module, seconds in self.spent.items()}
            with contextlib.suppress(OSError):  # an order for the next run, nothing this run needs
                write_durations(durations_file(), per_test)


def pytest_configure(config: pytest.Config) -> None:
    worker_input: dict[str, Any] | None = getattr(config, "workerinput", None)
    if worker_input is not None:
        config.stash[_RECORDED] = dict(worker_input.get(_WORKER_KEY) or {})
        return
    config.stash[_RECORDED] = read_durations(durations_file())
    config.pluginmanager.register(_Recorder(), "skillgym-test-durations")


@pytest.hookimpl(optionalhook=True)
def pytest_configure_node(node: Any) -> None:
    """xdist: hand the controller's recorded times to each worker."""
    node.workerinput[_WORKER_KEY] = node.config.stash[_RECORDED]


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    modules: dict[str, tuple[int, int]] = {}
    for item in items:
        group = group_of(getattr(item, "fixturenames", ()), (mark.name for mark in item.iter_markers()))
        old_group, count = modules.get(_module(item.nodeid), (0, 0))
        modules[_module(item.nodeid)] = (max(group, old_group), count + 1)
    recorded: dict[str, float] = config.stash[_RECORDED]
    rank = {module: index for index, module in enumerate(module_order(modules, recorded))}
    items.sort(key=lambda item: rank[_module(item.nodeid)])  # stable: tests keep their order in a module
    # The first test of each module that waits for a build may wait for it well past the per-test
    # limit (the fixture's own wait is bounded); the tests after it find the service up.
    seen: set[str] = set()
    for item in items:
        module = _module(item.nodeid)
        if modules[module][0] >= min(_DEFERRED_FIXTURES.values()) and module not in seen:
            item.add_marker(pytest.mark.timeout(DEFERRED_WAIT_S))
        seen.add(module)
