"""The Kafka bus (kafka-python). Publishing waits for acks from all in-sync replicas; consumers
never auto-commit, so a record counts as done only once the worker commits it."""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Collection, Sequence
from typing import Any, TypeVar

from kafka import KafkaConsumer, KafkaProducer  # type: ignore[import-untyped,unused-ignore]
from kafka.admin import KafkaAdminClient, OffsetSpec  # type: ignore[import-untyped,unused-ignore]
from kafka.errors import (  # type: ignore[import-untyped,unused-ignore]
    CommitFailedError,
    KafkaError,
    TopicAlreadyExistsError,
)
from kafka.structs import OffsetAndMetadata, TopicPartition  # type: ignore[import-untyped,unused-ignore]

from skillgym_core.bus.base import Delivery, Headers, Outgoing, highest_per_partition
from skillgym_core.contracts.topics import DLQ_SUFFIX, dlq
from skillgym_core.errors import DependencyUnavailable, TransientError

log = logging.getLogger(__name__)

T = TypeVar("T")

# kafka-python backs off up to 30 s between reconnects by default: a broker back after a 10 s
# outage went unnoticed for up to a minute. One second keeps recovery quick at little cost.
RECONNECT_BACKOFF_MAX_MS = 1000


def _encode_key(key: str | None) -> bytes | None:
    return None if key is None else key.encode()


def _decode_key(raw: bytes | None) -> str | None:
    return None if raw is None else raw.decode("utf-8", "replace")


def _encode_headers(headers: Headers) -> list[tuple[str, bytes]] | None:
    return list(headers) if headers else None


def with_dlqs(topics: Sequence[str]) -> list[str]:
    """``topics`` plus the dead-letter topic of each (a DLQ gets no DLQ of its own), deduplicated."""
    names: dict[str, None] = {}
    for topic in topics:
        names[topic] = None
        if not topic.endswith(DLQ_SUFFIX):
            names[dlq(topic)] = None
    return list(names)


class KafkaBus:
    def __init__(
        self,
        bootstrap: str,
        *,
        session_timeout_ms: int = 6000,
        heartbeat_interval_ms: int = 1000,
        partitions: int = 3,
        replication_factor: int = -1,
        publish_timeout_s: float = 30.0,
        request_timeout_ms: int = 15000,
        max_poll_interval_ms: int = 1_800_000,
        linger_ms: int = 5,
        batch_bytes: int = 256 * 1024,
        compression: str | None = None,
    ) -> None:
        """``replication_factor=-1`` lets the broker apply its ``default.replication.factor``.
        ``max_poll_interval_ms`` bounds one polled batch's handling (validation and training
        handlers run for minutes); liveness is still detected within ``session_timeout_ms``."""
        self.bootstrap = bootstrap
        self.session_timeout_ms = session_timeout_ms
        self.heartbeat_interval_ms = heartbeat_interval_ms
        self.partitions = partitions
        self.replication_factor = replication_factor
        self.publish_timeout_s = publish_timeout_s
        self.request_timeout_ms = request_timeout_ms
        self.max_poll_interval_ms = max_poll_interval_ms
        self.linger_ms = linger_ms
        self.batch_bytes = batch_bytes
        self.compression = compression
        self._producer_lock = threading.Lock()
        self._admin_lock = threading.Lock()
        self._producer_client: Any = None
        self._admin_client: Any = None

    def __repr__(self) -> str:
        return f"KafkaBus({self.bootstrap!r})"

    def _failure(self, action: str, exc: BaseException, **details: Any) -> TransientError:
        return TransientError(
            f"kafka {action} failed at {self.bootstrap}: {type(exc).__name__}: {exc}",
            bootstrap=self.bootstrap,
            action=action,
            **details,
        )

    def _producer(self) -> Any:
        if self._producer_client is not None:
            return self._producer_client
        with self._producer_lock:
            if self._producer_client is None:
                try:
                    self._producer_client = KafkaProducer(
                        bootstrap_servers=self.bootstrap,
                        client_id="skillgym-producer",
                        acks="all",
                        enable_idempotence=True,
                        request_timeout_ms=self.request_timeout_ms,
                        bootstrap_timeout_ms=self.request_timeout_ms,
                        reconnect_backoff_max_ms=RECONNECT_BACKOFF_MAX_MS,
                        delivery_timeout_ms=int(self.publish_timeout_s * 1000),
                        max_block_ms=int(self.publish_timeout_s * 1000),
                        linger_ms=self.linger_ms,
                        batch_size=self.batch_bytes,
                        compression_type=self.compression,
                    )
                except KafkaError as exc:
                    raise self._failure("connect", exc) from exc
            return self._producer_client

    def _admin(self) -> Any:
        # callers hold self._admin_lock: the admin client is shared by ensure_topics and lag
        if self._admin_client is None:
            try:
                self._admin_client = KafkaAdminClient(
                    bootstrap_servers=self.bootstrap,
                    client_id="skillgym-admin",
                    request_timeout_ms=self.request_timeout_ms,
                    bootstrap_timeout_ms=self.request_timeout_ms,
                    reconnect_backoff_max_ms=RECONNECT_BACKOFF_MAX_MS,
                )
            except KafkaError as exc:
                raise self._failure("connect", exc) from exc
        return self._admin_client

    def publish(self, topic: str, key: str | None, value: bytes, headers: Headers = ()) -> None:
        producer = self._producer()
        try:
            future = producer.send(topic, key=_encode_key(key), value=value, headers=_encode_headers(headers))
            future.get(timeout=self.publish_timeout_s)
        except KafkaError as exc:
            raise self._failure("publish", exc, topic=topic, key=key) from exc

    def publish_many(self, records: Sequence[Outgoing]) -> None:
        """Send every record, flush once, then check every acknowledgement: the producer batches
        and pipelines them (idempotent, so its own retries neither duplicate nor reorder)."""
        if not records:
            return
        producer = self._producer()
        futures: list[tuple[Outgoing, Any]] = []
        failed: list[tuple[Outgoing, BaseException]] = []
        for record in records:
            try:
                sent = producer.send(
                    record.topic, key=_encode_key(record.key), value=record.value, headers=_encode_headers(record.headers)
                )
                futures.append((record, sent))
            except KafkaError as exc:
                failed.append((record, exc))
                break  # later records of the same key must not overtake this one
        try:
            producer.flush(timeout=self.publish_timeout_s)
        except KafkaError as exc:
            raise self._failure("publish", exc, records=len(records)) from exc
        for record, future in futures:
            try:
                future.get(timeout=0)
            except KafkaError as exc:
                failed.append((record, exc))
        if failed:
            record, first = failed[0]
            raise self._failure("publish", first, records=len(records), failed=len(failed), topic=record.topic,
                                key=record.key)

    def subscribe(self, topics: Sequence[str], group: str, *, from_beginning: bool = True) -> KafkaSubscription:
        try:
            consumer = KafkaConsumer(
                *topics,
                bootstrap_servers=self.bootstrap,
                client_id=f"skillgym-{group}",
                group_id=group,
                enable_auto_commit=False,
                auto_offset_reset="earliest" if from_beginning else "latest",
                session_timeout_ms=self.session_timeout_ms,
                heartbeat_interval_ms=self.heartbeat_interval_ms,
                max_poll_interval_ms=self.max_poll_interval_ms,
                request_timeout_ms=max(self.request_timeout_ms, self.session_timeout_ms + 5000),
                bootstrap_timeout_ms=self.request_timeout_ms,
                reconnect_backoff_max_ms=RECONNECT_BACKOFF_MAX_MS,
            )
        except KafkaError as exc:
            raise self._failure("subscribe", exc, topics=list(topics), group=group) from exc
        return KafkaSubscription(consumer, group, self.bootstrap, lookup_timeout_ms=min(self.request_timeout_ms, 5000))

    def ensure_topics(self, topics: Sequence[str]) -> None:
        """Create every missing topic and its ``.dlq``; topics that exist are left as they are."""
        wanted = with_dlqs(topics)
        missing = wanted
        with self._admin_lock:
            admin = self._admin()
            try:
                missing = [t for t in wanted if t not in set(admin.list_topics())]
                if not missing:
                    return
                spec = {"num_partitions": self.partitions, "replication_factor": self.replication_factor}
                result = admin.create_topics({t: dict(spec) for t in missing}, raise_errors=False)
                failed = {
                    row["name"]: row.get("error_message") or row["error_code"]
                    for row in result["topics"]
                    if row["error_code"] not in (0, TopicAlreadyExistsError.errno)
                }
                if failed:
                    raise TransientError(
                        f"could not create topics at {self.bootstrap}: {failed}",
                        bootstrap=self.bootstrap,
                        action="create_topics",
                        failed=failed,
                    )
                admin.wait_for_topics(missing, timeout_ms=self.request_timeout_ms)
            except KafkaError as exc:
                raise self._failure("create_topics", exc, topics=missing) from exc
        log.info("created topics", extra={"topics": missing, "partitions": self.partitions})

    def _retrying(self, action: str, operation: Callable[[], T], **details: Any) -> T:
        """Retry retriable broker errors (e.g. no group coordinator yet on a fresh cluster)."""
        deadline = time.monotonic() + self.request_timeout_ms / 1000
        while True:
            try:
                return operation()
            except KafkaError as exc:
                if not exc.retriable or time.monotonic() >= deadline:
                    raise self._failure(action, exc, **details) from exc
                time.sleep(0.2)

    def lag(self, group: str, topics: Sequence[str]) -> dict[str, int]:
        """Records per topic that ``group`` has not committed yet (the log end minus the
        committed offset; a partition without a commit counts from its first record)."""
        with self._admin_lock:
            admin = self._admin()
            described = self._retrying("lag", lambda: admin.describe_topics(list(topics)), group=group)
            partitions = [
                TopicPartition(row["name"], part["partition_index"])
                for row in described
                if row.get("error_code", 0) == 0
                for part in row.get("partitions") or []
            ]
            lags = dict.fromkeys(topics, 0)
            if not partitions:
                return lags
            committed = self._retrying(
                "lag", lambda: admin.list_group_offsets({group: partitions}).get(group, {}), group=group
            )
            ends = self._retrying(
                "lag", lambda: admin.list_partition_offsets(dict.fromkeys(partitions, OffsetSpec.LATEST))
            )
            uncommitted = [tp for tp in partitions if committed.get(tp) is None or committed[tp].offset < 0]
            starts = (
                self._retrying(
                    "lag", lambda: admin.list_partition_offsets(dict.fromkeys(uncommitted, OffsetSpec.EARLIEST))
                )
                if uncommitted
                else {}
            )
        for tp in partitions:
            done = starts[tp].offset if tp in starts else committed[tp].offset
            lags[tp.topic] += max(0, ends[tp].offset - done)
        return lags

    def close(self) -> None:
        with self._producer_lock:
            producer, self._producer_client = self._producer_client, None
        with self._admin_lock:
            admin, self._admin_client = self._admin_client, None
        if producer is not None:
            producer.close(timeout=self.publish_timeout_s)
        if admin is not None:
            admin.close()


class KafkaSubscription:
    """One consumer in ``group``. Not thread-safe: poll, commit, rewind and backlog from one thread."""

    def __init__(self, consumer: Any, group: str, bootstrap: str, *, lookup_timeout_ms: int = 5000) -> None:
        self._consumer = consumer
        self.group = group
        self.bootstrap = bootstrap
        self.lookup_timeout_ms = lookup_timeout_ms
        # Where each owned partition resumes when the broker cannot say (it is down): the offset
        # after this member's last commit there, else the first offset it was handed.
        self._resume_at: dict[TopicPartition, int] = {}

    def _unavailable(self, action: str, exc: BaseException, **details: Any) -> DependencyUnavailable:
        return DependencyUnavailable(
            f"kafka {action} failed at {self.bootstrap}: {type(exc).__name__}: {exc}",
            dependency="broker",
            action=action,
            bootstrap=self.bootstrap,
            group=self.group,
            **details,
        )

    def poll(self, timeout_s: float = 1.0, max_records: int = 100) -> list[Delivery]:
        try:
            batches = self._consumer.poll(timeout_ms=int(timeout_s * 1000), max_records=max_records)
            owned = self._consumer.assignment()
        except KafkaError as exc:
            raise self._unavailable("poll", exc) from exc
        for tp in set(self._resume_at) - set(owned):
            del self._resume_at[tp]
        for tp, records in batches.items():
            if records:
                self._resume_at.setdefault(tp, records[0].offset)
        return [
            Delivery(
                topic=record.topic,
                partition=record.partition,
                offset=record.offset,
                key=_decode_key(record.key),
                value=record.value,
                headers=tuple(record.headers) if record.headers else (),
            )
            for tp in sorted(batches, key=lambda tp: (tp.topic, tp.partition))
            for record in batches[tp]
        ]

    def commit(self, delivery: Delivery) -> None:
        self.commit_batch([delivery])

    def commit_batch(self, deliveries: Sequence[Delivery]) -> None:
        ends = {TopicPartition(topic, number): end for (topic, number), end in highest_per_partition(deliveries).items()}
        if not ends:
            return
        try:
            self._consumer.commit({tp: OffsetAndMetadata(end, "", -1) for tp, end in ends.items()})
        except CommitFailedError as exc:
            # The partitions moved to another member in a rebalance; that member re-reads the
            # records and the worker's done-markers answer them without running the handler again.
            log.warning(
                "commit lost to a rebalance",
                extra={"group": self.group, "offsets": {str(tp): end for tp, end in ends.items()}, "error": str(exc)},
            )
            return
        except KafkaError as exc:
            raise self._unavailable("commit", exc, offsets={f"{tp.topic}/{tp.partition}": end for tp, end in ends.items()}) from exc
        self._resume_at.update(ends)

    def rewind(self, partitions: Collection[tuple[str, int]]) -> None:
        try:
            owned = self._consumer.assignment()
            ask_broker = True
            for topic, number in partitions:
                partition = TopicPartition(topic, number)
                if partition not in owned:
                    continue
                committed: int | None = None
                if ask_broker:
                    try:
                        committed = self._consumer.committed(partition, timeout_ms=self.lookup_timeout_ms)
                    except KafkaError as exc:
                        log.warning(
                            "committed offsets unknown; rewinding to this member's own record of them",
                            extra={"group": self.group, "error": f"{type(exc).__name__}: {exc}"},
                        )
                        ask_broker = False
                # Nothing committed yet: back to the first offset this member was handed, which
                # is where auto_offset_reset put it. Nothing handed out: nothing to go back over.
                offset = committed if committed is not None else self._resume_at.get(partition)
                if offset is not None:
                    self._consumer.seek(partition, offset)
        except KafkaError as exc:
            raise self._unavailable("rewind", exc, partitions=sorted(partitions)) from exc

    def backlog(self) -> dict[tuple[str, int], int]:
        waiting: dict[tuple[str, int], int] = {}
        try:
            for partition in self._consumer.assignment():
                high = self._consumer.highwater(partition)
                if high is None:  # nothing fetched from it yet
                    continue
                position = self._consumer.position(partition, timeout_ms=self.lookup_timeout_ms)
                if position is not None:
                    waiting[(partition.topic, partition.partition)] = max(0, high - position)
        except KafkaError as exc:
            raise self._unavailable("backlog", exc) from exc
        return waiting

    def assignment(self) -> set[tuple[str, int]]:
        """The (topic, partition) pairs this member currently owns."""
        return {(tp.topic, tp.partition) for tp in self._consumer.assignment()}

    def close(self) -> None:
        self._consumer.close(autocommit=False)
