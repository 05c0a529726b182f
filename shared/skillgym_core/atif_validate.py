"""Conformance checks for ATIF trajectories (Harbor RFC 0001, versions 1.0 to 1.7).

Works on the raw JSON so it also judges documents our pydantic models would coerce: unknown keys,
types, required fields, sequential step ids, agent-only step fields, tool-call / observation id
matching, content parts, metric ranges, final-metric totals, and (v1.7) embedded subagent
trajectories and their references. Warnings flag inconsistencies the RFC does not forbid.

Command line: ``python -m skillgym_core.atif_validate FILE...`` (exit status 1 when any file fails)."""

from __future__ import annotations

import datetime as dt
import json
import re
import sys
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from skillgym_core.errors import ContractError

SUPPORTED_VERSIONS = tuple(f"ATIF-v1.{minor}" for minor in range(8))
_VERSION = re.compile(r"^ATIF-v1\.(\d+)$")
_ROOT = {"schema_version", "session_id", "trajectory_id", "agent", "steps", "notes", "final_metrics",
         "continued_trajectory_ref", "subagent_trajectories", "extra"}
_AGENT = {"name", "version", "model_name", "tool_definitions", "extra"}
_STEP = {"step_id", "timestamp", "source", "message", "model_name", "reasoning_effort", "reasoning_content",
         "tool_calls", "observation", "metrics", "is_copied_context", "llm_call_count", "extra"}
_AGENT_ONLY = ("model_name", "reasoning_effort", "reasoning_content", "tool_calls", "metrics")
_TOOL_CALL = {"tool_call_id", "function_name", "arguments", "extra"}
_RESULT = {"source_call_id", "content", "subagent_trajectory_ref", "extra"}
_REF = {"trajectory_id", "trajectory_path", "session_id", "extra"}
_METRICS = {"prompt_tokens", "completion_tokens", "cached_tokens", "cost_usd", "prompt_token_ids",
            "completion_token_ids", "logprobs", "extra"}
_FINAL = {"total_prompt_tokens", "total_completion_tokens", "total_cached_tokens", "total_cost_usd",
          "total_steps", "extra"}
_IMAGE_TYPES = {"image/jpeg", "image/png", "image/gif", "image/webp"}


class ATIFValidationError(ContractError):
    reason = "atif_invalid"


@dataclass(frozen=True)
class Issue:
    path: str
    message: str
    severity: Literal["error", "warning"] = "error"

    def __str__(self) -> str:
        return f"{self.severity}: {self.path}: {self.message}"


@dataclass
class ValidationReport:
    issues: list[Issue] = field(default_factory=list)

    @property
    def errors(self) -> list[Issue]:
        return [issue for issue in self.issues if issue.severity == "error"]

    @property
    def warnings(self) -> list[Issue]:
        return [issue for issue in self.issues if issue.severity == "warning"]

    @property
    def valid(self) -> bool:
        return not self.errors

    def raise_for_errors(self, origin: str = "trajectory") -> None:
        if self.errors:
            raise ATIFValidationError(
                f"{origin}: not a conforming ATIF trajectory ({len(self.errors)} error(s); first: {self.errors[0]})",
                issues=[str(issue) for issue in self.errors],
            )


class _Checker:
    def __init__(self) -> None:
        self.issues: list[Issue] = []
        self.minor = 7

    def error(self, path: str, message: str) -> None:
        self.issues.append(Issue(path, message, "error"))

    def warn(self, path: str, message: str) -> None:
        self.issues.append(Issue(path, message, "warning"))

    def keys(self, obj: dict[str, Any], allowed: set[str], path: str) -> None:
        for key in sorted(set(obj) - allowed):
            self.error(f"{path}.{key}", "unknown field (ATIF objects forbid extra keys; use 'extra')")

    def typed(self, obj: dict[str, Any], key: str, types: tuple[type, ...], path: str, *, required: bool = False,
              minimum: float | None = None) -> Any:
        if key not in obj or obj[key] is None:
            if required:
                self.error(f"{path}.{key}", "required field is missing")
            return None
        value = obj[key]
        if isinstance(value, bool) and bool not in types:
            self.error(f"{path}.{key}", f"expected {'/'.join(t.__name__ for t in types)}, got bool")
            return None
        if not isinstance(value, types):
            self.error(f"{path}.{key}", f"expected {'/'.join(t.__name__ for t in types)}, got {type(value).__name__}")
            return None
        if minimum is not None and isinstance(value, int | float) and value < minimum:
            self.error(f"{path}.{key}", f"must be >= {minimum}, got {value}")
        return value

    def extra(self, obj: dict[str, Any], path: str) -> None:
        self.typed(obj, "extra", (dict,), path)

    def trajectory(self, doc: Any, path: str = "$", *, embedded: bool = False) -> None:
        if not isinstance(doc, dict):
            self.error(path, "a trajectory must be a JSON object")
            return
        self.keys(doc, _ROOT, path)
        version = self.typed(doc, "schema_version", (str,), path, required=True)
        if version is not None:
            match = _VERSION.match(version)
            if not match or version not in SUPPORTED_VERSIONS:
                self.error(f"{path}.schema_version", f"unsupported version {version!r} (expected ATIF-v1.0..1.7)")
            else:
                self.minor = int(match.group(1))
        self.typed(doc, "session_id", (str,), path, required=self.minor < 7 and not embedded)
        trajectory_id = self.typed(doc, "trajectory_id", (str,), path, required=embedded)
        if trajectory_id is not None and self.minor < 7:
            self.warn(f"{path}.trajectory_id", "trajectory_id was added in ATIF-v1.7")
        self.agent(doc.get("agent"), f"{path}.agent")
        self.typed(doc, "notes", (str,), path)
        self.typed(doc, "continued_trajectory_ref", (str,), path)
        self.extra(doc, path)
        embedded_ids = self.subagents(doc.get("subagent_trajectories"), f"{path}.subagent_trajectories")
        steps = doc.get("steps")
        if not isinstance(steps, list) or not steps:
            self.error(f"{path}.steps", "must be a non-empty list of steps")
            steps = []
        call_ids: set[str] = set()
        for index, step in enumerate(steps):
            self.step(step, index, f"{path}.steps[{index}]", call_ids, embedded_ids)
        self.final(doc.get("final_metrics"), steps, f"{path}.final_metrics")

    def agent(self, agent: Any, path: str) -> None:
        if not isinstance(agent, dict):
            self.error(path, "required object is missing")
            return
        self.keys(agent, _AGENT, path)
        self.typed(agent, "name", (str,), path, required=True)
        self.typed(agent, "version", (str,), path, required=True)
        self.typed(agent, "model_name", (str,), path)
        self.extra(agent, path)
        tools = self.typed(agent, "tool_definitions", (list,), path) or []
        for index, tool in enumerate(tools):
            function = tool.get("function") if isinstance(tool, dict) else None
            if not isinstance(function, dict) or not isinstance(function.get("name"), str):
                self.error(f"{path}.tool_definitions[{index}]", "expected an OpenAI function schema with function.name")

    def subagents(self, value: Any, path: str) -> set[str]:
        if value is None:
            return set()
        if not isinstance(value, list):
            self.error(path, "expected a list of trajectories")
            return set()
        if self.minor < 7:
            self.error(path, "subagent_trajectories requires ATIF-v1.7")
        ids: set[str] = set()
        outer_minor = self.minor
        for index, sub in enumerate(value):
            self.trajectory(sub, f"{path}[{index}]", embedded=True)
            self.minor = outer_minor
            sub_id = sub.get("trajectory_id") if isinstance(sub, dict) else None
            if isinstance(sub_id, str):
                if sub_id in ids:
                    self.error(f"{path}[{index}].trajectory_id", f"duplicate embedded trajectory_id {sub_id!r}")
                ids.add(sub_id)
        return ids

    def content(self, value: Any, path: str, *, allow_none: bool) -> None:
        if value is None:
            if not allow_none:
                self.error(path, "required field is missing")
            return
        if isinstance(value, str):
            return
        if not isinstance(value, list):
            self.error(path, "expected a string or a list of content parts")
            return
        if self.minor < 6:
            self.error(path, "content parts require ATIF-v1.6")
        for index, part in enumerate(value):
            part_path = f"{path}[{index}]"
            if not isinstance(part, dict):
                self.error(part_path, "a content part must be an object")
            elif part.get("type") == "text":
                self.keys(part, {"type", "text"}, part_path)
                self.typed(part, "text", (str,), part_path, required=True)
            elif part.get("type") == "image":
                self.keys(part, {"type", "source"}, part_path)
                source = part.get("source")
                if not isinstance(source, dict) or not isinstance(source.get("path"), str):
                    self.error(f"{part_path}.source", "an image needs source.media_type and source.path")
                elif source.get("media_type") not in _IMAGE_TYPES:
                    self.error(f"{part_path}.source.media_type", f"unsupported media type {source.get('media_type')!r}")
            else:
                self.error(f"{part_path}.type", f"unknown content part type {part.get('type')!r}")

    def step(self, step: Any, index: int, path: str, call_ids: set[str], embedded_ids: set[str]) -> None:
        if not isinstance(step, dict):
            self.error(path, "a step must be an object")
            return
        self.keys(step, _STEP, path)
        step_id = self.typed(step, "step_id", (int,), path, required=True)
        if step_id is not None and step_id != index + 1:
            self.error(f"{path}.step_id", f"step ids must be sequential from 1: expected {index + 1}, got {step_id}")
        stamp = self.typed(step, "timestamp", (str,), path)
        if stamp is not None:
            try:
                dt.datetime.fromisoformat(stamp)
            except ValueError:
                self.error(f"{path}.timestamp", f"not an ISO 8601 timestamp: {stamp!r}")
        source = self.typed(step, "source", (str,), path, required=True)
        if source is not None and source not in ("system", "user", "agent"):
            self.error(f"{path}.source", f"must be system, user or agent; got {source!r}")
        if "message" not in step:
            self.error(f"{path}.message", "required field is missing")
        else:
            self.content(step["message"], f"{path}.message", allow_none=False)
        if source in ("system", "user"):
            for name in _AGENT_ONLY:
                if step.get(name) is not None:
                    self.error(f"{path}.{name}", f"only allowed on agent steps (this step's source is {source})")
        self.typed(step, "model_name", (str,), path)
        self.typed(step, "reasoning_effort", (str, int, float), path)
        self.typed(step, "reasoning_content", (str,), path)
        self.typed(step, "is_copied_context", (bool,), path)
        self.typed(step, "llm_call_count", (int,), path, minimum=0)
        self.extra(step, path)
        step_calls = self.tool_calls(step.get("tool_calls"), f"{path}.tool_calls", call_ids)
        self.observation(step.get("observation"), f"{path}.observation", step_calls, embedded_ids)
        self.metrics(step.get("metrics"), f"{path}.metrics")

    def tool_calls(self, value: Any, path: str, call_ids: set[str]) -> set[str]:
        if value is None:
            return set()
        if not isinstance(value, list):
            self.error(path, "expected a list of tool calls")
            return set()
        ids: set[str] = set()
        for index, call in enumerate(value):
            call_path = f"{path}[{index}]"
            if not isinstance(call, dict):
                self.error(call_path, "a tool call must be an object")
                continue
            self.keys(call, _TOOL_CALL, call_path)
            call_id = self.typed(call, "tool_call_id", (str,), call_path, required=True)
            self.typed(call, "function_name", (str,), call_path, required=True)
            self.typed(call, "arguments", (dict,), call_path, required=True)
            self.extra(call, call_path)
            if call_id is None:
                continue
            if call_id in ids:
                self.error(f"{call_path}.tool_call_id", f"duplicate tool_call_id {call_id!r} in one step")
            elif call_id in call_ids:
                self.warn(f"{call_path}.tool_call_id", f"tool_call_id {call_id!r} was already used by an earlier step")
            ids.add(call_id)
            call_ids.add(call_id)
        return ids

    def observation(self, value: Any, path: str, step_calls: set[str], embedded_ids: set[str]) -> None:
        if value is None:
            return
        if not isinstance(value, dict):
            self.error(path, "expected an object")
            return
        self.keys(value, {"results"}, path)
        results = value.get("results")
        if not isinstance(results, list):
            self.error(f"{path}.results", "required list is missing")
            return
        answered: set[str] = set()
        for index, result in enumerate(results):
            result_path = f"{path}.results[{index}]"
            if not isinstance(result, dict):
                self.error(result_path, "a result must be an object")
                continue
            self.keys(result, _RESULT, result_path)
            source_id = self.typed(result, "source_call_id", (str,), result_path)
            if source_id is not None:
                if source_id not in step_calls:
                    self.error(f"{result_path}.source_call_id",
                               f"{source_id!r} matches no tool_call_id of this step")
                answered.add(source_id)
            self.content(result.get("content"), f"{result_path}.content", allow_none=True)
            self.extra(result, result_path)
            refs = self.typed(result, "subagent_trajectory_ref", (list,), result_path) or []
            for ref_index, ref in enumerate(refs):
                self.ref(ref, f"{result_path}.subagent_trajectory_ref[{ref_index}]", embedded_ids)
        for missing in sorted(step_calls - answered):
            self.warn(path, f"tool call {missing!r} has no observation result")

    def ref(self, ref: Any, path: str, embedded_ids: set[str]) -> None:
        if not isinstance(ref, dict):
            self.error(path, "a subagent reference must be an object")
            return
        self.keys(ref, _REF, path)
        trajectory_id = self.typed(ref, "trajectory_id", (str,), path)
        trajectory_path = self.typed(ref, "trajectory_path", (str,), path)
        self.typed(ref, "session_id", (str,), path, required=self.minor < 7)
        self.extra(ref, path)
        if self.minor >= 7 and trajectory_id is None and trajectory_path is None:
            self.error(path, "a v1.7 reference must set trajectory_id or trajectory_path")
        if trajectory_id is not None and trajectory_path is None and trajectory_id not in embedded_ids:
            self.error(f"{path}.trajectory_id", f"{trajectory_id!r} matches no embedded subagent trajectory")

    def metrics(self, value: Any, path: str) -> None:
        if value is None:
            return
        if not isinstance(value, dict):
            self.error(path, "expected an object")
            return
        self.keys(value, _METRICS, path)
        prompt = self.typed(value, "prompt_tokens", (int,), path, minimum=0)
        self.typed(value, "completion_tokens", (int,), path, minimum=0)
        cached = self.typed(value, "cached_tokens", (int,), path, minimum=0)
        self.typed(value, "cost_usd", (int, float), path, minimum=0)
        self.extra(value, path)
        for key in ("prompt_token_ids", "completion_token_ids"):
            ids = self.typed(value, key, (list,), path)
            if ids is not None and not all(isinstance(x, int) and not isinstance(x, bool) for x in ids):
                self.error(f"{path}.{key}", "must be a list of integers")
        logprobs = self.typed(value, "logprobs", (list,), path)
        if logprobs is not None and not all(isinstance(x, int | float) and not isinstance(x, bool) for x in logprobs):
            self.error(f"{path}.logprobs", "must be a list of numbers")
        completion_ids = value.get("completion_token_ids")
        if isinstance(logprobs, list) and isinstance(completion_ids, list) and len(logprobs) != len(completion_ids):
            self.warn(f"{path}.logprobs", "length differs from completion_token_ids")
        if isinstance(prompt, int) and isinstance(cached, int) and cached > prompt:
            self.error(f"{path}.cached_tokens", f"cached_tokens ({cached}) exceed prompt_tokens ({prompt}), "
                                                "which include them")

    def final(self, value: Any, steps: list[Any], path: str) -> None:
        if value is None:
            return
        if not isinstance(value, dict):
            self.error(path, "expected an object")
            return
        self.keys(value, _FINAL, path)
        for key in ("total_prompt_tokens", "total_completion_tokens", "total_cached_tokens", "total_steps"):
            self.typed(value, key, (int,), path, minimum=0)
        self.typed(value, "total_cost_usd", (int, float), path, minimum=0)
        self.extra(value, path)
        total_steps = value.get("total_steps")
        if isinstance(total_steps, int) and not isinstance(total_steps, bool) and total_steps != len(steps):
            self.warn(f"{path}.total_steps", f"is {total_steps} but the trajectory has {len(steps)} steps")
        for total_key, step_key in (("total_prompt_tokens", "prompt_tokens"),
                                    ("total_completion_tokens", "completion_tokens")):
            total = value.get(total_key)
            parts = [s["metrics"].get(step_key) for s in steps
                     if isinstance(s, dict) and isinstance(s.get("metrics"), dict)]
            numbers = [p for p in parts if isinstance(p, int) and not isinstance(p, bool)]
            if isinstance(total, int) and numbers and len(numbers) == len(parts) and sum(numbers) != total:
                self.warn(f"{path}.{total_key}", f"is {total} but the steps' {step_key} sum to {sum(numbers)}")


def load(source: str | bytes | Path | dict[str, Any] | Any) -> Any:
    """A raw ATIF document from a path, JSON text/bytes, a dict or a pydantic model."""
    if isinstance(source, Path):
        return json.loads(source.read_text())
    if isinstance(source, str | bytes):
        return json.loads(source)
    if hasattr(source, "model_dump"):
        return source.model_dump(mode="json", exclude_none=True)
    return source


def validate_trajectory(source: str | bytes | Path | dict[str, Any] | Any) -> ValidationReport:
    try:
        doc = load(source)
    except (OSError, json.JSONDecodeError) as exc:
        return ValidationReport([Issue("$", f"cannot read JSON: {exc}")])
    checker = _Checker()
    checker.trajectory(doc)
    return ValidationReport(checker.issues)


def main(argv: Iterable[str] | None = None) -> int:
    paths = list(argv if argv is not None else sys.argv[1:])
    if not paths:
        print("usage: python -m skillgym_core.atif_validate FILE...", file=sys.stderr)
        return 2
    failed = 0
    for name in paths:
        report = validate_trajectory(Path(name))
        status = "ok" if report.valid else "INVALID"
        print(f"{name}: {status} ({len(report.errors)} errors, {len(report.warnings)} warnings)")
        for issue in report.issues:
            print(f"  {issue}")
        failed += not report.valid
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
