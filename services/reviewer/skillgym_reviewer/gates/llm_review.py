"""Gate: an LLM reviews the task against its blueprint, for what execution cannot show:
difficulty that does not match the blueprint, weak dependence on the skill, subtle leaks, and
verifiers that test things the instruction never promised."""

from __future__ import annotations

import json
from typing import Any

from skillgym_core.contracts.task import TaskDir
from skillgym_core.errors import MalformedModelOutput
from skillgym_core.llm import LLMClient

from skillgym_reviewer.gates.validity import Evidence
from skillgym_reviewer.report import FAILURE_TYPES, GateResult

PROMPT = """You review an executable practice task built from an agent skill. Judge it against
its blueprint. Reject when: the task is much easier or harder than the blueprint's challenge
(difficulty_mismatch); it can be solved without the skill's content (weak_skill_dependence);
answers can be read off the instruction, workspace or skill (leakage); the verifier accepts
wrong answers (too_lax) or rejects valid ones (too_strict).
Answer with one JSON object only: {"verdict": "approve" | "reject", "failure_type": one of the
types above or null, "reasons": [short strings]}."""

MAX_FILE_CHARS = 4000


def _files(task: TaskDir, part: str) -> dict[str, str]:
    base = task.root / part
    if not base.is_dir():
        return {}
    return {
        p.relative_to(task.root).as_posix(): p.read_text(errors="replace")[:MAX_FILE_CHARS]
        for p in sorted(base.rglob("*"))
        if p.is_file() and p.stat().st_size < 256 * 1024
    }


def parse_verdict(text: str) -> dict[str, Any]:
    start, end = text.find("{"), text.rfind("}")
    if start < 0 or end < start:
        raise MalformedModelOutput("reviewer model gave no JSON verdict", reason="llm_review_malformed", text=text[:300])
    try:
        verdict = json.loads(text[start : end + 1])
    except json.JSONDecodeError as exc:
        raise MalformedModelOutput("reviewer model's verdict is not JSON", reason="llm_review_malformed") from exc
    if not isinstance(verdict, dict) or verdict.get("verdict") not in ("approve", "reject"):
        raise MalformedModelOutput("reviewer model's verdict lacks approve/reject", reason="llm_review_malformed")
    return verdict


class LLMReviewGate:
    def __init__(self, client: LLMClient) -> None:
        self.client = client

    def __call__(self, task: TaskDir, evidence: Evidence, gates: list[GateResult]) -> GateResult | None:
        if any(not gate.passed for gate in gates):
            return None  # execution already found a defect; spare the call
        meta = task.config().metadata
        context = {
            "blueprint": meta.blueprint,
            "difficulty_patterns": meta.difficulty_patterns,
            "instruction": task.instruction(),
            "workspace": _files(task, "environment/workspace"),
            "skill": _files(task, "environment/skills"),
            "tests": _files(task, "tests"),
            "solution": _files(task, "solution"),
            "execution": {"initial_reward": evidence.initial.reward, "solved_reward": evidence.solved.reward,
                          "outputs": sorted(evidence.outputs())},
        }
        response = self.client.chat(
            [{"role": "system", "content": PROMPT}, {"role": "user", "content": json.dumps(context, indent=1)}],
            response_format={"type": "json_object"},
        )
        verdict = parse_verdict(response.content)
        reasons = [str(r) for r in verdict.get("reasons") or []][:10]
        if verdict["verdict"] == "approve":
            return GateResult.ok("llm_review", reasons=reasons, usage=response.usage.to_dict())
        failure = verdict.get("failure_type")
        if failure not in FAILURE_TYPES:
            failure = "difficulty_mismatch"
        return GateResult.fail("llm_review", failure, reasons or ["rejected by the reviewer model"])  # type: ignore[arg-type]
