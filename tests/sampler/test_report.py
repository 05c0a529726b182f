"""The statistics report over a real local store of ATIF trajectories and verification records."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest
import tiktoken
from skillgym_core import keys
from skillgym_core.contracts.atif import Metrics, ObservationResult, ToolCall, VerificationRecord
from skillgym_core.store.base import put_json
from skillgym_core.store.local import LocalStore
from skillgym_sampler.errors import SamplerError
from skillgym_sampler.recorder import TrajectoryRecorder
from skillgym_sampler.report import build_report
from skillgym_sampler.report.render import charts, funnel_unit
from skillgym_sampler.report.stats import quantile, top_share
from skillgym_sampler.report.tokens import install_offline_encoding


def _store_run(store: LocalStore, index: int, *, harness: str, model: str, passed: bool, skill: bool,
               task: str, category: str, calls_per_turn: list[int], read_skill: bool = False) -> str:
    trajectory_id = f"traj-{index:04d}"
    recorder = TrajectoryRecorder(session_id=trajectory_id, trajectory_id=trajectory_id, agent_name=harness,
                                  agent_version="1", model_name=model)
    recorder.system("You are an agent.")
    recorder.user(f"Task {task}: total the ledger.")
    for turn, n_calls in enumerate(calls_per_turn):
        calls = [ToolCall(tool_call_id=f"c{turn}_{k}", function_name="bash",
                          arguments={"command": "cat /skills/ledger-total/SKILL.md" if read_skill and turn == 0
                                     else f"echo step {turn} {k}"}) for k in range(n_calls)]
        recorder.agent_step(f"turn {turn} of run {index}", tool_calls=calls,
                            results=[ObservationResult(source_call_id=c.tool_call_id, content="output " * (turn + 3))
                                     for c in calls],
                            reasoning=f"thinking about turn {turn}" if turn % 2 == 0 else None,
                            metrics=Metrics(prompt_tokens=10, completion_tokens=5))
    store.put_bytes(keys.trajectory_atif(trajectory_id), recorder.build().model_dump_json(exclude_none=True).encode())
    record = VerificationRecord(trajectory_id=trajectory_id, task_id=task, harness=harness, model=model,
                                skill_provided=skill, reward=1.0 if passed else 0.0, passed=passed,
                                skill_read=read_skill, category=category)
    put_json(store, keys.trajectory_verification(trajectory_id), record.model_dump(mode="json"))
    return trajectory_id


@pytest.fixture
def store(tmp_path: Path) -> LocalStore:
    store = LocalStore(tmp_path / "store")
    index = 0
    shapes = [[1], [1, 2], [1, 1, 0], [3, 1, 1, 0], [1, 1, 1, 1, 2, 0]]
    for task_no in range(6):
        category = "data" if task_no < 3 else "docs"
        task = f"task-{task_no}"
        # builtin/m1 solves every task with the skill, and tasks 0-1 also without it
        for skill in (True, False):
            passed = skill or task_no < 2
            _store_run(store, index, harness="builtin", model="m1", passed=passed, skill=skill, task=task,
                       category=category, calls_per_turn=shapes[task_no % len(shapes)], read_skill=skill)
            index += 1
        _store_run(store, index, harness="mini-swe-agent", model="m2", passed=task_no % 3 == 0, skill=True,
                   task=task, category=category, calls_per_turn=shapes[(task_no + 2) % len(shapes)])
        index += 1
        _store_run(store, index, harness="oracle", model="reference-solution", passed=True, skill=True, task=task,
                   category=category, calls_per_turn=[1])
        index += 1
    store.put_bytes("tasks/task-0/package.tar.gz", b"x")
    return store


def test_quantiles_and_concentration_match_their_definitions() -> None:
    values = [3.0, 1.0, 7.0, 4.0, 10.0, 2.0]
    for q in (0.0, 0.5, 0.9, 0.95, 1.0):
        assert quantile(values, q) == pytest.approx(float(np.percentile(values, q * 100)))
    assert quantile([], 0.5) is None
    tokens = list(range(1, 101))
    assert top_share(tokens, 0.01) == pytest.approx(100 / sum(tokens))
    assert top_share(tokens[:15], 0.10) == pytest.approx((15 + 14) / sum(tokens[:15]))  # ceil(1.5) = 2 records


def test_report_over_a_store(store: LocalStore, tmp_path: Path) -> None:
    out = tmp_path / "report"
    report = build_report(tmp_path, out)
    assert (out / "report.html").read_text().count("<img") == 7
    assert all((out / name).stat().st_size > 1000 for name in ("funnel_tasks.png", "funnel_runs.png", "token_composition.png"))
    assert json.loads((out / "report.json").read_text())["funnel"] == report["funnel"]

    funnel = report["funnel"]
    assert funnel["attempts"] == 18 and funnel["tasks_built"] == 1 and report["excluded_reference_runs"] == 6
    assert funnel["passed_runs"] == 6 + 2 + 2 and funnel["tasks_with_a_passed_run"] == 6
    builtin = report["per_configuration"]["builtin / m1"]
    assert builtin["attempts"] == 12 and builtin["passed"] == 8 and builtin["pass_rate"] == pytest.approx(8 / 12)
    assert builtin["explicit_skill_use_rate"] == pytest.approx(6 / 8)
    assert builtin["explicit_skill_use_rate_skill_provided"] == 1.0
    deps = report["skill_dependence"]
    assert deps["per_configuration"]["builtin / m1"] == {
        "paired_tasks": 6, "skill_dep": 4, "skill_dep_ratio": pytest.approx(4 / 6), "only_without_skill": 0,
        "both": 2}
    assert deps["per_category"]["docs"]["skill_dep_ratio"] == 1.0
    assert "mini-swe-agent / m2" not in deps["per_configuration"]  # never run without the skill

    # recompute the overall length and token statistics by hand from the stored documents
    enc = tiktoken.get_encoding("o200k_base")
    totals, calls, shares = [], [], []
    for key in store.list("trajectories/"):
        if not key.endswith("verification.json"):
            continue
        record = json.loads(store.get_bytes(key))
        if not record["passed"] or record["harness"] == "oracle":
            continue
        doc = json.loads(store.get_bytes(key.replace("verification.json", "atif.json")))
        agent = [s for s in doc["steps"] if s["source"] == "agent"]
        calls.append(sum(len(s.get("tool_calls", [])) for s in agent))
        texts = {
            "rest": "\n".join(s["message"] for s in doc["steps"] if s["message"]),
            "reasoning": "\n".join(s["reasoning_content"] for s in agent if s.get("reasoning_content")),
            "tool_calls": "\n".join(f"bash {json.dumps(c['arguments'])}" for s in agent for c in s.get("tool_calls", [])),
            "tool_output": "\n".join(r["content"] for s in agent for r in s.get("observation", {}).get("results", [])),
        }
        totals.append(sum(len(enc.encode_ordinary(t)) for t in texts.values()))
        shares.append(sum(1 for s in agent if len(s.get("tool_calls", [])) == 1) / len(agent))
    overall = report["overall"]
    assert overall["length"]["tool_calls"]["median"] == pytest.approx(float(np.percentile(calls, 50)))
    assert overall["length"]["tokens"]["p95"] == pytest.approx(float(np.percentile(totals, 95)))
    assert overall["length"]["tokens"]["max"] == max(totals)
    assert sum(overall["token_totals"].values()) == sum(totals)
    assert sum(overall["token_composition"].values()) == pytest.approx(1.0)
    assert overall["message_tool_call_share"]["1"] == pytest.approx(sum(shares) / len(shares))
    top = sorted(totals, reverse=True)[: math.ceil(0.1 * len(totals))]
    assert overall["token_concentration"]["top_10pct"] == pytest.approx(sum(top) / sum(totals))
    assert sum(b["record_share"] for b in overall["message_buckets"]) == pytest.approx(1.0)


def test_offline_encoding_and_bad_sources(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(tmp_path / "cache"))
    path = install_offline_encoding()
    assert path.parent == tmp_path / "cache" and path.stat().st_size > 1_000_000
    with pytest.raises(SamplerError) as info:
        build_report(tmp_path / "nowhere", tmp_path / "out")
    assert info.value.reason == "no_store"


def test_every_chart_has_one_unit_and_rates_sit_on_a_fixed_axis(store: LocalStore, tmp_path: Path) -> None:
    """The funnel is split by what it counts (skills, tasks, agent runs) and a pass rate of 0
    everywhere still shows a 0-1 axis, not one around zero."""
    report = build_report(tmp_path, tmp_path / "report")
    report["per_category"] = {name: {**row, "pass_rate": 0.0} for name, row in report["per_category"].items()}
    shown = {chart.name: chart for chart in charts(report)}
    assert {"funnel_skills.png", "funnel_tasks.png", "funnel_runs.png"} <= set(shown)
    assert shown["funnel_runs.png"].labels == ["attempts", "passed runs", "passed runs with explicit skill use"]
    assert all(funnel_unit(label.replace(" ", "_")) == "tasks" for label in shown["funnel_tasks.png"].labels)
    rate = shown["pass_rate_by_category.png"]
    assert rate.unit == "rate" and rate.fixed_axis == (0.0, 1.0) and set(rate.values) == {0.0}
    assert shown["tokens_median_by_configuration.png"].fixed_axis is None
