"""Dashboards and alert rules: valid PromQL, only metrics SkillGym exports, alert behaviour unit-tested."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml

from tests.dashboards.promql import (
    DASHBOARDS,
    RULES,
    Query,
    all_queries,
    dashboard_queries,
    exported_metric_names,
    rule_queries,
)

HERE = Path(__file__).resolve().parent
PROMTOOL = shutil.which("promtool") or "/usr/bin/promtool"
QUERIES = all_queries()


def promtool(*args: str, cwd: Path = HERE) -> subprocess.CompletedProcess[str]:
    return subprocess.run([PROMTOOL, *args], cwd=cwd, capture_output=True, text=True, check=False)


def test_alert_rules_pass_their_promtool_unit_tests() -> None:
    result = promtool("test", "rules", "alerts_test.yaml")
    assert result.returncode == 0, result.stdout + result.stderr


def test_rule_file_is_valid() -> None:
    result = promtool("check", "rules", str(RULES))
    assert result.returncode == 0, result.stdout + result.stderr


def test_every_dashboard_query_parses(tmp_path: Path) -> None:
    """promtool parses each panel query by checking it as a recording rule."""
    rules = {
        "groups": [
            {
                "name": "dashboards",
                "rules": [{"record": f"panel_{i}", "expr": q.expr} for i, q in enumerate(dashboard_queries())],
            }
        ]
    }
    path = tmp_path / "panels.yaml"
    path.write_text(yaml.safe_dump(rules))
    result = promtool("check", "rules", str(path))
    assert result.returncode == 0, result.stdout + result.stderr


@pytest.mark.parametrize("query", QUERIES, ids=[q.ident for q in QUERIES])
def test_queries_use_only_exported_metrics(query: Query) -> None:
    assert query.metric_names(), "a query must read at least one SkillGym metric"
    assert query.metric_names() <= exported_metric_names()
    recorded = {q.title for q in rule_queries() if q.kind == "record"}
    assert query.recorded_names() <= recorded


def test_dashboards_cover_the_required_views() -> None:
    exprs = " ".join(q.expr for q in dashboard_queries())
    for needed in (
        "skillgym_events_consumed_total",  # throughput per topic
        "skillgym_consumer_lag",
        "skillgym_gate_outcomes_total",  # gate funnel
        'skillgym_runs_finished_total{passed="true"}',  # pass rate by harness x model x category
        'label="skill-dep"',  # Skill-Dep ratio
        "skillgym_sandbox_runs_total",
        "skillgym_sandbox_seconds_bucket",
        "skillgym_trajectory_steps_bucket",
        "skillgym_train_loss",
        "skillgym_train_tokens_per_second",
        "skillgym_review_mutation_score_bucket",  # verifier strength per family
        "skillgym_review_too_lax_rejections_total",
    ):
        assert needed in exprs, needed
    pass_rate = next(q for q in dashboard_queries() if "pass rate" in q.title)
    assert "by (harness, model, category)" in pass_rate.expr


def test_dashboard_json_is_grafana_shaped() -> None:
    for path in sorted(DASHBOARDS.glob("*.json")):
        board = json.loads(path.read_text())
        assert board["uid"] == path.stem and board["title"].startswith("SkillGym")
        ids = [panel["id"] for panel in board["panels"]]
        assert len(ids) == len(set(ids))
        for panel in board["panels"]:
            assert panel["datasource"]["uid"] == "${datasource}"
            assert set(panel["gridPos"]) == {"x", "y", "w", "h"}
            assert panel["gridPos"]["x"] + panel["gridPos"]["w"] <= 24
