"""LLM-judged rubric items in the trusted verifier runtime.

A task whose ``tests/eval_spec.json`` holds ``{"rubric": [...], "pass_threshold": t}`` is graded
``r = sum(w_c * q_c)`` (weights sum to 1): ``deterministic`` items take their score from the
``reward.json`` that ``test.sh`` wrote (by item id; missing scores 0; a score that is not a
finite number in [0, 1] scores 0 and fails the rubric), ``llm_judge`` items from
a judge that reads the files matching the item's ``target_globs`` in the verifier's trusted copy
of the workspace. The judge runs on the host and only reads regular files (never follows a
link, never executes anything); an unreachable judge or an unparseable answer scores 0 with
the reason recorded, and a missing judge scores 0 and says so."""

from __future__ import annotations

import json
import math
import os
import re
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any, Literal, TypeGuard

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from skillgym_core.errors import ContractError
from skillgym_core.llm.client import LLMClient, LLMError
from skillgym_core.sandbox.workspace import read_regular_file

EVAL_SPEC_FILE = "eval_spec.json"
WEIGHT_TOLERANCE = 1e-6
MAX_TARGET_FILES = 20
MAX_TARGET_BYTES = 64 * 1024
MAX_PROMPT_FILE_CHARS = 12_000
JUDGE_TEMPERATURES = (0.0, 0.3, 0.3)

JUDGE_SYSTEM = """You are a strict, sceptical grader of one rubric item of a task attempt.
Judge only what the files show; claims the files do not back up earn nothing. Answer with one
JSON object and nothing else: {"score": <number from 0 to 1>, "reason": "<one or two sentences>"}."""


class EvalItem(BaseModel):
    model_config = ConfigDict(extra="allow")
    id: str = Field(min_length=1)
    description: str = ""
    weight: float = Field(gt=0, le=1)
    method: Literal["deterministic", "llm_judge"] = "deterministic"
    judge_instruction: str = ""
    target_globs: list[str] = Field(default_factory=list)

    @field_validator("target_globs")
    @classmethod
    def _relative_globs(cls, globs: list[str]) -> list[str]:
        for pattern in globs:
            path = PurePosixPath(pattern)
            if not pattern or path.is_absolute() or ".." in path.parts:
                raise ValueError(f"target glob {pattern!r} must be relative to the workspace, without '..'")
        return globs

    @model_validator(mode="after")
    def _judge_needs_targets(self) -> EvalItem:
        if self.method == "llm_judge" and not self.target_globs:
            raise ValueError(f"llm_judge item {self.id!r} needs target_globs")
        return self


class EvalSpec(BaseModel):
    model_config = ConfigDict(extra="allow")
    rubric: list[EvalItem] = Field(min_length=1)
    pass_threshold: float = Field(1.0, ge=0, le=1)
    rubric_summary: str = ""

    @model_validator(mode="after")
    def _weights(self) -> EvalSpec:
        ids = [item.id for item in self.rubric]
        if len(set(ids)) != len(ids):
            raise ValueError(f"rubric item ids repeat: {ids}")
        total = sum(item.weight for item in self.rubric)
        if not math.isclose(total, 1.0, abs_tol=WEIGHT_TOLERANCE):
            raise ValueError(f"rubric weights sum to {total}, not 1")
        return self

    @property
    def judge_items(self) -> list[EvalItem]:
        return [item for item in self.rubric if item.method == "llm_judge"]


def load_eval_spec(tests: Path) -> EvalSpec | None:
    """The spec in ``tests/eval_spec.json``, None when there is none; ContractError when malformed."""
    raw = read_regular_file(tests / EVAL_SPEC_FILE, max_bytes=1 << 20)
    if raw is None:
        if (tests / EVAL_SPEC_FILE).is_symlink():
            raise ContractError("tests/eval_spec.json must be a regular file", reason="eval_spec_invalid")
        return None
    try:
        return EvalSpec.model_validate(json.loads(raw.decode()))
    except (ValueError, UnicodeDecodeError, ValidationError) as exc:
        raise ContractError(f"tests/eval_spec.json: {exc}", reason="eval_spec_invalid") from exc


def _glob_regex(pattern: str) -> re.Pattern[str]:
    """``**/`` any directories (or none), ``**`` anything, ``*``/``?`` within one path segment."""
    out, i = [], 0
    while i < len(pattern):
        if pattern.startswith("**/", i):
            out.append("(?:.*/)?")
            i += 3
        elif pattern.startswith("**", i):
            out.append(".*")
            i += 2
        elif pattern[i] == "*":
            out.append("[^/]*")
            i += 1
        elif pattern[i] == "?":
            out.append("[^/]")
            i += 1
        else:
            out.append(re.escape(pattern[i]))
            i += 1
    return re.compile("".join(out) + r"\Z")


def gather_targets(root: Path, globs: Sequence[str], *, max_files: int = MAX_TARGET_FILES) -> dict[str, str]:
    """Regular files under ``root`` matching ``globs`` (relative path -> text), read without
    following links; at most ``max_files`` files of ``MAX_TARGET_BYTES`` each."""
    patterns = [_glob_regex(p[2:] if p.startswith("./") else p) for p in globs]
    found: dict[str, str] = {}
    for dirpath, dirnames, names in os.walk(root, followlinks=False):
        dirnames.sort()
        for name in sorted(names):
            path = Path(dirpath) / name
            rel = path.relative_to(root).as_posix()
            if not any(p.match(rel) for p in patterns):
                continue
            data = read_regular_file(path, max_bytes=MAX_TARGET_BYTES)
            if data is None:
                continue
            found[rel] = data.decode(errors="replace")
            if len(found) >= max_files:
                return found
    return found


@dataclass
class ItemScore:
    id: str
    method: str
    weight: float
    score: float
    reason: str = ""


@dataclass
class RubricScore:
    reward: float
    passed: bool
    pass_threshold: float
    judge: Literal["configured", "unconfigured", "not_needed"]
    items: list[ItemScore] = field(default_factory=list)
    judge_unavailable: list[str] = field(default_factory=list)
    bad_items: list[str] = field(default_factory=list)  # deterministic items whose score was not in [0, 1]

    @property
    def hinges_on_judge(self) -> bool:
        """Failed, but would pass had the unavailable judge items scored full marks."""
        if self.bad_items:
            return False
        missing = sum(item.weight for item in self.items if item.id in self.judge_unavailable)
        return not self.passed and round(self.reward + missing, 6) >= round(self.pass_threshold, 6)

    def scores(self) -> dict[str, float]:
        return {item.id: item.score for item in self.items}

    def to_dict(self) -> dict[str, Any]:
        return {
            "reward": self.reward, "passed": self.passed, "pass_threshold": self.pass_threshold,
            "judge": self.judge, "judge_unavailable": self.judge_unavailable, "bad_items": self.bad_items,
            "items": [asdict(item) for item in self.items],
        }  # fmt: skip


class EvalJudge:
    """Scores ``llm_judge`` items through an OpenAI-compatible endpoint; never raises."""

    def __init__(self, client: LLMClient, *, temperatures: Sequence[float] = JUDGE_TEMPERATURES) -> None:
        self.client = client
        self.temperatures = tuple(temperatures) or (0.0,)

    @classmethod
    def for_role(cls, role: str = "judge") -> EvalJudge | None:
        client = LLMClient.for_role(role)
        return None if client is None else cls(client)

    def score(self, item: EvalItem, instruction: str, files: Mapping[str, str]) -> tuple[float | None, str]:
        """(score in [0, 1], reason), or (None, why) when the judge could not give one."""
        if not files:
            return 0.0, f"no file matches {item.target_globs}"
        shown = "\n\n".join(f"=== {rel} ===\n{text[:MAX_PROMPT_FILE_CHARS]}" for rel, text in files.items())
        user = (
            f"Task given to the agent:\n{instruction[:8000]}\n\nRubric item {item.id}: {item.description}\n"
            f"How to judge it:\n{item.judge_instruction or item.description}\n\nFiles the agent produced:\n{shown}"
        )
        messages = [{"role": "system", "content": JUDGE_SYSTEM}, {"role": "user", "content": user}]
        problem = "judge gave no answer"
        for temperature in self.temperatures:
            try:
                text = self.client.chat(
                    messages, temperature=temperature, response_format={"type": "json_object"}
                ).content
            except LLMError as exc:
                return None, f"judge unreachable ({exc.reason}): {exc}"
            verdict = parse_verdict(text)
            if verdict is not None:
                return verdict
            problem = f"judge answer is not {{score, reason}} JSON: {text[:200]!r}"
        return None, problem


def parse_verdict(text: str) -> tuple[float, str] | None:
    try:
        data = json.loads(text[text.find("{") : text.rfind("}") + 1])
        value = float(data["score"])
    except (ValueError, KeyError, TypeError):
        return None
    if isinstance(data["score"], bool) or not 0.0 <= value <= 1.0:
        return None
    return value, str(data.get("reason", ""))[:1000]


def is_unit_score(value: object) -> TypeGuard[int | float]:
    """A finite number in [0, 1] (a bool is not a score)."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return False
    return 0 <= value <= 1  # NaN compares false and infinities fall outside


def score_rubric(
    spec: EvalSpec,
    rewards: Mapping[str, float],
    *,
    judge: EvalJudge | None,
    workspace: Path,
    instruction: str,
) -> RubricScore:
    """Combine ``test.sh``'s deterministic scores with judge scores into ``r = sum(w_c * q_c)``."""
    items: list[ItemScore] = []
    unavailable: list[str] = []
    bad: list[str] = []
    for item in spec.rubric:
        if item.method == "deterministic":
            given: object = rewards.get(item.id)
            if item.id not in rewards:
                value, reason = 0.0, "reward.json has no score for this item"
            elif is_unit_score(given):
                value, reason = float(given), ""
            else:
                shown = repr(given) if isinstance(given, float) else type(given).__name__
                value, reason = 0.0, f"reward.json's score ({shown}) is not a finite number in [0, 1]; scored 0"
                bad.append(item.id)
        elif judge is None:
            value, reason = 0.0, "no judge configured (set SKILLGYM_JUDGE_LLM_BASE_URL); scored 0"
            unavailable.append(item.id)
        else:
            judged, reason = judge.score(item, instruction, gather_targets(workspace, item.target_globs))
            if judged is None:
                unavailable.append(item.id)
            value = judged or 0.0
        items.append(ItemScore(item.id, item.method, item.weight, value, reason))
    reward = round(sum(i.weight * i.score for i in items), 6)
    return RubricScore(
        reward=reward,
        passed=not bad and reward >= round(spec.pass_threshold, 6),
        pass_threshold=spec.pass_threshold,
        judge="not_needed" if not spec.judge_items else ("configured" if judge is not None else "unconfigured"),
        items=items,
        judge_unavailable=unavailable,
        bad_items=bad,
    )
