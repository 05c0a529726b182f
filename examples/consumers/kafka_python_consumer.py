"""React to SkillGym events with kafka-python and SkillGym's contracts package.

Reads the topics in a consumer group of its own with manual commits (``EventConsumer``): each
record is decoded into a typed event whatever its content mode, handled, then committed; a record
that holds no event, or whose handling keeps failing, goes to ``<topic>.dlq``. Prints one JSON
line per event handled.

    python examples/consumers/kafka_python_consumer.py --bootstrap 127.0.0.1:9092 \\
        --topic env-validated --topic training-completed --group my-app
"""

from __future__ import annotations

import argparse
import json
import sys

from skillgym_core.contracts import Envelope, EnvValidated, TrainingCompleted, event_type
from skillgym_core.contracts.consumer import EventConsumer
from skillgym_core.contracts.topics import ALL_TOPICS


def describe(event: Envelope) -> str:
    """What the event means, from its typed payload."""
    match event.payload:
        case EnvValidated(valid=True, task_id=task_id, label=label):
            return f"task {task_id} is ready for sampling ({label})"
        case EnvValidated(task_id=task_id, reasons=reasons):
            return f"task {task_id} was rejected: {'; '.join(reasons) or 'no reason given'}"
        case TrainingCompleted(run_id=run_id, checkpoint_key=checkpoint, loss_last=loss):
            return f"training run {run_id} finished at loss {loss:.4f}: {checkpoint}"
        case payload:
            return f"{payload.kind} for {event.key}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--bootstrap", default="127.0.0.1:9092", help="Kafka brokers")
    parser.add_argument("--topic", action="append", help="a topic to read; repeatable (default: every topic)")
    parser.add_argument("--group", default="skillgym-example-consumer", help="your consumer group")
    parser.add_argument("--max-events", type=int, help="stop after this many events")
    parser.add_argument("--idle-timeout", type=float, help="stop when no event came for this many seconds")
    args = parser.parse_args(argv)

    def handle(event: Envelope) -> None:
        line = {"topic": event.type, "type": event_type(event.type), "id": event.event_id, "key": event.key,
                "producer": event.producer, "kind": event.payload.kind, "says": describe(event)}  # fmt: skip
        print(json.dumps(line), flush=True)

    consumer = EventConsumer.connect(args.bootstrap, args.topic or list(ALL_TOPICS), args.group)
    try:
        stats = consumer.run(handle, max_events=args.max_events, idle_timeout_s=args.idle_timeout)
    finally:
        consumer.close()
    print(f"handled {stats.handled}, dead-lettered {stats.dead_lettered}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
