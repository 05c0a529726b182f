"""A synchronous HTTP client for the episode API. Back-pressure (429) is waited out as the
server's ``Retry-After`` asks, up to a deadline; every other failure is an ``EnvServerError``
with the status and the server's reason."""

from __future__ import annotations

import time
from typing import Any

import httpx

from skillgym_core.errors import SkillGymError
from skillgym_core.rlenv.api import (
    EpisodeStarted,
    EpisodeState,
    FinishResult,
    StartEpisode,
    StepRequest,
    StepResult,
)


class EnvServerError(SkillGymError):
    """The environment server refused or failed a request."""

    def __init__(self, message: str, *, status: int | None = None, detail: Any = None) -> None:
        reason = "env_server_busy" if status == 429 else "env_server_error"
        super().__init__(message, reason=reason, status=status, detail=detail)
        self.status = status
        self.detail = detail
        self.retryable = status is None or status in (429, 502, 503, 504)


class EnvClient:
    def __init__(self, base_url: str, *, timeout_s: float = 600.0, busy_wait_s: float = 120.0,
                 token: str | None = None) -> None:
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        self._http = httpx.Client(base_url=base_url.rstrip("/"), timeout=timeout_s, headers=headers)
        self.busy_wait_s = busy_wait_s

    def close(self) -> None:
        self._http.close()

    def __enter__(self) -> EnvClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def start(self, request: StartEpisode | None = None, **fields: Any) -> EpisodeStarted:
        body = (request or StartEpisode(**fields)).model_dump(mode="json", exclude_none=True)
        return EpisodeStarted.model_validate(self._call("POST", "/v1/episodes", json=body))

    def step(self, episode_id: str, tool: str, arguments: dict[str, Any] | str) -> StepResult:
        body = StepRequest(tool=tool, arguments=arguments).model_dump(mode="json")
        return StepResult.model_validate(self._call("POST", f"/v1/episodes/{episode_id}/step", json=body))

    def finish(self, episode_id: str) -> FinishResult:
        return FinishResult.model_validate(self._call("POST", f"/v1/episodes/{episode_id}/finish"))

    def state(self, episode_id: str) -> EpisodeState:
        return EpisodeState.model_validate(self._call("GET", f"/v1/episodes/{episode_id}"))

    def delete(self, episode_id: str) -> None:
        self._call("DELETE", f"/v1/episodes/{episode_id}")

    def _call(self, method: str, path: str, **kwargs: Any) -> Any:
        deadline = time.monotonic() + self.busy_wait_s
        while True:
            try:
                response = self._http.request(method, path, **kwargs)
            except httpx.HTTPError as exc:
                raise EnvServerError(f"{method} {path}: {exc}") from exc
            if response.status_code == 429 and time.monotonic() < deadline:
                time.sleep(min(_retry_after(response), max(0.0, deadline - time.monotonic())))
                continue
            if response.status_code >= 400:
                detail = _detail(response)
                raise EnvServerError(f"{method} {path}: HTTP {response.status_code}: {detail}",
                                     status=response.status_code, detail=detail)
            return response.json() if response.content else None


def _retry_after(response: httpx.Response) -> float:
    try:
        return max(0.05, float(response.headers.get("Retry-After", "1")))
    except ValueError:
        return 1.0


def _detail(response: httpx.Response) -> Any:
    try:
        return response.json().get("detail")
    except ValueError:
        return response.text[:500]
