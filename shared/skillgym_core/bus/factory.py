"""Pick the bus named in settings."""

from __future__ import annotations

from skillgym_core.bus.base import Bus
from skillgym_core.settings import CommonSettings


def make_bus(settings: CommonSettings) -> Bus:
    if settings.bus == "memory":
        from skillgym_core.bus.memory import MemoryBus

        return MemoryBus()
    from skillgym_core.bus.kafka import KafkaBus

    bus: Bus = KafkaBus(
        settings.kafka_bootstrap,
        session_timeout_ms=settings.kafka_session_timeout_ms,
        heartbeat_interval_ms=settings.kafka_heartbeat_interval_ms,
        partitions=settings.kafka_topic_partitions,
        linger_ms=settings.kafka_linger_ms,
        batch_bytes=settings.kafka_batch_bytes,
        compression=None if settings.kafka_compression == "none" else settings.kafka_compression,
    )
    if settings.topic_prefix:
        from skillgym_core.bus.prefixed import PrefixedBus

        bus = PrefixedBus(bus, settings.topic_prefix)
    return bus
