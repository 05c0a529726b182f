"""Topics read as they stand, without disturbing anyone: a kafka-python consumer in no group
assigns itself every partition, reads from the first record to the end offsets taken when the
read started, and commits nothing."""

from __future__ import annotations

import datetime as dt
import time
from typing import Any

from skillgym_core.bus.base import Delivery
from skillgym_core.errors import SkillGymError


class TopicReadError(SkillGymError):
    """A topic could not be read to its end (or the broker could not be reached at all)."""

    reason = "topic_read_failed"


class KafkaSnapshot:
    def __init__(self, bootstrap: str, *, prefix: str = "", timeout_s: float = 10.0) -> None:
        """``prefix`` is put in front of every topic named (a deployment's topic prefix);
        deliveries come back with the plain names."""
        from kafka import KafkaConsumer  # type: ignore[import-untyped,unused-ignore]
        from kafka.errors import KafkaError  # type: ignore[import-untyped,unused-ignore]

        self.bootstrap = bootstrap
        self.prefix = prefix
        self.timeout_s = timeout_s
        timeout_ms = max(1000, int(timeout_s * 1000))
        try:
            self._consumer = KafkaConsumer(bootstrap_servers=bootstrap, group_id=None, enable_auto_commit=False,
                                           client_id="skillgym-topic-reader", request_timeout_ms=timeout_ms,
                                           bootstrap_timeout_ms=timeout_ms)  # fmt: skip
        except KafkaError as exc:
            raise TopicReadError(
                f"no Kafka broker answered at {bootstrap} within {timeout_s:g} s ({type(exc).__name__})",
                reason="broker_unreachable",
                bootstrap=bootstrap,
            ) from exc

    def exists(self, topic: str) -> bool:
        from kafka.errors import KafkaError

        try:
            return self.prefix + topic in set(self._consumer.topics())
        except KafkaError as exc:
            raise self._failure("listing topics", exc, topic) from exc

    def read(self, topic: str) -> list[Delivery]:
        """Every record of ``topic`` up to its end when the read started, partition by partition
        in offset order (none when the topic does not exist)."""
        return [delivery for delivery, _ in self.read_with_times(topic)]

    def read_with_times(self, topic: str) -> list[tuple[Delivery, dt.datetime | None]]:
        """:meth:`read`, each record with when the broker says it was written (when it says)."""
        from kafka.errors import KafkaError
        from kafka.structs import TopicPartition  # type: ignore[import-untyped,unused-ignore]

        if not self.exists(topic):
            return []
        name = self.prefix + topic
        timeout_ms = max(1000, int(self.timeout_s * 1000))
        try:
            partitions = [TopicPartition(name, p) for p in sorted(self._consumer.partitions_for_topic(name) or ())]
            self._consumer.assign(partitions)
            starts = self._consumer.beginning_offsets(partitions, timeout_ms=timeout_ms)
            ends = self._consumer.end_offsets(partitions, timeout_ms=timeout_ms)
            for tp in partitions:
                self._consumer.seek(tp, starts[tp])
            found = self._read_until(topic, ends, {tp for tp in partitions if ends[tp] > starts[tp]})
        except KafkaError as exc:
            raise self._failure("reading", exc, topic) from exc
        finally:
            self._consumer.assign([])
        return sorted(found, key=lambda pair: (pair[0].partition, pair[0].offset))

    def _read_until(self, topic: str, ends: dict[Any, int], unread: set[Any]) -> list[tuple[Delivery, dt.datetime | None]]:
        found: list[tuple[Delivery, dt.datetime | None]] = []
        deadline = time.monotonic() + self.timeout_s
        while unread:
            if time.monotonic() > deadline:
                raise TopicReadError(
                    f"reading {topic} from Kafka at {self.bootstrap} did not reach its end within {self.timeout_s:g} s",
                    reason="topic_read_timeout", topic=topic, read=len(found),
                )  # fmt: skip
            for tp, records in self._consumer.poll(timeout_ms=500, max_records=500).items():
                for record in records:
                    if record.offset >= ends[tp]:
                        continue  # written after the read started
                    key = None if record.key is None else record.key.decode("utf-8", "replace")
                    headers = tuple(record.headers) if record.headers else ()
                    written = record.timestamp / 1000 if record.timestamp and record.timestamp > 0 else None
                    found.append((Delivery(topic, record.partition, record.offset, key, record.value, headers),
                                  None if written is None else dt.datetime.fromtimestamp(written, dt.UTC)))
            unread = {tp for tp in unread if (self._consumer.position(tp, timeout_ms=1000) or 0) < ends[tp]}
        return found

    def _failure(self, action: str, exc: BaseException, topic: str) -> TopicReadError:
        return TopicReadError(
            f"reading {topic} from Kafka at {self.bootstrap} failed while {action}: {type(exc).__name__}: {exc}",
            bootstrap=self.bootstrap,
            topic=topic,
        )

    def close(self) -> None:
        self._consumer.close(autocommit=False)
