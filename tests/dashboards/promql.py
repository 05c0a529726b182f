"""Every PromQL expression SkillGym ships: dashboard panel targets and alerting/recording rules.

Used by the tests that check the expressions offline (syntax, metric names) and by the
distributed-pipeline test that evaluates each one against a real Prometheus."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import yaml

CHART = Path(__file__).resolve().parents[2] / "charts" / "skillgym"
DASHBOARDS = CHART / "dashboards"
RULES = CHART / "rules" / "skillgym-alerts.yaml"

METRIC_NAME = re.compile(r"\b(skillgym_[a-z0-9_]+)\b")
RECORDED_NAME = re.compile(r"\b(skillgym:[a-z0-9_:]+)\b")
HISTOGRAM_SUFFIXES = ("_bucket", "_sum", "_count")


@dataclass(frozen=True)
class Query:
    source: str  # file name
    kind: str  # "panel", "alert" or "record"
    title: str  # panel title, alert name or recorded series
    expr: str

    @property
    def ident(self) -> str:
        return f"{self.source}:{self.title}"

    def metric_names(self) -> set[str]:
        return set(METRIC_NAME.findall(self.expr))

    def recorded_names(self) -> set[str]:
        return set(RECORDED_NAME.findall(self.expr))


def dashboard_queries(directory: Path = DASHBOARDS) -> Iterator[Query]:
    for path in sorted(directory.glob("*.json")):
        board = json.loads(path.read_text())
        for panel in _panels(board.get("panels", [])):
            for target in panel.get("targets", []):
                if target.get("expr"):
                    yield Query(path.name, "panel", f"{panel['title']} [{target.get('refId', '?')}]", target["expr"])


def _panels(panels: list[dict]) -> Iterator[dict]:
    for panel in panels:
        yield panel
        yield from _panels(panel.get("panels", []))  # rows nest their panels


def rule_queries(path: Path = RULES) -> Iterator[Query]:
    for group in yaml.safe_load(path.read_text())["groups"]:
        for rule in group["rules"]:
            if "alert" in rule:
                yield Query(path.name, "alert", rule["alert"], rule["expr"].strip())
            else:
                yield Query(path.name, "record", rule["record"], rule["expr"].strip())


def all_queries() -> list[Query]:
    return [*dashboard_queries(), *rule_queries()]


def exported_metric_names() -> set[str]:
    """Series names the metrics module exports (counters add ``_total``; histograms their parts)."""
    from prometheus_client import Counter, Gauge, Histogram
    from skillgym_core import metrics
    from skillgym_reviewer import metrics as reviewer_metrics

    names: set[str] = set()
    for value in [*vars(metrics).values(), *vars(reviewer_metrics).values()]:
        if isinstance(value, Counter):
            names.add(value._name + "_total")
        elif isinstance(value, Histogram):
            names.update(value._name + suffix for suffix in HISTOGRAM_SUFFIXES)
        elif isinstance(value, Gauge):
            names.add(value._name)
    return names


def base_metric(series: str) -> str:
    for suffix in HISTOGRAM_SUFFIXES:
        if series.endswith(suffix):
            return series[: -len(suffix)]
    return series
