"""React to SkillGym events with nothing of SkillGym installed: kafka-python reads the records,
the CloudEvents SDK parses them (binary or structured content mode), and ``jsonschema`` checks
each event's data against the JSON Schema its ``dataschema`` names, from the published schemas
(``skillgym events schemas --out DIR``, or the chart's event-schemas ConfigMap).

Prints one JSON line per event with its attributes and whether its data is valid; exits 1 when
any was not. Reads without a consumer group (nothing is committed) unless --group is given.

    pip install kafka-python cloudevents jsonschema
    python examples/consumers/cloudevents_consumer.py --bootstrap 127.0.0.1:9092 \\
        --schemas shared/skillgym_core/contracts/schemas/v1 --topic env-built --max-events 10
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

import jsonschema
from cloudevents.core.bindings import kafka as cloudevents_kafka
from kafka import KafkaConsumer
from kafka.structs import OffsetAndMetadata, TopicPartition

DEFAULT_SCHEMAS = Path(__file__).resolve().parents[2] / "shared" / "skillgym_core" / "contracts" / "schemas" / "v1"
TOPICS = ["skill-ingested", "env-built", "env-reviewed", "env-feedback", "env-validated", "trajectory-verified",
          "hardening-requested", "training-completed"]  # fmt: skip


def load_validators(directory: Path) -> dict[str, jsonschema.Draft202012Validator]:
    """Schema ``$id`` -> validator, for every ``*.schema.json`` in ``directory``."""
    validators = {}
    for path in sorted(directory.glob("*.schema.json")):
        schema = json.loads(path.read_text())
        jsonschema.Draft202012Validator.check_schema(schema)
        validators[schema["$id"]] = jsonschema.Draft202012Validator(schema)
    return validators


def parse(record: Any) -> Any:
    """The CloudEvent in a Kafka record: structured when its content-type says so, else binary."""
    headers = {name: value for name, value in record.headers or []}
    message = cloudevents_kafka.KafkaMessage(headers=headers, key=record.key, value=record.value)
    if headers.get("content-type", b"").lower().startswith(b"application/cloudevents"):
        return cloudevents_kafka.from_structured_event(message)
    return cloudevents_kafka.from_binary_event(message)


def check(record: Any, validators: dict[str, jsonschema.Draft202012Validator]) -> dict[str, Any]:
    try:
        event = parse(record)
    except Exception as exc:  # the SDK raises several types for records that hold no CloudEvent
        return {"topic": record.topic, "offset": record.offset, "valid": False, "errors": [f"not a CloudEvent: {exc}"]}
    attributes = event.get_attributes()
    validator = validators.get(attributes.get("dataschema", ""))
    if validator is None:
        errors = [f"no published schema has the id {attributes.get('dataschema')!r}"]
    else:
        errors = [f"{'/'.join(map(str, e.absolute_path)) or '(root)'}: {e.message}" for e in validator.iter_errors(event.get_data())]
    return {"topic": record.topic, "id": attributes["id"], "type": attributes["type"], "source": attributes["source"],
            "subject": attributes.get("subject"), "time": str(attributes.get("time")),
            "correlationid": attributes.get("correlationid"), "dataschema": attributes.get("dataschema"),
            "valid": not errors, "errors": errors}  # fmt: skip


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--bootstrap", default="127.0.0.1:9092", help="Kafka brokers")
    parser.add_argument("--topic", action="append", help="a topic to read; repeatable (default: every topic)")
    parser.add_argument("--schemas", type=Path, default=DEFAULT_SCHEMAS, help="folder of the published schemas")
    parser.add_argument("--group", help="a consumer group to commit in (default: none, read from the start)")
    parser.add_argument("--max-events", type=int, help="stop after this many events")
    parser.add_argument("--timeout", type=float, default=30.0, help="stop after this many seconds without events")
    args = parser.parse_args(argv)

    validators = load_validators(args.schemas)
    consumer = KafkaConsumer(*(args.topic or TOPICS), bootstrap_servers=args.bootstrap, group_id=args.group,
                             auto_offset_reset="earliest", enable_auto_commit=False)  # fmt: skip
    seen = invalid = 0
    quiet_since = time.monotonic()
    try:
        while (args.max_events is None or seen < args.max_events) and time.monotonic() - quiet_since < args.timeout:
            done: dict[TopicPartition, OffsetAndMetadata] = {}
            for records in consumer.poll(timeout_ms=500).values():
                for record in records:
                    if args.max_events is not None and seen >= args.max_events:
                        break
                    result = check(record, validators)
                    print(json.dumps(result), flush=True)
                    seen, invalid = seen + 1, invalid + (not result["valid"])
                    quiet_since = time.monotonic()
                    done[TopicPartition(record.topic, record.partition)] = OffsetAndMetadata(record.offset + 1, "", -1)
            if args.group and done:  # only what was printed counts as read
                consumer.commit(done)
    finally:
        consumer.close()
    return 1 if invalid else 0


if __name__ == "__main__":
    sys.exit(main())
