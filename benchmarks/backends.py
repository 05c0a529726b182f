"""Throughput of the bus and store backends side by side: the Kafka bus against raw kafka-python
on the same broker (``benchmarks.bus_peer``), MemoryBus, LocalStore vs S3Store.

Starts a real single-node Kafka and S3 server (``scripts/install-services.sh``), then measures
batched publish and consume with per-batch commits for the bus and its raw peer (the ratio is
the result), the hop latency of a no-op stage, the in-memory bus, and store put/get.
Run: ``python -m benchmarks.backends [--records N] [--objects N]``; writes
``benchmarks/results/backends.json``.
"""

from __future__ import annotations

import argparse
import json
import platform
import statistics
import tempfile
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

from skillgym_core.bus.base import Bus
from skillgym_core.bus.memory import MemoryBus
from skillgym_core.store.base import Store
from skillgym_core.store.local import LocalStore
from skillgym_core.store.s3 import S3Store

from benchmarks.bus_peer import compare
from tests.support.services import start_kafka, start_s3

RESULTS = Path(__file__).resolve().parent / "results" / "backends.json"


def _timed(action: Callable[[], None]) -> float:
    started = time.perf_counter()
    action()
    return time.perf_counter() - started


def bench_bus(bus: Bus, records: int, size: int) -> dict[str, Any]:
    topic = f"bench-{uuid.uuid4().hex[:8]}"
    bus.ensure_topics([topic])
    payload = b"x" * size
    latencies: list[float] = []

    def publish_all() -> None:
        for i in range(records):
            latencies.append(_timed(lambda i=i: bus.publish(topic, f"k{i % 16}", payload)))

    publish_s = _timed(publish_all)
    sub = bus.subscribe([topic], f"bench-{uuid.uuid4().hex[:8]}")
    consumed = 0

    def consume_all() -> None:
        nonlocal consumed
        deadline = time.monotonic() + 120
        while consumed < records and time.monotonic() < deadline:
            batch = sub.poll(timeout_s=0.5, max_records=500)
            for delivery in batch:
                sub.commit(delivery)
            consumed += len(batch)

    consume_s = _timed(consume_all)
    sub.close()
    return {
        "records": records,
        "record_bytes": size,
        "publish_per_s": round(records / publish_s, 1),
        "publish_p50_ms": round(statistics.median(latencies) * 1000, 3),
        "publish_p99_ms": round(statistics.quantiles(latencies, n=100)[98] * 1000, 3),
        "consume_commit_per_s": round(consumed / consume_s, 1),
        "consumed": consumed,
    }


def bench_store(store: Store, objects: int, size: int) -> dict[str, Any]:
    prefix = f"bench-{uuid.uuid4().hex[:8]}"
    data = b"y" * size
    keys = [f"{prefix}/{i:05d}.bin" for i in range(objects)]
    put_s = _timed(lambda: [store.put_bytes(key, data) for key in keys] and None)
    get_s = _timed(lambda: [store.get_bytes(key) for key in keys] and None)
    list_s = _timed(lambda: list(store.list(prefix + "/")) and None)
    return {
        "objects": objects,
        "object_bytes": size,
        "put_per_s": round(objects / put_s, 1),
        "get_per_s": round(objects / get_s, 1),
        "put_mib_per_s": round(objects * size / put_s / 2**20, 1),
        "list_ms": round(list_s * 1000, 1),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--records", type=int, default=2000, help="records through the in-memory bus")
    parser.add_argument("--kafka-records", type=int, default=20000, help="records through Kafka per round")
    parser.add_argument("--record-bytes", type=int, default=1024)
    parser.add_argument("--objects", type=int, default=200)
    parser.add_argument("--object-bytes", type=int, default=64 * 1024)
    args = parser.parse_args()

    with tempfile.TemporaryDirectory(prefix="bench-backends-") as tmp:
        work = Path(tmp)
        results: dict[str, Any] = {"machine": platform.platform(), "python": platform.python_version()}
        results["memory_bus"] = bench_bus(MemoryBus(), args.records, args.record_bytes)
        with start_kafka(work / "kafka") as kafka:
            results["kafka_bus_vs_raw"] = compare(kafka.bootstrap, args.kafka_records, args.record_bytes)
        results["local_store"] = bench_store(LocalStore(work / "store"), args.objects, args.object_bytes)
        with start_s3(work / "s3") as s3:
            store = S3Store(endpoint=s3.endpoint, access_key=s3.access_key, secret_key=s3.secret_key, bucket="bench")
            results["s3_store"] = bench_store(store, args.objects, args.object_bytes)
            results["s3_server"] = s3.kind

    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps(results, indent=2) + "\n")
    print(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()
