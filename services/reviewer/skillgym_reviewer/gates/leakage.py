"""Gate: no answer leaks. The reference answers, or the verifier's hidden constants, must not be
readable from the instruction, the initial workspace or the skill, and the solution must not be
reachable from the agent's side."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from skillgym_core.contracts.task import TaskDir

from skillgym_reviewer.gates.answer_values import VisibleText, id_prefixes, told_values
from skillgym_reviewer.gates.patches import patches_to_solution
from skillgym_reviewer.gates.validity import Evidence, workspace_files
from skillgym_reviewer.report import GateResult

TEXT_SUFFIXES = {".md", ".txt", ".json", ".jsonl", ".csv", ".tsv", ".yaml", ".yml", ".toml", ".py", ".sh", ".ini", ".cfg", ""}
HIDDEN_NAMES = re.compile(r"(^|/)(solve|solution|expected|answers?|answer_key|oracle)[^/]*$", re.I)


def _norm(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip().casefold()


def _leaves(value: Any) -> list[str]:
    if isinstance(value, dict):
        return [leaf for v in value.values() for leaf in _leaves(v)]
    if isinstance(value, list):
        return [leaf for v in value for leaf in _leaves(v)]
    return [] if value is None or isinstance(value, bool) else [str(value)]


def _canonical(data: bytes) -> str | None:
    try:
        return json.dumps(json.loads(data), sort_keys=True)
    except (UnicodeDecodeError, json.JSONDecodeError):
        return None


def _texts(files: dict[str, bytes]) -> dict[str, str]:
    return {rel: data.decode("utf-8", "replace") for rel, data in files.items() if Path(rel).suffix in TEXT_SUFFIXES}


def leakage_gate(task: TaskDir, evidence: Evidence, min_chars: int) -> GateResult:
    reasons: list[str] = []
    instruction = task.instruction()
    workspace = workspace_files(evidence.initial_workspace)
    skill = workspace_files(task.skills) if task.skills.is_dir() else {}
    visible = {"instruction.md": instruction, **{f"workspace/{k}": v for k, v in _texts(workspace).items()}}
    visible_norm = {name: _norm(text) for name, text in visible.items()}
    skill_norm = {f"skill/{k}": _norm(v) for k, v in _texts(skill).items()}
    canon_visible = {_canonical(data) for data in workspace.values()} - {None}

    for rel in workspace:
        if HIDDEN_NAMES.search(rel):
            reasons.append(f"the workspace holds a file named like an answer or solution: {rel}")
    for rel, data in evidence.outputs().items():
        text = _norm(data.decode("utf-8", "replace"))
        if len(text) >= min_chars:
            for name, seen in {**visible_norm, **skill_norm}.items():
                if text in seen:
                    reasons.append(f"the expected content of {rel} is visible verbatim in {name}")
        canon = _canonical(data)
        if canon is not None and canon in canon_visible and len(canon) >= min_chars:
            reasons.append(f"the expected content of {rel} ships in the initial workspace")

    constants = []
    for path in sorted(task.tests.rglob("*.json")):
        try:
            constants += [c for c in _leaves(json.loads(path.read_text())) if len(_norm(c)) >= min_chars]
        except (UnicodeDecodeError, json.JSONDecodeError):
            continue
    if constants:
        # skill content is meant to be read; only constants the skill does not already hold count
        exposed = [
            c for c in constants
            if any(_norm(c) in seen for seen in visible_norm.values())
            and not any(_norm(c) in seen for seen in skill_norm.values())
        ]
        if len(exposed) >= 2 and len(exposed) * 2 >= len(constants):
            reasons.append(
                f"{len(exposed)} of {len(constants)} verifier constants are visible in the instruction or workspace"
                f" (e.g. {exposed[0][:60]!r})"
            )
    outputs = evidence.outputs()
    for rel, told in told_values(outputs, VisibleText(instruction, _texts(workspace))).items():
        reasons.append(f"the instruction states {len(told)} of the values {rel} must work out ({', '.join(told[:6])})")
    reasons += [f"the answer shows through: {found}" for found in id_prefixes(outputs, visible)]
    reasons += patches_to_solution(workspace, evidence.initial_workspace, evidence.solved_workspace)
    for rel, text in _texts(workspace).items():
        if re.search(r"(^|[\s\"'`(])/(solution|tests)/", text):
            reasons.append(f"workspace/{rel} points at the hidden /solution or /tests")
    if reasons:
        return GateResult.fail("leakage", "leakage", sorted(set(reasons)))
    return GateResult.ok("leakage", verifier_constants=len(constants))
