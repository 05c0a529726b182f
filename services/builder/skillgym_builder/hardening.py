"""Diagnosis of solved runs for hardening (Skill2Env): how long the runs were, whether the
solver opened the skill, whether it looked at hidden paths, and which shortcut that suggests."""

from __future__ import annotations

import json
import statistics
from typing import Any

from pydantic import ValidationError
from skillgym_core.contracts.atif import Trajectory
from skillgym_core.errors import ArtifactNotFound
from skillgym_core.store.base import Store

SHORT_RUN_STEPS = 6


def _texts(trajectory: Trajectory) -> list[str]:
    out = []
    for step in trajectory.steps:
        for call in step.tool_calls or []:
            out.append(json.dumps(call.arguments))
    return out


def diagnose(store: Store, trajectory_keys: list[str], pass_rate: float) -> dict[str, Any]:
    runs, unreadable = [], []
    for key in trajectory_keys:
        try:
            runs.append(Trajectory.model_validate_json(store.get_bytes(key)))
        except (ArtifactNotFound, ValidationError, ValueError) as exc:
            unreadable.append(f"{key}: {type(exc).__name__}")
    steps = [len(t.steps) for t in runs]
    calls = [sum(len(s.tool_calls or []) for s in t.steps) for t in runs]
    read_skill = [any("SKILL.md" in text or "/skills/" in text for text in _texts(t)) for t in runs]
    findings = []
    if runs and statistics.median(steps) <= SHORT_RUN_STEPS:
        findings.append("solved in very few steps: the intended challenge was bypassed or too small")
    if runs and not any(read_skill):
        findings.append("no solved run opened the skill: the task does not depend on it enough")
    if pass_rate > 0.7:
        findings.append(f"pass rate {pass_rate:.2f} is above the 0.7 hardening threshold")
    return {
        "runs": len(runs),
        "unreadable": unreadable,
        "pass_rate": pass_rate,
        "median_steps": statistics.median(steps) if steps else None,
        "median_tool_calls": statistics.median(calls) if calls else None,
        "skill_read_rate": (sum(read_skill) / len(runs)) if runs else None,
        "findings": findings,
    }


def shortcut_pattern(task_id: str, round_: int, diagnosis: dict[str, Any]) -> dict[str, str] | None:
    """A new general challenge for the pool, named after what the diagnosis found."""
    if diagnosis.get("skill_read_rate") == 0:
        return {
            "id": "skill_bypass_guard",
            "demand": "skill-use",
            "name": "Skill bypass guard",
            "description": "Solvers passed without opening the skill: make a required fact available only in the skill.",
        }
    if diagnosis.get("median_steps") is not None and diagnosis["median_steps"] <= SHORT_RUN_STEPS:
        return {
            "id": "short_run_guard",
            "demand": "long-horizon-consistency",
            "name": "Short-run guard",
            "description": "Solvers finished in a handful of steps: require several dependent outputs checked together.",
        }
    return None
