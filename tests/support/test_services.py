"""The test services are real: Kafka, S3 and Prometheus each do their job."""

from __future__ import annotations

import io
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from kafka import KafkaConsumer, KafkaProducer  # type: ignore[import-untyped,unused-ignore]
from kafka.admin import KafkaAdminClient  # type: ignore[import-untyped,unused-ignore]
from kafka.structs import OffsetAndMetadata, TopicPartition  # type: ignore[import-untyped,unused-ignore]
from minio import Minio
from minio.error import S3Error
from prometheus_client import CollectorRegistry, Gauge, start_http_server

from tests.support.fixtures import PrometheusFactory
from tests.support.services import KafkaServer, S3Server, ServiceStartError, free_port, start_prometheus

pytestmark = pytest.mark.integration

CONSUMER_TIMEOUTS = {"session_timeout_ms": 6000, "heartbeat_interval_ms": 1000}


def _consumer(kafka: KafkaServer, group: str, topic: str) -> KafkaConsumer:
    return KafkaConsumer(
        topic,
        bootstrap_servers=kafka.bootstrap,
        group_id=group,
        enable_auto_commit=False,
        auto_offset_reset="earliest",
        consumer_timeout_ms=20000,
        **CONSUMER_TIMEOUTS,
    )


def test_kafka_produce_consume_and_commit(kafka: KafkaServer, fresh_group: str) -> None:
    topic = f"t-{uuid.uuid4().hex[:8]}"
    producer = KafkaProducer(bootstrap_servers=kafka.bootstrap, acks="all")
    for i in range(3):
        producer.send(topic, key=b"k", value=f"m{i}".encode()).get(timeout=30)
    producer.close()

    consumer = _consumer(kafka, fresh_group, topic)
    first = next(consumer)
    assert first.value == b"m0"
    tp = TopicPartition(topic, first.partition)
    consumer.commit({tp: OffsetAndMetadata(first.offset + 1, "", -1)})
    consumer.close()

    admin = KafkaAdminClient(bootstrap_servers=kafka.bootstrap)
    try:
        offsets = admin.list_group_offsets(fresh_group)
        offsets = offsets.get(fresh_group, offsets)  # kafka-python 3 nests the result by group id
        assert offsets[tp].offset == first.offset + 1
    finally:
        admin.close()

    resumed = _consumer(kafka, fresh_group, topic)
    assert [next(resumed).value for _ in range(2)] == [b"m1", b"m2"]
    resumed.close()


def test_s3_put_get_and_credentials_enforced(s3: S3Server) -> None:
    client = Minio(s3.endpoint, access_key=s3.access_key, secret_key=s3.secret_key, secure=False)
    bucket = f"b-{uuid.uuid4().hex[:10]}"
    client.make_bucket(bucket)
    payload = b"hello object store"
    client.put_object(bucket, "dir/obj.txt", io.BytesIO(payload), len(payload))
    response = client.get_object(bucket, "dir/obj.txt")
    try:
        assert response.read() == payload
    finally:
        response.close()
        response.release_conn()
    assert bucket in {b.name for b in client.list_buckets()}

    intruder = Minio(s3.endpoint, access_key=s3.access_key, secret_key="wrong-secret-key", secure=False)
    with pytest.raises(S3Error) as denied:
        intruder.get_object(bucket, "dir/obj.txt")
    assert denied.value.code in {"SignatureDoesNotMatch", "AccessDenied", "InvalidAccessKeyId"}


@pytest.fixture
def metrics_target() -> Iterator[tuple[str, Gauge]]:
    registry = CollectorRegistry()
    gauge = Gauge("skillgym_probe_value", "Value exposed for the scrape test", registry=registry)
    port = free_port()
    server, thread = start_http_server(port, addr="127.0.0.1", registry=registry)
    yield f"127.0.0.1:{port}", gauge
    server.shutdown()
    thread.join(5)


def test_prometheus_scrapes_target(
    prometheus_factory: PrometheusFactory, metrics_target: tuple[str, Gauge], tmp_path: Path
) -> None:
    target, gauge = metrics_target
    gauge.set(42.5)
    rules = tmp_path / "rules.yml"
    rules.write_text(
        "groups:\n  - name: probe\n    rules:\n"
        "      - record: skillgym:probe_value:doubled\n        expr: skillgym_probe_value * 2\n"
    )
    prometheus = prometheus_factory([target], [rules])
    result = prometheus.wait_for("skillgym_probe_value", timeout=45)
    assert result, "no sample was scraped"
    assert float(result[0]["value"][1]) == 42.5
    assert result[0]["metric"]["instance"] == target
    doubled = prometheus.wait_for("skillgym:probe_value:doubled", timeout=30)
    assert float(doubled[0]["value"][1]) == 85.0
    assert prometheus.query("vector(1)")[0]["value"][1] == "1"


def test_start_failure_is_a_typed_error(tmp_path: Path) -> None:
    bad_rules = tmp_path / "bad.yml"
    bad_rules.write_text("groups: [{name: x, rules: [{record: y, expr: 'sum('}]}]\n")
    with pytest.raises(ServiceStartError) as failed:
        start_prometheus(tmp_path / "p", ["127.0.0.1:1"], [bad_rules], timeout=30)
    assert failed.value.service == "prometheus"
    assert "exited" in str(failed.value)
