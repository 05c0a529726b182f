"""The same pipeline with every service as its own process over real Kafka and a real S3 server,
watched by a real Prometheus: counts match the embedded run, and every dashboard panel and alert
rule the chart ships evaluates to data."""

from __future__ import annotations

import json
import math
import shutil
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from skillgym_core import keys
from skillgym_core.archive import pack_dir
from skillgym_core.bus.kafka import KafkaBus
from skillgym_core.bus.prefixed import PrefixedBus
from skillgym_core.bus.snapshot import KafkaSnapshot
from skillgym_core.contracts import topics
from skillgym_core.contracts.cloudevents import publish_event
from skillgym_core.contracts.events import EnvBuilt, Envelope
from skillgym_core.store.s3 import S3Store

from skillgym.embedded import EmbeddedOptions, run_pipeline
from tests.dashboards.promql import RULES, Query, all_queries
from tests.e2e.conftest import EXAMPLE_SKILLS, STAGE_COUNTS
from tests.e2e.distributed import Cluster, running_cluster, wait_for_training
from tests.support.event_contracts import violations
from tests.support.scripted_llm import ScriptedLLMServer
from tests.support.services import KafkaServer, PrometheusServer, S3Server, start_prometheus, start_pushgateway
from tests.validator.tasks import make_task

pytestmark = [pytest.mark.e2e, pytest.mark.integration, pytest.mark.slow]

SECOND_BATCH_SECTION = """
## Before you finish

Re-read the inputs once more and make sure every output file the procedure names exists.
"""
ALWAYS_PASS = "#!/bin/bash\\necho 1 > /logs/verifier/reward.txt\\n"


@dataclass
class DistributedRun:
    embedded: dict[str, Any]
    distributed: dict[str, Any]
    funnel: dict[str, Any]
    prometheus: PrometheusServer
    cluster: Cluster


def _bus(cluster: Cluster) -> PrefixedBus:
    inner = KafkaBus(cluster.env["SKILLGYM_KAFKA_BOOTSTRAP"], session_timeout_ms=6000, heartbeat_interval_ms=1000)
    return PrefixedBus(inner, cluster.env["SKILLGYM_TOPIC_PREFIX"])


def _inject_faults(cluster: Cluster, workdir: Path) -> None:
    """A poison record, a redelivered event and a hand-made broken task (always-pass verifier,
    for a skill the store does not hold) on top of the finished run."""
    bus = _bus(cluster)
    store = S3Store(
        endpoint=cluster.env["SKILLGYM_S3_ENDPOINT"],
        access_key=cluster.env["SKILLGYM_S3_ACCESS_KEY"],
        secret_key=cluster.env["SKILLGYM_S3_SECRET_KEY"],
        bucket=cluster.env["SKILLGYM_S3_BUCKET"],
    )
    try:
        bus.publish(topics.SKILL_INGESTED, "poison", b"{not an envelope")
        sub = bus.subscribe([topics.SKILL_INGESTED], "e2e-replay")
        first = next(d for d in sub.poll(timeout_s=10, max_records=50) if d.key != "poison")
        sub.close()
        bus.publish(topics.SKILL_INGESTED, first.key, first.value, first.headers)

        broken = make_task(workdir / "broken", name="broken", test_sh=ALWAYS_PASS)
        key = store.put_bytes(keys.task_package("task-broken"), pack_dir(broken.root))
        event = Envelope.wrap(
            EnvBuilt(task_id="task-broken", skill_id="skill-missing", package_key=key, template="hand-made"),
            producer="e2e",
            correlation_id="faults",
        )
        publish_event(bus, event)
    finally:
        bus.close()


def _second_batch(cluster: Cluster, tmp: Path, first: dict[str, Any], timeout: float = 600) -> None:
    """A second crawl batch (the example skills with an extra section: new content, same
    categories) flows through series Prometheus has already seen, so rates have data."""
    batch = tmp / "batch2"
    shutil.copytree(EXAMPLE_SKILLS, batch)
    for skill_md in batch.glob("*/SKILL.md"):
        skill_md.write_text(skill_md.read_text() + SECOND_BATCH_SECTION)
    cluster.skillgym("ingest", str(batch), "--out", str(tmp / "ingest2"), "--publish")
    deadline = time.monotonic() + timeout
    summary: dict[str, Any] = {}
    while time.monotonic() < deadline:
        cluster.assert_alive()
        out = cluster.skillgym("summarize", "--idle", "2")
        summary = json.loads(out.stdout)
        if summary["trajectories_attempted"] >= 2 * first["trajectories_attempted"]:
            return
        time.sleep(3)
    raise AssertionError(f"the second batch never finished sampling: {summary}")


def _wait_for_dead_letters(cluster: Cluster, expected: dict[str, int], timeout: float = 180) -> None:
    bus = _bus(cluster)
    seen: dict[str, int] = {}
    try:
        sub = bus.subscribe([topics.dlq(t) for t in expected], "e2e-dlq-watch")
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline and any(seen.get(topics.dlq(t), 0) < n for t, n in expected.items()):
            for delivery in sub.poll(timeout_s=1, max_records=100):
                seen[delivery.topic] = seen.get(delivery.topic, 0) + 1
            cluster.assert_alive()
        sub.close()
    finally:
        bus.close()
    assert all(seen.get(topics.dlq(t), 0) >= n for t, n in expected.items()), f"dead letters seen: {seen}"


@pytest.fixture(scope="module")
def run(
    tmp_path_factory: pytest.TempPathFactory, kafka: KafkaServer, s3: S3Server, module_teacher: ScriptedLLMServer
) -> Iterator[DistributedRun]:
    tmp = tmp_path_factory.mktemp("distributed")
    embedded = run_pipeline(
        [EXAMPLE_SKILLS], tmp / "embedded", EmbeddedOptions(llm_base_url=module_teacher.base_url)
    ).summary
    with start_pushgateway(tmp / "pushgateway") as pushgateway:
        extra = {
            "SKILLGYM_SAMPLER_LLM_BASE_URL": module_teacher.base_url,
            "SKILLGYM_TRAINER_MIN_NEW_EXAMPLES": str(embedded["dataset_examples"]),
            "SKILLGYM_PUSHGATEWAY_URL": pushgateway.url,
            "SKILLGYM_MAX_ATTEMPTS": "2",
        }
        with running_cluster(kafka, s3, tmp / "cluster", extra) as cluster:
            prometheus = start_prometheus(
                tmp / "prometheus", [*cluster.metrics_targets(), pushgateway.target], rule_files=[RULES]
            )
            try:
                cluster.skillgym("ingest", str(EXAMPLE_SKILLS), "--out", str(tmp / "ingest"), "--publish")
                funnel = json.loads((tmp / "ingest" / "funnel.json").read_text())
                summary = wait_for_training(cluster, embedded["skills_seen"], embedded["skills_accepted"])
                time.sleep(2)  # let Prometheus see the first wave's series before the second
                _second_batch(cluster, tmp, summary)
                _inject_faults(cluster, tmp)
                _wait_for_dead_letters(cluster, {topics.SKILL_INGESTED: 1, topics.ENV_FEEDBACK: 1})
                time.sleep(4)  # a few more scrapes after the last event
                yield DistributedRun(embedded, summary, funnel, prometheus, cluster)
            finally:
                prometheus.stop()


def test_counts_match_the_embedded_run(run: DistributedRun) -> None:
    assert {k: run.distributed[k] for k in STAGE_COUNTS} == {k: run.embedded[k] for k in STAGE_COUNTS}
    assert run.distributed["training_loss_last"] < run.distributed["training_loss_first"]
    assert run.funnel["found"] == run.embedded["skills_seen"]


def test_every_event_on_every_topic_is_a_valid_cloudevent(run: DistributedRun) -> None:
    snapshot = KafkaSnapshot(run.cluster.env["SKILLGYM_KAFKA_BOOTSTRAP"], prefix=run.cluster.env["SKILLGYM_TOPIC_PREFIX"])
    try:
        records = [record for topic in topics.ALL_TOPICS for record in snapshot.read(topic)]
    finally:
        snapshot.close()
    assert {record.topic for record in records} >= set(topics.ALL_TOPICS) - {topics.HARDENING_REQUESTED}
    made_here = {"poison", "task-broken"}  # _inject_faults' poison record and hand-made task
    assert violations([r for r in records if r.key not in made_here]) == []
    assert violations([r for r in records if r.key == "task-broken"], known_publishers=False) == []


def test_services_report_health_and_metrics(run: DistributedRun) -> None:
    for service in ("builder", "reviewer", "validator", "sampler", "trainer"):
        assert run.cluster.get(service, "/healthz").status_code == 200
        assert run.cluster.get(service, "/readyz").status_code == 200
        assert "skillgym_events_consumed_total" in run.cluster.get(service, "/metrics").text


def _finite(result: list[dict[str, Any]]) -> list[float]:
    values = [float(sample["value"][1]) for sample in result]
    return [v for v in values if math.isfinite(v)]


@pytest.mark.parametrize("query", [q for q in all_queries() if q.kind != "alert"], ids=lambda q: q.ident)
def test_every_dashboard_panel_and_recording_rule_returns_data(run: DistributedRun, query: Query) -> None:
    result = run.prometheus.wait_for(query.expr, timeout=20)
    assert result, f"{query.ident} returned no data: {query.expr}"
    assert _finite(result), f"{query.ident} returned only NaN/Inf: {result}"


def test_every_alert_rule_evaluates_and_dead_letters_raise_an_alert(run: DistributedRun) -> None:
    groups = run.prometheus.api("rules")["groups"]
    rules = [rule for group in groups for rule in group["rules"]]
    expected = {q.title for q in all_queries() if q.kind in ("alert", "record")}
    assert {rule["name"] for rule in rules} == expected
    deadline = time.monotonic() + 30
    while any(rule.get("health") != "ok" for rule in rules) and time.monotonic() < deadline:
        time.sleep(1)
        rules = [r for g in run.prometheus.api("rules")["groups"] for r in g["rules"]]
    assert all(rule.get("health") == "ok" for rule in rules), [r for r in rules if r.get("health") != "ok"]

    deadline = time.monotonic() + 30
    names: set[str] = set()
    while "SkillGymDeadLetterGrowth" not in names and time.monotonic() < deadline:
        names = {alert["labels"]["alertname"] for alert in run.prometheus.api("alerts")["alerts"]}
        time.sleep(1)
    assert "SkillGymDeadLetterGrowth" in names
