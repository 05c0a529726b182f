"""The step channel's layout and messages, shared by the session client and the in-pod relay."""

from __future__ import annotations

import pytest
from pydantic import ValidationError
from skillgym_core.sandbox import steps


def test_keys_name_their_step_under_the_channel() -> None:
    assert steps.request_key("sandbox/runs/x/session/", 7) == "sandbox/runs/x/session/steps/000007/request.json"
    assert steps.reply_key("c", 12) == "c/steps/000012/reply.json"
    assert steps.stop_key("c/") == "c/stop"
    assert steps.step_of(steps.reply_key("c", 12)) == 12
    assert steps.step_of("c/stop") is None


def test_a_request_carries_its_stdin_as_base64_and_back() -> None:
    request = steps.StepRequest.make("cat > f", 5, b"\x00binary\xff")
    assert steps.StepRequest.model_validate(request.body()).stdin() == b"\x00binary\xff"
    assert steps.StepRequest.make("true", 1, None).stdin() is None


@pytest.mark.parametrize("body", [
    {"command": "true"},  # no timeout
    {"command": "true", "timeoutSeconds": 0},
    {"command": "true", "timeoutSeconds": 1, "extra": 1},
    {"command": 3, "timeoutSeconds": 1},
])  # fmt: skip
def test_malformed_requests_are_refused(body: dict[str, object]) -> None:
    with pytest.raises(ValidationError):
        steps.StepRequest.model_validate(body)


def test_replies_name_only_known_outcomes() -> None:
    assert steps.StepReply.model_validate({"outcome": "ok", "exitCode": 0}).exit_code == 0
    with pytest.raises(ValidationError):
        steps.StepReply.model_validate({"outcome": "maybe"})
