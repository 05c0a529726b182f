"""The topology the AsyncAPI document describes is the one the services and the chart wire up."""

from __future__ import annotations

import importlib
from collections import defaultdict
from pathlib import Path

import yaml
from skillgym_core.contracts import topics
from skillgym_core.contracts.topology import CONSUMERS, PUBLISHERS, consumer_group, routes
from skillgym_core.service import Worker

from skillgym.wiring import SERVICE_CLASSES

VALUES = Path(__file__).resolve().parents[3] / "charts" / "skillgym" / "values.yaml"


def service_classes() -> dict[str, type]:
    found = {}
    for name, target in SERVICE_CLASSES.items():
        module, cls = target.split(":")
        found[name] = getattr(importlib.import_module(module), cls)
    return found


def test_consumers_are_what_the_services_subscribe_to() -> None:
    subscribed: dict[str, set[str]] = defaultdict(set)
    for name, cls in service_classes().items():
        assert cls.name == name
        for topic in cls.consumes:
            subscribed[topic].add(name)
    assert {topic: set(CONSUMERS[topic]) for topic in topics.ALL_TOPICS} == {t: subscribed[t] for t in topics.ALL_TOPICS}


def test_the_charts_services_consume_the_same_topics() -> None:
    services = yaml.safe_load(VALUES.read_text())["services"]
    for name, spec in services.items():
        assert sorted(spec["consumes"]) == sorted(t for t, consumers in CONSUMERS.items() if name in consumers), name


def test_the_worker_consumes_in_the_documented_group() -> None:
    class Echo:
        name = "reviewer"
        consumes = (topics.ENV_BUILT,)

        def handle(self, event: object) -> list[object]:
            return []

    worker = Worker(Echo(), bus=None, store=None)  # type: ignore[arg-type]
    assert worker.group == consumer_group("reviewer") == "skillgym-reviewer"


def test_every_topic_has_one_route_with_its_payload_and_a_publisher() -> None:
    assert [route.topic for route in routes()] == list(topics.ALL_TOPICS)
    for route in routes():
        assert route.payload.topic == route.topic
        assert route.publishers == PUBLISHERS[route.topic] and route.publishers
