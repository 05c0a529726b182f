"""Pytest plugin: real Kafka / S3 / Prometheus servers as fixtures, and the cache of task
environments every test that builds tasks shares.

Load with ``-p tests.support.fixtures`` (or ``pytest_plugins`` in a conftest).
A service that cannot start makes its fixture error: nothing is skipped.
"""

from __future__ import annotations

import os
import re
import uuid
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Protocol

import pytest
from skillgym_core.envbuild import LocalVenvProvider

from tests.support.kube_cluster import KubeCluster, kube_cluster
from tests.support.podman import PodmanService, start_podman
from tests.support.services import (
    KafkaServer,
    PrometheusServer,
    S3Server,
    start_kafka,
    start_prometheus,
    start_s3,
)

# The operator's timer intervals are fixed when its handlers are imported, which any test module
# may do while being collected: short test intervals are set before collection starts.
os.environ.setdefault("SKILLGYM_OPERATOR_HOUSEKEEPING_INTERVAL_S", "0.5")
os.environ.setdefault("SKILLGYM_OPERATOR_TRAINING_PROGRESS_INTERVAL_S", "0.5")

__all__ = ["PrometheusFactory", "env_provider", "fresh_group", "kafka", "kube", "kube_namespace", "podman", "prometheus_factory",
           "s3"]


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "integration: needs the real test services (Kafka, S3, Prometheus)")


class PrometheusFactory(Protocol):
    def __call__(self, scrape_targets: Sequence[str], rule_files: Sequence[Path] = ()) -> PrometheusServer: ...


@pytest.fixture(scope="session")
def kafka(tmp_path_factory: pytest.TempPathFactory) -> Iterator[KafkaServer]:
    """One single-node KRaft Kafka for the whole session; use ``kafka.bootstrap``."""
    with start_kafka(tmp_path_factory.mktemp("kafka")) as server:
        yield server


@pytest.fixture(scope="session")
def podman(tmp_path_factory: pytest.TempPathFactory) -> Iterator[PodmanService]:
    """Podman's Docker Engine API for the whole session; use ``podman.url``."""
    with start_podman(tmp_path_factory.mktemp("podman")) as service:
        yield service


@pytest.fixture(scope="session")
def s3(tmp_path_factory: pytest.TempPathFactory) -> Iterator[S3Server]:
    """One S3 server for the whole session; ``s3.endpoint``, ``s3.access_key``, ``s3.secret_key``."""
    with start_s3(tmp_path_factory.mktemp("s3")) as server:
        yield server


@pytest.fixture(scope="session")
def kube(tmp_path_factory: pytest.TempPathFactory) -> Iterator[KubeCluster]:
    """One real control plane (etcd, kube-apiserver with RBAC, controller-manager, scheduler) with
    kwok's simulated cpu and gpu node pools for the whole session; tests use their own namespaces."""
    with kube_cluster(tmp_path_factory.mktemp("kube")) as cluster:
        yield cluster


@pytest.fixture
def kube_namespace(kube: KubeCluster, request: pytest.FixtureRequest) -> Iterator[str]:
    """A namespace of this test's own, deleted afterwards."""
    import kubernetes

    name = "t-" + re.sub(r"[^a-z0-9-]+", "-", request.node.name.lower())[:40].strip("-") + "-" + uuid.uuid4().hex[:6]
    with kube.api_client() as client:
        core = kubernetes.client.CoreV1Api(client)
        core.create_namespace({"metadata": {"name": name}})
        yield name
        core.delete_namespace(name)


@pytest.fixture
def fresh_group(request: pytest.FixtureRequest) -> str:
    """A consumer group id no other test uses."""
    name = re.sub(r"[^A-Za-z0-9._-]+", "-", request.node.name)[:60]
    return f"{name}-{uuid.uuid4().hex[:10]}"


@pytest.fixture
def prometheus_factory(tmp_path: Path) -> Iterator[PrometheusFactory]:
    """Starts Prometheus servers for this test (1 s scrape interval); all are stopped afterwards."""
    started: list[PrometheusServer] = []

    def factory(scrape_targets: Sequence[str], rule_files: Sequence[Path] = ()) -> PrometheusServer:
        server = start_prometheus(tmp_path / f"prometheus{len(started)}", scrape_targets, rule_files)
        started.append(server)
        return server

    yield factory
    for server in started:
        server.stop()


@pytest.fixture(scope="session")
def env_provider(tmp_path_factory: pytest.TempPathFactory) -> LocalVenvProvider:
    """Task environments built once per session for every test directory (or kept across
    sessions in ``SKILLGYM_TEST_ENV_CACHE``): family tasks install their requirements for real."""
    cache = os.environ.get("SKILLGYM_TEST_ENV_CACHE")
    if cache:
        return LocalVenvProvider(Path(cache))
    if os.environ.get("PYTEST_XDIST_WORKER"):
        # one cache for all test processes of the run: builds of one environment are serialised
        # by the provider's lock, so each is built once rather than once per process
        return LocalVenvProvider(tmp_path_factory.getbasetemp().parent / "env-cache")
    return LocalVenvProvider(tmp_path_factory.mktemp("env-cache"))
