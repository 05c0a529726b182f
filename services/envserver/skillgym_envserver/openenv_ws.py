"""OpenEnv's WebSocket protocol over the same episodes, so a client written for OpenEnv
environments (``GenericEnvClient(base_url="http://HOST:PORT/openenv")``) rolls out SkillGym
tasks unchanged. One connection is one session: ``reset`` (data: ``task_id`` or a sample spec,
``skill_provided``, ``reward``, ``policy``) opens an episode, ending the session's unfinished
one; ``step`` takes ``{"tool", "arguments"}``, or ``{"finish": true}`` to be verified, which
answers the reward with ``done``; ``state`` describes the episode; closing the connection
discards an unfinished episode."""

from __future__ import annotations

import json
import secrets
from typing import Any

from fastapi import WebSocket, WebSocketDisconnect
from pydantic import ValidationError
from skillgym_core.errors import SkillGymError
from skillgym_core.rlenv.api import SampleSpec, StartEpisode, StepRequest
from starlette.concurrency import run_in_threadpool

from skillgym_envserver.episodes import EpisodeManager

SAMPLE_FIELDS = ("family", "category", "difficulty", "seed")


class _Refused(Exception):
    def __init__(self, message: str, code: str) -> None:
        super().__init__(message)
        self.code = code


def _observation(observation: dict[str, Any], reward: float | None, done: bool) -> dict[str, Any]:
    return {"type": "observation", "data": {"observation": observation, "reward": reward, "done": done}}


def _error(message: str, code: str, **extra: Any) -> dict[str, Any]:
    return {"type": "error", "data": {"message": message, "code": code, **extra}}


class OpenEnvSession:
    def __init__(self, manager: EpisodeManager) -> None:
        self.manager = manager
        self.episode_id: str | None = None
        self.done = False

    async def handle(self, kind: str, data: dict[str, Any]) -> dict[str, Any]:
        if kind == "reset":
            return await self._reset(data)
        if self.episode_id is None:
            raise _Refused("reset the environment first", "NO_EPISODE")
        if kind == "step":
            if data.get("finish") is True:
                result = await run_in_threadpool(self.manager.finish, self.episode_id)
                self.done = result.done
                data = {"output": f"verified: {'passed' if result.passed else 'not passed'}", "passed": result.passed,
                        "components": result.components, "trajectory_id": result.trajectory_id}
                if not result.done:  # a multi-step task goes on with its next step
                    data.update(instruction=result.next_instruction, task_step=result.next_step)
                return _observation(data, result.reward, result.done)
            request = StepRequest(tool=str(data.get("tool", "")), arguments=data.get("arguments", {}))
            step = await run_in_threadpool(self.manager.step, self.episode_id, request)
            return _observation({"output": step.observation, "exit_code": step.exit_code, "malformed": step.malformed,
                                 "steps_left": step.steps_left}, None, False)
        if kind == "state":
            state = (await run_in_threadpool(self.manager.state, self.episode_id)).state()
            return {"type": "state", "data": {**state.model_dump(mode="json"), "step_count": state.steps}}
        raise _Refused(f"unknown message type {kind!r}", "UNKNOWN_TYPE")

    async def _reset(self, data: dict[str, Any]) -> dict[str, Any]:
        await self.abandon()
        sample = {k: data[k] for k in SAMPLE_FIELDS if k in data}
        request = StartEpisode(
            task_id=data.get("task_id"), sample=SampleSpec(**sample) if sample and not data.get("task_id") else None,
            skill_provided=data.get("skill_provided", True), reward=data.get("reward", "binary"),
            policy=data.get("policy", "unnamed-policy"),
        )  # fmt: skip
        started = await run_in_threadpool(self.manager.start, request)
        self.episode_id, self.done = started.episode_id, False
        return _observation({"output": "", "instruction": started.instruction, "tools": started.tools,
                             "episode_id": started.episode_id, "task_id": started.task_id,
                             "max_steps": started.limits.max_steps}, None, False)

    async def abandon(self) -> None:
        if self.episode_id is not None and not self.done:
            await run_in_threadpool(self.manager.delete, self.episode_id)
        self.episode_id = None


async def serve_session(websocket: WebSocket, manager: EpisodeManager, token: str) -> None:
    supplied = websocket.headers.get("authorization", "").removeprefix("Bearer ").strip()
    if token and not secrets.compare_digest(supplied, token):
        await websocket.close(code=1008, reason="a valid bearer token is required")
        return
    await websocket.accept()
    session = OpenEnvSession(manager)
    try:
        while True:
            raw = await websocket.receive_text()
            try:
                message = json.loads(raw)
                if not isinstance(message, dict):
                    raise _Refused("a message is a JSON object", "INVALID_JSON")
                if message.get("type") == "close":
                    break
                reply = await session.handle(str(message.get("type", "")), message.get("data") or {})
            except json.JSONDecodeError as exc:
                reply = _error(f"Invalid JSON: {exc}", "INVALID_JSON")
            except _Refused as exc:
                reply = _error(str(exc), exc.code)
            except ValidationError as exc:
                reply = _error("Invalid message", "VALIDATION_ERROR", errors=json.loads(exc.json()))
            except SkillGymError as exc:
                reply = _error(str(exc), exc.reason.upper())
            await websocket.send_text(json.dumps(reply))
    except WebSocketDisconnect:
        pass
    finally:
        await session.abandon()
