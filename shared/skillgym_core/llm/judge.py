"""Rubric rewards ``r = sum(w_c * q_c)`` with ``sum(w_c) = 1``: programmatic items come from the
verifier's reward.json (0/1); items of kind ``llm`` get a partial score in [0, 1] from the judge."""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from skillgym_core.errors import ContractError, MalformedModelOutput
from skillgym_core.llm.client import LLMClient

WEIGHT_TOLERANCE = 1e-6

JUDGE_PROMPT = """You grade one rubric item of a task attempt. Read the criterion and the
attempt's outputs; answer with one JSON object only: {"score": a number from 0 to 1, "reason": "..."}."""


class RubricItem(BaseModel):
    model_config = ConfigDict(extra="allow")
    name: str
    weight: float = Field(gt=0, le=1)
    kind: Literal["programmatic", "llm"] = "programmatic"
    description: str = ""


def parse_rubric(raw: Sequence[Mapping[str, Any]]) -> list[RubricItem]:
    items = [RubricItem.model_validate(item) for item in raw]
    names = [item.name for item in items]
    if len(set(names)) != len(names):
        raise ContractError("rubric item names repeat", names=names)
    total = sum(item.weight for item in items)
    if not math.isclose(total, 1.0, abs_tol=WEIGHT_TOLERANCE):
        raise ContractError(f"rubric weights sum to {total}, not 1", total=total)
    return items


def combine(items: Sequence[RubricItem], rewards: Mapping[str, float], judged: Mapping[str, float]) -> float:
    """The weighted reward; a missing programmatic item scores 0, a missing judged one too."""
    score = 0.0
    for item in items:
        source = judged if item.kind == "llm" else rewards
        score += item.weight * min(1.0, max(0.0, float(source.get(item.name, 0.0))))
    return round(score, 6)


class RubricJudge:
    def __init__(self, client: LLMClient) -> None:
        self.client = client

    def score(self, item: RubricItem, instruction: str, outputs: Mapping[str, str]) -> tuple[float, str]:
        content = json.dumps({"criterion": item.description or item.name, "instruction": instruction,
                              "outputs": {k: v[:4000] for k, v in outputs.items()}})
        response = self.client.chat(
            [{"role": "system", "content": JUDGE_PROMPT}, {"role": "user", "content": content}],
            response_format={"type": "json_object"},
        )
        text = response.content
        try:
            verdict = json.loads(text[text.find("{") : text.rfind("}") + 1])
            value = float(verdict["score"])
        except (ValueError, KeyError, TypeError) as exc:
            raise MalformedModelOutput("judge gave no numeric score", reason="judge_malformed", text=text[:200]) from exc
        if not 0.0 <= value <= 1.0 or math.isnan(value):
            raise MalformedModelOutput(f"judge score {value} is outside [0, 1]", reason="judge_malformed")
        return value, str(verdict.get("reason", ""))

    def judge(self, items: Sequence[RubricItem], instruction: str, outputs: Mapping[str, str]) -> dict[str, float]:
        return {item.name: self.score(item, instruction, outputs)[0] for item in items if item.kind == "llm"}
