"""Hardening: the diagnosis of solved runs (Skill2Env: how long the runs were, whether the
solver opened the skill, which shortcut that suggests) and, for family tasks, the next setting
of the difficulty knobs; each revision records the knobs that changed."""

from __future__ import annotations

import json
import statistics
from typing import Any

from pydantic import ValidationError
from skillgym_core.contracts.atif import Trajectory
from skillgym_core.contracts.task import SkillGymMetadata
from skillgym_core.errors import ArtifactNotFound
from skillgym_core.store.base import Store

from skillgym_builder.families import knobs as knob_rules
from skillgym_builder.families.base import FamilySpec
from skillgym_builder.family_build import FamilyPlan
from skillgym_builder.family_flow import plan_of

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


def harden_family(spec: FamilySpec, meta: SkillGymMetadata, *, revision: int) -> tuple[FamilyPlan, list[knob_rules.KnobChange]]:
    """The plan of the next revision of a family task: its knobs one step harder (the first knob in
    the hardening order below its top level), a fresh instance, and the change list appended to
    the lineage's earlier ones."""
    plan = plan_of(meta, revision)
    knobs, changes = knob_rules.harden(spec, plan.knobs)
    lineage = plan.knob_changes + tuple({**c.to_dict(), "revision": revision} for c in changes)
    return FamilyPlan(seed=revision, knobs=knobs, fit=plan.fit, knob_changes=lineage), changes
