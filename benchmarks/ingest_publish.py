"""``skillgym ingest --publish`` at crawl scale on real Kafka: a generated corpus (default 50,000
skills, as in ``benchmarks.ingest_bench``) ingested once without publishing and once publishing
every accepted skill's ``skill-ingested`` event to the broker, first without storing the skills
(the bus's own cost) and then storing each one's archive and record too, each in a fresh
process, side by side. The result is skills/s of each and their ratio to ingest alone; the
events on the topic are counted to show none was lost or doubled.

Run: ``python -m benchmarks.ingest_publish [--skills 50000] [--store local|s3]``; writes
``benchmarks/results/ingest_publish.json``."""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

from kafka.record.util import crc32c_c
from skillgym_core.bus.kafka import KafkaBus
from skillgym_core.contracts.cloudevents import read_event
from skillgym_core.contracts.topics import SKILL_INGESTED

from benchmarks.ingest_bench import generate
from tests.support.services import start_kafka, start_s3

RESULTS = Path(__file__).resolve().parent / "results" / "ingest_publish.json"
ROOT = Path(__file__).resolve().parents[1]


def _ingest(corpus: Path, out: Path, env: dict[str, str], publish: bool) -> dict[str, Any]:
    command = [sys.executable, "-m", "skillgym.cli", "ingest", str(corpus), "--out", str(out)]
    if publish:
        command.append("--publish")
    load = os.getloadavg()[0]
    started = time.perf_counter()
    done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=3600, cwd=ROOT)
    seconds = time.perf_counter() - started
    if done.returncode != 0:
        raise RuntimeError(f"ingest failed ({done.returncode}): {done.stderr[-2000:]}")
    funnel = json.loads((out / "funnel.json").read_text())
    result = {"seconds": round(seconds, 2), "found": funnel["found"], "accepted": funnel["accepted"],
              "skills_per_s": round(funnel["found"] / seconds, 1), "load_average_1m_before": round(load, 2)}
    print(f"{out.name}: {json.dumps(result)}", file=sys.stderr, flush=True)
    return result


def _count_events(bootstrap: str, topic: str, expected: int) -> dict[str, int]:
    bus = KafkaBus(bootstrap)
    subscription = bus.subscribe([topic], f"count-{uuid.uuid4().hex[:8]}")
    records, ids = 0, set()
    idle_since = time.monotonic()
    try:
        while time.monotonic() - idle_since < 10 and records < expected * 2:
            batch = subscription.poll(timeout_s=1.0, max_records=2000)
            if batch:
                idle_since = time.monotonic()
            for delivery in batch:
                records += 1
                ids.add(read_event(delivery).event_id)
    finally:
        subscription.close()
        bus.close()
    return {"records": records, "distinct_event_ids": len(ids)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--skills", type=int, default=50_000)
    parser.add_argument("--store", choices=["local", "s3"], default="local")
    parser.add_argument("--workdir", type=Path, default=None)
    args = parser.parse_args()

    with tempfile.TemporaryDirectory(prefix="ingest-publish-", dir=args.workdir) as tmp:
        work = Path(tmp)
        corpus = work / "corpus"
        generate(corpus, args.skills)
        base_env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))}
        with start_kafka(work / "kafka") as kafka:
            prefix = f"ip{uuid.uuid4().hex[:6]}."
            env = {**base_env, "SKILLGYM_BUS": "kafka", "SKILLGYM_KAFKA_BOOTSTRAP": kafka.bootstrap,
                   "SKILLGYM_TOPIC_PREFIX": prefix, "SKILLGYM_STORE": "local",
                   "SKILLGYM_STORE_ROOT": str(work / "store")}
            s3 = start_s3(work / "s3") if args.store == "s3" else None
            try:
                if s3 is not None:
                    env.update({"SKILLGYM_STORE": "s3", "SKILLGYM_S3_ENDPOINT": s3.endpoint,
                                "SKILLGYM_S3_ACCESS_KEY": s3.access_key, "SKILLGYM_S3_SECRET_KEY": s3.secret_key,
                                "SKILLGYM_S3_BUCKET": "ingest"})
                without = _ingest(corpus, work / "out-without", env, publish=False)
                events_only = _ingest(corpus, work / "out-events", {**env, "SKILLGYM_INGEST_WRITE_STORE": "false",
                                                                    "SKILLGYM_TOPIC_PREFIX": "events-" + prefix},
                                      publish=True)
                published = _ingest(corpus, work / "out-publish", env, publish=True)
                events = _count_events(kafka.bootstrap, prefix + SKILL_INGESTED, published["accepted"])
            finally:
                if s3 is not None:
                    s3.stop()
    result = {
        "machine": platform.platform(), "cpus": os.cpu_count(), "skills": args.skills, "store": args.store,
        "kafka_checksums": "crc32c C extension" if crc32c_c is not None else "pure Python",
        "ingest_only": without, "ingest_publish_events_only": events_only, "ingest_publish": published,
        "events_only_ratio": round(events_only["skills_per_s"] / without["skills_per_s"], 3),
        "publish_ratio": round(published["skills_per_s"] / without["skills_per_s"], 3),
        "events_on_topic": events,
        "events_complete": events["distinct_event_ids"] == published["accepted"],
    }
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps(result, indent=2) + "\n")
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
