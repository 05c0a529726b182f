"""Skill-dependence labels and McNemar's exact test, with a scripted baseline agent talking to a
real OpenAI-compatible HTTP server and acting in the real sandbox."""

from __future__ import annotations

import json
import math
import socket
from collections.abc import Iterator
from pathlib import Path

import pytest
from skillgym_core.archive import pack_dir
from skillgym_core.context import ServiceContext
from skillgym_core.contracts.events import Envelope, EnvReviewed, EnvValidated
from skillgym_core.contracts.topics import ENV_REVIEWED
from skillgym_core.keys import task_validation
from skillgym_core.sandbox.local import LocalSandbox
from skillgym_core.store.base import get_json
from skillgym_core.store.local import LocalStore
from skillgym_validator.contrast import LabelRule, binomial_two_sided_p, mcnemar_exact
from skillgym_validator.service import ValidatorService
from skillgym_validator.settings import ValidatorSettings
from skillgym_validator.validation import summarize, validate_task_dirs

from tests.support.scripted_llm import ScriptedLLMServer, Sequence, bash
from tests.validator.tasks import make_task

# The scripted agent reads OFFSET from any mounted skill (0 when there is none) and writes
# a + b + OFFSET: whether it passes depends only on the task and on the skill being mounted.
AGENT_COMMAND = (
    "off=$(cat /skills/*/SKILL.md 2>/dev/null | grep -o 'OFFSET=-\\?[0-9]*' | head -1 | cut -d= -f2);"
    " read a b < input.txt; echo $((a + b + ${off:-0})) > answer.txt"
)


# -- pure logic -------------------------------------------------------------------------


def _float_tail_p(low: int, n: int) -> float:
    """Independent check: the same tail summed in log space."""
    logs = [math.lgamma(n + 1) - math.lgamma(i + 1) - math.lgamma(n - i + 1) - n * math.log(2) for i in range(low + 1)]
    return min(1.0, 2 * sum(math.exp(x) for x in logs))


def test_exact_binomial_known_values() -> None:
    assert binomial_two_sided_p(0, 5) == pytest.approx(0.0625)
    assert binomial_two_sided_p(1, 10) == pytest.approx(22 / 1024)
    assert binomial_two_sided_p(9, 10) == pytest.approx(22 / 1024)
    assert binomial_two_sided_p(5, 10) == 1.0
    assert binomial_two_sided_p(0, 0) == 1.0
    assert binomial_two_sided_p(19, 71) == pytest.approx(_float_tail_p(19, 71), rel=1e-9)


def test_mcnemar_on_the_published_counts() -> None:
    pairs = [(True, False)] * 52 + [(False, True)] * 19 + [(True, True)] * 30 + [(False, False)] * 9
    result = mcnemar_exact(pairs)
    assert (result.only_with, result.only_without, result.both, result.neither) == (52, 19, 30, 9)
    assert 5e-5 < result.p_value < 2e-4


@pytest.mark.parametrize(
    ("rule", "r_plus", "r_minus", "label"),
    [
        (LabelRule(), 1.0, 0.0, "skill-dep"),
        (LabelRule(), 1.0, 0.34, "verifier-passed"),
        (LabelRule(), 0.67, 0.0, "verifier-passed"),
        (LabelRule(min_with=0.6, max_without=0.4), 0.67, 0.34, "skill-dep"),
        (LabelRule(min_with=0.6, max_without=0.4), 0.5, 0.0, "verifier-passed"),
    ],
)
def test_label_rule(rule: LabelRule, r_plus: float, r_minus: float, label: str) -> None:
    assert rule.label(r_plus, r_minus) == label


# -- a scripted baseline over real tasks -------------------------------------------------


@pytest.fixture
def llm() -> Iterator[ScriptedLLMServer]:
    with ScriptedLLMServer(Sequence([bash(AGENT_COMMAND)], final="Wrote the answer.")) as server:
        yield server


def _tasks(root: Path) -> dict[str, Path]:
    """name -> task dir, with a known (solved with skill, solved without) outcome each."""
    specs = {
        "needs-skill-a": dict(offset=13, skills={"adder": "Add OFFSET=13 to the sum.\n"}),
        "needs-skill-b": dict(offset=5, inputs=(10, 20), skills={"adder": "OFFSET=5\n"}),
        "needs-skill-c": dict(offset=-2, skills={"adder": "OFFSET=-2\n"}),
        "plain": dict(offset=0, skills={"adder": "OFFSET=0\n"}),
        "misleading": dict(offset=0, skills={"adder": "OFFSET=9\n"}),
        "unsolvable": dict(test_sh="#!/bin/bash\n[ -f /app/nothing ] && r=1; echo ${r:-0} > /logs/verifier/reward.txt\n",
                           solve_sh="#!/bin/bash\ntouch /app/nothing\n", skills={"adder": "OFFSET=1\n"}),
    }  # fmt: skip
    return {name: make_task(root / name, name=name, **spec).root for name, spec in specs.items()}  # type: ignore[arg-type]


def test_labels_and_mcnemar_from_the_scripted_baseline(llm: ScriptedLLMServer, tmp_path: Path) -> None:
    tasks = _tasks(tmp_path)
    settings = ValidatorSettings(baseline_base_url=llm.base_url, baseline_runs=2, oracle_runs=1)
    records = {r["path"].rsplit("/", 1)[-1]: r for r in validate_task_dirs(list(tasks.values()), settings)}
    assert all(r["valid"] for r in records.values()), {k: r["reasons"] for k, r in records.items()}
    expected = {
        "needs-skill-a": (1.0, 0.0, "skill-dep"),
        "needs-skill-b": (1.0, 0.0, "skill-dep"),
        "needs-skill-c": (1.0, 0.0, "skill-dep"),
        "plain": (1.0, 1.0, "verifier-passed"),
        "misleading": (0.0, 1.0, "verifier-passed"),
        "unsolvable": (0.0, 0.0, "verifier-passed"),
    }
    got = {k: (r["contrast"]["r_plus"], r["contrast"]["r_minus"], r["label"]) for k, r in records.items()}
    assert got == expected
    runs = records["needs-skill-a"]["contrast"]["runs"]
    assert len(runs) == 4 and sorted(r["with_skill"] for r in runs) == [False, False, True, True]
    assert all(r["tool_calls"] == 1 and r["stop_reason"] == "answered" for r in runs)
    summary = summarize(records.values())
    assert summary["labels"] == {"skill-dep": 3, "verifier-passed": 3}
    assert summary["mcnemar"]["only_with"] == 3 and summary["mcnemar"]["only_without"] == 1
    assert summary["mcnemar"]["p_value"] == pytest.approx(0.625)
    # the skill hint is given only when the skill is mounted
    systems = [body["messages"][0]["content"] for body in llm.requests]
    assert sum("/skills" in s for s in systems) == len(systems) / 2
    assert all(body["tools"][0]["function"]["name"] == "bash" for body in llm.requests)


def test_validator_service_handles_reviewed_events(llm: ScriptedLLMServer, tmp_path: Path) -> None:
    store = LocalStore(tmp_path / "store")
    ctx = ServiceContext(store=store, sandbox=LocalSandbox(), scratch=tmp_path / "scratch")
    settings = ValidatorSettings(baseline_base_url=llm.base_url, baseline_runs=1)
    service = ValidatorService(ctx, settings)
    assert service.name == "validator" and service.consumes == (ENV_REVIEWED,)

    good = make_task(tmp_path / "good", name="good", offset=13, skills={"adder": "OFFSET=13\n"})
    bad = make_task(tmp_path / "bad", name="bad", test_sh="#!/bin/bash\necho 1 > /logs/verifier/reward.txt\n")
    for task in (good, bad):
        store.put_bytes(f"tasks/{task.root.name}/package.tar.gz", pack_dir(task.root))

    def reviewed(name: str, approved: bool) -> Envelope:
        payload = EnvReviewed(task_id=f"task-{name}", skill_id=f"skill-{name}",
                              package_key=f"tasks/{name}/package.tar.gz", approved=approved)  # fmt: skip
        return Envelope.wrap(payload, producer="reviewer", correlation_id="test")

    assert service.handle(reviewed("good", approved=False)) == []
    [ok] = service.handle(reviewed("good", approved=True))
    assert isinstance(ok, EnvValidated) and ok.valid and ok.label == "skill-dep" and ok.category == "testing"
    report = get_json(store, task_validation("task-good"))
    assert report["contrast"]["r_plus"] == 1.0 and report["contrast"]["r_minus"] == 0.0
    transcript = report["contrast"]["runs"][0]["transcript"]
    assert [m["role"] for m in transcript] == ["system", "user", "assistant", "tool", "assistant"]
    assert transcript[3]["content"].startswith("exit_code: 0 (ok)")
    assert ok.report_key is not None and json.loads(store.get_bytes(ok.report_key))["valid"] is True

    [rejected] = service.handle(reviewed("bad", approved=True))
    assert isinstance(rejected, EnvValidated)
    assert not rejected.valid and rejected.reasons == ["nop_passes"] and rejected.label == "unlabelled"
    assert get_json(store, task_validation("task-bad"))["gate"]["runs"][0]["verifier"]["passed"] is True


def test_a_baseline_endpoint_that_fails_its_first_request_is_retried(tmp_path: Path) -> None:
    task = make_task(tmp_path / "task", offset=13, skills={"adder": "OFFSET=13\n"})
    with ScriptedLLMServer(Sequence([bash(AGENT_COMMAND)], final="Done."), fail_first=1) as llm:
        settings = ValidatorSettings(baseline_base_url=llm.base_url, baseline_runs=1, baseline_backoff_s=0.01)
        [record] = validate_task_dirs([task.root], settings)
    assert record["valid"] and record["label"] == "skill-dep", record["reasons"]
    runs = record["contrast"]["runs"]
    steps = sum(run["steps"] for run in runs)
    assert len(llm.requests) == steps + 1  # the one answered 503, then every step once
    assert record["contrast"]["usage"]["calls"] == steps == sum(run["usage"]["calls"] for run in runs)
    assert record["contrast"]["usage"]["prompt_tokens"] > 0 and all(run["usage"]["completion_tokens"] for run in runs)


def test_settings_read_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SKILLGYM_VALIDATOR_BASELINE_BASE_URL", "http://127.0.0.1:9/v1")
    monkeypatch.setenv("SKILLGYM_VALIDATOR_BASELINE_RUNS", "3")
    monkeypatch.setenv("SKILLGYM_VALIDATOR_SKILL_DEP_MIN_WITH", "0.6")
    settings = ValidatorSettings()
    assert settings.baseline_base_url == "http://127.0.0.1:9/v1" and settings.baseline_runs == 3
    assert settings.skill_dep_min_with == 0.6 and settings.skill_dep_max_without == 0.0


def test_unreachable_baseline_is_a_typed_error_and_the_batch_goes_on(tmp_path: Path) -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    task = make_task(tmp_path / "task")
    settings = ValidatorSettings(
        baseline_base_url=f"http://127.0.0.1:{port}/v1", baseline_request_timeout_s=2, oracle_runs=1
    )
    records = validate_task_dirs([task.root, task.root], settings)
    assert [r["reasons"] for r in records] == [["error: baseline_endpoint"]] * 2


@pytest.mark.parametrize(("status", "kind"), [(None, "unavailable"), (400, "refused")])
def test_an_endpoint_that_is_down_is_waited_out_one_that_refuses_is_not(status: int | None, kind: str) -> None:
    """Down (after the client's retries): a dependency outage the worker waits out. Refusing or
    answering nonsense: an ordinary failure, retried a bounded number of times."""
    import httpx
    from skillgym_core.errors import DependencyUnavailable
    from skillgym_core.failures import FailureKind, classify
    from skillgym_core.llm import LLMClient, LLMSettings
    from skillgym_validator.baseline import BaselineAgent
    from skillgym_validator.errors import BaselineEndpointError

    def answer(request: httpx.Request) -> httpx.Response:
        if status is None:
            raise httpx.ConnectError("connection refused", request=request)
        return httpx.Response(status, json={"error": {"message": "bad request"}})

    client = LLMClient(LLMSettings(base_url="http://baseline.invalid/v1", max_retries=2, backoff_s=0.0),
                       transport=httpx.MockTransport(answer))
    agent = BaselineAgent(client, runner=None)  # type: ignore[arg-type]  # never reached: the first call fails
    with pytest.raises(BaselineEndpointError if kind == "refused" else DependencyUnavailable) as caught:
        agent._complete([{"role": "user", "content": "hi"}], "/app")
    assert caught.value.reason == "baseline_endpoint"
    expected = FailureKind.TRANSIENT if kind == "unavailable" else FailureKind.RETRYABLE
    assert classify(caught.value) is expected
