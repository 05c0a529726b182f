"""The built-in tool-calling agent: an OpenAI-compatible model with one bash-like tool, every
command executed in the task sandbox, recorded turn by turn as ATIF."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from skillgym_core.contracts.atif import Metrics, ObservationResult, ToolCall
from skillgym_core.llm import ChatResponse, LLMClient, LLMError, LLMSettings

from skillgym_sampler.harness.base import AgentEnv, AgentRun, RunSpec, format_observation
from skillgym_sampler.harness.prompts import DEFAULT_VARIANTS, PromptVariant, describe_skills
from skillgym_sampler.recorder import TrajectoryRecorder


def _step_extra(response: ChatResponse) -> dict[str, Any] | None:
    """The finish reason, and where the calls were read from when the server wrote them as text."""
    extra: dict[str, Any] = {}
    if response.finish_reason:
        extra["finish_reason"] = response.finish_reason
    if response.tool_call_format not in (None, "native"):
        extra["tool_call_format"] = response.tool_call_format
    return extra or None


class BuiltinAgentHarness:
    name = "builtin"
    version = "1.0"

    def __init__(
        self,
        llm: LLMSettings,
        *,
        variants: dict[str, PromptVariant] | None = None,
        max_steps: int = 40,
        max_seconds: float = 900.0,
        max_total_tokens: int = 400_000,
        observation_max_chars: int = 10_000,
        client_factory: Callable[[LLMSettings], LLMClient] = LLMClient,
    ) -> None:
        self.llm = llm
        self.variants = {**DEFAULT_VARIANTS, **(variants or {})}
        self.max_steps = max_steps
        self.max_seconds = max_seconds
        self.max_total_tokens = max_total_tokens
        self.observation_max_chars = observation_max_chars
        self.client_factory = client_factory

    def variant(self, name: str) -> PromptVariant:
        return self.variants.get(name, self.variants["default"])

    def run(self, env: AgentEnv, spec: RunSpec) -> AgentRun:
        variant = self.variant(spec.prompt_variant)
        tool = variant.tool_definition()
        system = variant.render_system(
            workdir=env.workdir, skills_root=env.skills_mount, skills=describe_skills(env.skills_dir)
        )
        instruction = env.instruction
        recorder = TrajectoryRecorder(
            session_id=spec.trajectory_id,
            trajectory_id=spec.trajectory_id,
            agent_name=self.name,
            agent_version=self.version,
            model_name=self.llm.model,
            tool_definitions=[tool],
            extra={"prompt_variant": spec.prompt_variant, "skill_provided": env.skills_dir is not None},
        )
        recorder.system(system)
        recorder.user(instruction)
        messages: list[dict[str, Any]] = [
            {"role": "system", "content": system},
            {"role": "user", "content": instruction},
        ]
        client = self.client_factory(self.llm)
        started = time.perf_counter()
        outcome, error = "step_limit", None
        seen: set[str] = set()
        try:
            for _ in range(self.max_steps):
                if time.perf_counter() - started > self.max_seconds:
                    outcome = "time_limit"
                    break
                used = client.usage.prompt_tokens + client.usage.completion_tokens
                if used >= self.max_total_tokens:
                    outcome = "token_limit"
                    break
                response = client.chat(messages, tools=[tool])
                calls: list[ToolCall] = []
                results: list[ObservationResult] = []
                tool_messages: list[dict[str, Any]] = []
                for request in response.tool_calls:
                    # ids must be unique in the record; some endpoints reuse them across turns
                    call_id = request.id if request.id not in seen else f"{request.id}#{len(seen)}"
                    seen.add(call_id)
                    content = self._execute(env, variant, request.name, request.arguments)
                    calls.append(ToolCall(
                        tool_call_id=call_id,
                        function_name=request.name,
                        arguments=request.arguments,
                        extra={"endpoint_call_id": request.id} if call_id != request.id else None,
                    ))
                    results.append(ObservationResult(source_call_id=call_id, content=content))
                    tool_messages.append({"role": "tool", "tool_call_id": request.id, "content": content})
                usage, tokens = response.usage, response.tokens
                recorder.agent_step(
                    response.content,
                    tool_calls=calls,
                    results=results,
                    reasoning=response.reasoning,
                    metrics=Metrics(
                        prompt_tokens=usage.prompt_tokens,
                        completion_tokens=usage.completion_tokens,
                        cached_tokens=usage.cached_tokens,
                        cost_usd=usage.cost_usd,
                        prompt_token_ids=tokens.prompt_token_ids if tokens else None,
                        completion_token_ids=tokens.completion_token_ids if tokens else None,
                        logprobs=tokens.logprobs if tokens else None,
                    ),
                    model_name=self.llm.model,
                    extra=_step_extra(response),
                )
                messages.append(response.assistant_message())
                messages.extend(tool_messages)
                if not response.tool_calls:
                    outcome = "ok"
                    break
        except LLMError as exc:
            outcome, error = "llm_error", f"{exc.reason}: {exc}"
            recorder.note(f"model endpoint failed: {error}")
        finally:
            client.close()
        if outcome not in ("ok", "llm_error"):
            recorder.note(f"run stopped: {outcome}")
        return AgentRun(
            recorder.build(final_extra={"agent_seconds": round(time.perf_counter() - started, 4),
                                        "stop_reason": outcome}),
            outcome=outcome,
            error=error,
        )

    def _execute(self, env: AgentEnv, variant: PromptVariant, name: str, arguments: dict[str, Any]) -> str:
        if name != variant.tool_name:
            return f"error: unknown tool {name!r}; the only tool is {variant.tool_name!r}"
        command = arguments.get(variant.argument_name)
        if not isinstance(command, str) or not command.strip():
            return f"error: argument {variant.argument_name!r} must be a non-empty string"
        return format_observation(env.bash(command), self.observation_max_chars)
