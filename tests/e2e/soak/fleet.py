"""One running pipeline as the soak sees it: the broker and store servers, the service
processes and their supervisor, and the probes the soak decides by (consumer lag, /readyz, the
trainer's run ledger)."""

from __future__ import annotations

import json
import time
from dataclasses import dataclass, field
from typing import Any

import httpx
from prometheus_client.parser import text_string_to_metric_families

from tests.e2e.distributed import SERVICES, Cluster
from tests.e2e.soak.broker import BrokerView
from tests.e2e.soak.supervisor import Supervisor
from tests.support.services import KafkaServer, S3Server

TRAINER_RUNS = "state/trainer/runs/"
TRAINER_EXAMPLES = "state/trainer/examples/"


def consumed_topics(cluster: Cluster, service: str) -> tuple[str, ...]:
    """The topics a running service consumes, from the zero-valued series it exports for each."""
    text = cluster.get(service, "/metrics").text
    topics = {
        sample.labels["topic"]
        for family in text_string_to_metric_families(text)
        if family.name == "skillgym_events_consumed"
        for sample in family.samples
        if sample.labels.get("service") == service
    }
    return tuple(sorted(topics))


@dataclass
class Fleet:
    cluster: Cluster
    kafka: KafkaServer
    s3: S3Server
    supervisor: Supervisor
    broker: BrokerView
    consumes: dict[str, tuple[str, ...]] = field(default_factory=dict)

    @classmethod
    def around(cls, cluster: Cluster, kafka: KafkaServer, s3: S3Server, supervisor: Supervisor) -> Fleet:
        broker = BrokerView(kafka.bootstrap, cluster.env["SKILLGYM_TOPIC_PREFIX"])
        return cls(cluster, kafka, s3, supervisor, broker, {s: consumed_topics(cluster, s) for s in SERVICES})

    @property
    def bucket(self) -> str:
        return self.cluster.env["SKILLGYM_S3_BUCKET"]

    def group(self, service: str) -> str:
        return f"skillgym-{service}"

    def progress(self) -> dict[str, tuple[int, int]] | None:
        """(committed, appended) records over each service's input topics; None while the broker
        cannot say."""
        try:
            return {s: self.broker.committed(self.group(s), self.consumes[s]) for s in SERVICES}
        except Exception:
            return None

    def lags(self) -> dict[str, int] | None:
        progress = self.progress()
        return None if progress is None else {s: ends - done for s, (done, ends) in progress.items()}

    def readiness(self) -> dict[str, bool]:
        ready = {}
        for service in SERVICES:
            try:
                ready[service] = self.cluster.get(service, "/readyz").status_code == 200
            except httpx.HTTPError:
                ready[service] = False
        return ready

    def readyz_bodies(self) -> dict[str, Any]:
        bodies: dict[str, Any] = {}
        for service in SERVICES:
            try:
                bodies[service] = self.cluster.get(service, "/readyz").json()
            except (httpx.HTTPError, ValueError) as exc:
                bodies[service] = f"{type(exc).__name__}: {exc}"
        return bodies

    def store_keys(self, prefix: str) -> list[str]:
        objects = self.s3.client().list_objects(self.bucket, prefix=prefix, recursive=True)
        return [str(o.object_name) for o in objects]

    def store_json(self, key: str) -> Any:
        response = self.s3.client().get_object(self.bucket, key)
        try:
            return json.loads(response.read())
        finally:
            response.close()
            response.release_conn()

    def training_runs(self) -> list[dict[str, Any]]:
        """The trainer's run ledger (empty while the store is down)."""
        try:
            return [self.store_json(key) for key in self.store_keys(TRAINER_RUNS)]
        except Exception:
            return []

    def training_in_progress(self) -> dict[str, Any] | None:
        """The run the trainer has started and not finished (attempts counted, still due)."""
        for run in self.training_runs():
            if run.get("state") == "due" and run.get("attempts", 0) >= 1:
                return run
        return None

    def recorded_examples(self) -> set[str]:
        return {key.removeprefix(TRAINER_EXAMPLES).removesuffix(".json") for key in self.store_keys(TRAINER_EXAMPLES)}


def wait_until_settled(fleet: Fleet, *, quiet_s: float, timeout_s: float, until: Any = None) -> float:
    """Wait until no service has anything left to consume, nothing new was published for
    ``quiet_s`` and every service is ready (and ``until()`` holds, when given); the seconds it took."""
    started = time.monotonic()
    quiet_since: float | None = None
    last_progress: dict[str, tuple[int, int]] | None = None
    while time.monotonic() - started < timeout_s:
        progress = fleet.progress()
        drained = progress is not None and all(done >= ends for done, ends in progress.values())
        if drained and progress == last_progress and (until is None or until()):
            quiet_since = quiet_since or time.monotonic()
            if time.monotonic() - quiet_since >= quiet_s and all(fleet.readiness().values()):
                return time.monotonic() - started
        else:
            quiet_since = None
        last_progress = progress
        time.sleep(0.5)
    raise TimeoutError(
        f"the pipeline did not settle within {timeout_s:.0f}s: progress {fleet.progress()}, "
        f"readiness {fleet.readyz_bodies()}"
    )
