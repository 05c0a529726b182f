"""Optional LLM annotation for what rules cannot judge, with agreement against the rules.

Talks to any OpenAI-compatible ``/chat/completions`` endpoint. The model's verdict on
description consistency feeds the ``inconsistent`` filter; its runtime answers are only
compared with the rules and reported as agreement."""

from __future__ import annotations

import json
import re
from collections import Counter
from typing import Any

import httpx
from skillgym_core.contracts.skill import Annotation, Diagnostic, Evidence, SkillRecord

from skillgym_ingest.errors import LLMAnnotatorError
from skillgym_ingest.settings import IngestSettings

SYSTEM_PROMPT = (
    "You review agent skills (a SKILL.md with YAML front matter and instructions). Answer with one JSON "
    "object and nothing else, with keys: network_required (bool: the skill needs network access while it "
    "runs), gpu_required (bool), description_consistent (bool: the description matches what the body "
    "teaches), requirement_clarity (number 0-1: inputs, steps and expected outputs are stated), "
    "category (string), rationale (one sentence)."
)
COMPARED = ("network_required", "gpu_required", "description_consistent")
_FENCED = re.compile(r"```(?:json)?\s*(.*?)```", re.S)


def parse_verdict(text: str) -> dict[str, Any]:
    match = _FENCED.search(text)
    candidate = match.group(1) if match else text[text.find("{") : text.rfind("}") + 1]
    try:
        data = json.loads(candidate)
    except ValueError as exc:
        raise LLMAnnotatorError("annotator reply is not JSON", reply=text[:300]) from exc
    if not isinstance(data, dict):
        raise LLMAnnotatorError("annotator reply is not a JSON object", reply=text[:300])
    return data


def rule_view(record: SkillRecord) -> dict[str, bool]:
    def value(axis: dict[str, Annotation], key: str) -> Any:
        annotation = axis.get(key)
        return annotation.value if annotation is not None else None

    network = value(record.runtime, "network") or {}
    gpu = value(record.runtime, "gpu") or {}
    consistency = value(record.quality, "description_consistency") or {}
    return {
        "network_required": bool(network.get("required")),
        "gpu_required": bool(gpu.get("required")),
        "description_consistent": consistency.get("score", 0.0) >= 0.2,
    }


class LLMAnnotator:
    def __init__(self, settings: IngestSettings, client: httpx.Client | None = None) -> None:
        self.settings = settings
        headers = {"Content-Type": "application/json"}
        key = settings.llm_api_key.get_secret_value()
        if key:
            headers["Authorization"] = f"Bearer {key}"
        self._client = client or httpx.Client(timeout=settings.llm_timeout_s, headers=headers)
        self.agree: Counter[str] = Counter()
        self.compared: Counter[str] = Counter()

    def close(self) -> None:
        self._client.close()

    def ask(self, record: SkillRecord) -> dict[str, Any]:
        prompt = (
            f"name: {record.name}\ndescription: {record.description}\n\n"
            f"{record.body[: self.settings.llm_max_body_chars]}\n\nfiles: "
            + ", ".join(f.path for f in record.files[:50])
        )
        payload = {
            "model": self.settings.llm_model,
            "messages": [{"role": "system", "content": SYSTEM_PROMPT}, {"role": "user", "content": prompt}],
            "temperature": 0,
            "max_tokens": self.settings.llm_max_tokens,
        }
        url = self.settings.llm_base_url.rstrip("/") + "/chat/completions"
        try:
            response = self._client.post(url, json=payload)
            response.raise_for_status()
            content = response.json()["choices"][0]["message"]["content"]
        except (httpx.HTTPError, KeyError, IndexError, TypeError, ValueError) as exc:
            raise LLMAnnotatorError(f"annotator call failed: {exc}", url=url) from exc
        return parse_verdict(str(content))

    def annotate(self, record: SkillRecord) -> bool:
        """Attach the model's verdict to ``record``; return False when it judged the description
        inconsistent with the body. A failed call is a diagnostic and changes nothing."""
        try:
            verdict = self.ask(record)
        except LLMAnnotatorError as exc:
            record.diagnostics.append(Diagnostic(code=exc.reason, message=str(exc), severity="warning"))
            return True
        rules = rule_view(record)
        agreement = {}
        for key in COMPARED:
            if isinstance(verdict.get(key), bool):
                agreement[key] = verdict[key] == rules[key]
                self.compared[key] += 1
                self.agree[key] += int(agreement[key])
        record.quality["llm"] = Annotation(
            value={"verdict": verdict, "agrees_with_rules": agreement},
            evidence=[Evidence(rule=f"llm.{self.settings.llm_model}", excerpt=str(verdict.get("rationale", ""))[:200])],
        )
        return verdict.get("description_consistent") is not False

    def agreement(self) -> dict[str, float]:
        return {key: round(self.agree[key] / self.compared[key], 4) for key in self.compared if self.compared[key]}
