"""Runs every service as its own ``skillgym serve`` process over real Kafka and S3."""

from __future__ import annotations

import os
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx

from tests.support.services import KafkaServer, S3Server, free_port

SERVICES = ("builder", "reviewer", "validator", "sampler", "trainer")


@dataclass
class Cluster:
    env: dict[str, str]
    ports: dict[str, int]
    workdir: Path
    processes: dict[str, subprocess.Popen[bytes]] = field(default_factory=dict)

    def skillgym(self, *args: str, timeout: float = 300) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "skillgym.cli", *args],
            env=self.env,
            capture_output=True,
            text=True,
            timeout=timeout,
            check=True,
        )

    def start(self, service: str) -> None:
        """Start ``service`` (again, after :meth:`kill`): same port and settings, its log appended to."""
        with (self.workdir / f"{service}.log").open("ab") as log:
            self.processes[service] = subprocess.Popen(
                [sys.executable, "-m", "skillgym.cli", "serve", service, "--port", str(self.ports[service])],
                env=self.env,
                stdout=log,
                stderr=subprocess.STDOUT,
            )

    def kill(self, service: str) -> None:
        """``kill -9`` the service's process: no shutdown code runs, as in a node or OOM kill."""
        process = self.processes[service]
        if process.poll() is None:
            process.kill()
        process.wait()

    def metrics_targets(self) -> list[str]:
        return [f"127.0.0.1:{port}" for port in self.ports.values()]

    def get(self, service: str, path: str) -> httpx.Response:
        return httpx.get(f"http://127.0.0.1:{self.ports[service]}{path}", timeout=5)

    def logs(self, service: str) -> str:
        path = self.workdir / f"{service}.log"
        return path.read_text()[-4000:] if path.exists() else ""

    def assert_alive(self) -> None:
        dead = {name: proc.returncode for name, proc in self.processes.items() if proc.poll() is not None}
        if dead:
            details = "\n".join(f"--- {name} ---\n{self.logs(name)}" for name in dead)
            raise AssertionError(f"services exited: {dead}\n{details}")


def cluster_env(kafka: KafkaServer, s3: S3Server, workdir: Path, extra: dict[str, str]) -> dict[str, str]:
    run = uuid.uuid4().hex[:8]
    env = {
        **os.environ,
        "SKILLGYM_BUS": "kafka",
        "SKILLGYM_KAFKA_BOOTSTRAP": kafka.bootstrap,
        "SKILLGYM_TOPIC_PREFIX": f"t{run}.",
        "SKILLGYM_STORE": "s3",
        "SKILLGYM_S3_ENDPOINT": s3.endpoint,
        "SKILLGYM_S3_ACCESS_KEY": s3.access_key,
        "SKILLGYM_S3_SECRET_KEY": s3.secret_key,
        "SKILLGYM_S3_BUCKET": f"skillgym-{run}",
        "SKILLGYM_SANDBOX": "local",
        "SKILLGYM_HTTP_HOST": "127.0.0.1",
        "SKILLGYM_CORRELATION_ID": f"run-{run}",
        "SKILLGYM_SCRATCH_DIR": str(workdir / "scratch"),
        "SKILLGYM_POLL_TIMEOUT_S": "0.5",
        "PYTHONUNBUFFERED": "1",
    }
    env.update(extra)
    return env


@contextmanager
def running_cluster(kafka: KafkaServer, s3: S3Server, workdir: Path, extra_env: dict[str, str]) -> Iterator[Cluster]:
    workdir.mkdir(parents=True, exist_ok=True)
    env = cluster_env(kafka, s3, workdir, extra_env)
    cluster = Cluster(env=env, ports={name: free_port() for name in SERVICES}, workdir=workdir)
    try:
        for name in SERVICES:
            cluster.start(name)
        wait_ready(cluster)
        yield cluster
    finally:
        for proc in cluster.processes.values():
            proc.terminate()
        for proc in cluster.processes.values():
            try:
                proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()


def wait_ready(cluster: Cluster, timeout: float = 120) -> None:
    deadline = time.monotonic() + timeout
    pending = set(SERVICES)
    while pending and time.monotonic() < deadline:
        cluster.assert_alive()
        for name in list(pending):
            try:
                if cluster.get(name, "/readyz").status_code == 200:
                    pending.discard(name)
            except httpx.HTTPError:
                pass
        time.sleep(0.5)
    if pending:
        details = "\n".join(f"--- {name} ---\n{cluster.logs(name)}" for name in pending)
        raise AssertionError(f"services never became ready: {sorted(pending)}\n{details}")


def wait_for_training(cluster: Cluster, skills_seen: int, skills_accepted: int, timeout: float = 600) -> dict[str, Any]:
    """Poll the bus summary until the trainer reported a finished run."""
    import json

    deadline = time.monotonic() + timeout
    summary: dict[str, Any] = {}
    while time.monotonic() < deadline:
        cluster.assert_alive()
        out = cluster.skillgym(
            "summarize", "--skills-seen", str(skills_seen), "--skills-accepted", str(skills_accepted), "--idle", "2"
        )
        summary = json.loads(out.stdout)
        if summary.get("dataset_examples"):
            return summary
        time.sleep(3)
    logs = "\n".join(f"--- {name} ---\n{cluster.logs(name)}" for name in SERVICES)
    raise AssertionError(f"training never completed; last summary {summary}\n{logs}")
