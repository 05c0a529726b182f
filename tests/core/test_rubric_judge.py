"""LLM-judged rubric items in the trusted verifier runtime, against a real scripted
OpenAI-compatible server on 127.0.0.1 and the local sandbox."""

from __future__ import annotations

import json
import socket
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from skillgym_core.contracts.task import TaskDir
from skillgym_core.errors import ContractError
from skillgym_core.llm import LLMClient, LLMSettings
from skillgym_core.rubric import EvalJudge, gather_targets, load_eval_spec, parse_verdict
from skillgym_core.sandbox.local import LocalSandbox
from skillgym_core.taskrun import TaskRunner

from tests.support.scripted_llm import ScriptedLLMServer, assistant, last_user_text
from tests.validator.tasks import make_task

SPEC = {
    "rubric": [
        {"id": "answer", "description": "the sum is right", "weight": 0.5, "method": "deterministic"},
        {"id": "style", "description": "answer has no padding", "weight": 0.2, "method": "deterministic"},
        {
            "id": "report",
            "description": "the report explains the sum",
            "weight": 0.3,
            "method": "llm_judge",
            "judge_instruction": "Full marks if report.md states both inputs and the total.",
            "target_globs": ["report.md", "notes/**/*.txt"],
        },
    ],
    "pass_threshold": 0.7,
}
TEST_SH = """#!/bin/bash
answer=$(cat /app/answer.txt 2>/dev/null)
a=0; [ "$(echo $answer | tr -d ' ')" = "7" ] && a=1
s=0; [ "$answer" = "7" ] && s=1
printf '{"answer": %s, "style": %s}' $a $s > /logs/verifier/reward.json
"""
SOLVE_SH = """#!/bin/bash
echo 7 > /app/answer.txt
printf 'Inputs 3 and 4; the total is 7.\\n' > /app/report.md
mkdir -p /app/notes/deep && echo 'checked twice' > /app/notes/deep/check.txt && echo hidden > /app/secret.txt
"""


def rubric_task(root: Path, spec: dict[str, Any] | str = SPEC) -> TaskDir:
    text = spec if isinstance(spec, str) else json.dumps(spec)
    return make_task(root, test_sh=TEST_SH, solve_sh=SOLVE_SH, extra_tests={"eval_spec.json": text})


def judge_for(server: ScriptedLLMServer, *, retries: int = 2) -> EvalJudge:
    return EvalJudge(LLMClient(LLMSettings(base_url=server.base_url, max_retries=retries, backoff_s=0.01)))


@pytest.fixture
def grader() -> Iterator[ScriptedLLMServer]:
    """Scores 0.9 when the report names the total, else 0.1."""

    def respond(body: dict[str, Any]) -> dict[str, Any]:
        text = last_user_text(body)
        score = 0.9 if "the total is 7" in text else 0.1
        return assistant(
            json.dumps({"score": score, "reason": f"report {'states' if score > 0.5 else 'lacks'} the total"})
        )

    with ScriptedLLMServer(respond) as server:
        yield server


def solved(runner: TaskRunner, task: TaskDir, tmp_path: Path) -> Path:
    workspace = runner.fresh_workspace(task, tmp_path)
    assert runner.run_solution(task, workspace).ok
    return workspace


# -- the spec and the judge's inputs --------------------------------------------------------


@pytest.mark.parametrize(
    ("change", "fragment"),
    [
        (lambda s: s["rubric"][0].update(weight=0.6), "sum to"),
        (lambda s: s["rubric"][1].update(id="answer"), "repeat"),
        (lambda s: s["rubric"][2].update(target_globs=[]), "needs target_globs"),
        (lambda s: s["rubric"][2].update(target_globs=["/etc/passwd"]), "relative"),
        (lambda s: s["rubric"][2].update(target_globs=["../tests/*"]), "relative"),
        (lambda s: s["rubric"][0].update(method="vibes"), "method"),
        (lambda s: s.update(pass_threshold=1.5), "pass_threshold"),
    ],
)
def test_malformed_specs_are_contract_errors(tmp_path: Path, change: Any, fragment: str) -> None:
    spec = json.loads(json.dumps(SPEC))
    change(spec)
    (tmp_path / "eval_spec.json").write_text(json.dumps(spec))
    with pytest.raises(ContractError, match=fragment) as info:
        load_eval_spec(tmp_path)
    assert info.value.reason == "eval_spec_invalid"


def test_no_spec_is_none(tmp_path: Path) -> None:
    assert load_eval_spec(tmp_path) is None


def test_targets_match_globs_and_never_follow_links(tmp_path: Path) -> None:
    (tmp_path / "notes" / "a" / "b").mkdir(parents=True)
    (tmp_path / "report.md").write_text("report")
    (tmp_path / "notes" / "top.txt").write_text("top")
    (tmp_path / "notes" / "a" / "b" / "deep.txt").write_text("deep")
    (tmp_path / "notes" / "a" / "skip.md").write_text("other")
    outside = tmp_path.parent / f"{tmp_path.name}-outside.txt"
    outside.write_text("host secret")
    (tmp_path / "notes" / "leak.txt").symlink_to(outside)
    (tmp_path / "notes" / "linked").symlink_to(tmp_path.parent, target_is_directory=True)
    found = gather_targets(tmp_path, ["report.md", "notes/**/*.txt"])
    assert found == {"notes/a/b/deep.txt": "deep", "notes/top.txt": "top", "report.md": "report"}
    assert gather_targets(tmp_path, ["*.txt"]) == {}
    assert len(gather_targets(tmp_path, ["**"], max_files=2)) == 2


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('{"score": 0.4, "reason": "partial"}', (0.4, "partial")),
        ('Here you go: {"score": 1, "reason": "ok"} thanks', (1.0, "ok")),
        ('{"score": 1.5, "reason": "too much"}', None),
        ('{"score": true}', None),
        ('{"reason": "no score"}', None),
        ("no json at all", None),
    ],
)
def test_verdict_parsing(text: str, expected: tuple[float, str] | None) -> None:
    assert parse_verdict(text) == expected


# -- verify() with a rubric -----------------------------------------------------------------


def test_judge_scores_combine_with_deterministic_items(tmp_path: Path, grader: ScriptedLLMServer) -> None:
    task = rubric_task(tmp_path / "task")
    runner = TaskRunner(LocalSandbox(), judge=judge_for(grader))
    outcome = runner.verify(task, solved(runner, task, tmp_path))
    assert outcome.passed and outcome.failure_type is None, outcome.to_dict()
    assert outcome.reward == pytest.approx(0.5 + 0.2 + 0.3 * 0.9)
    assert outcome.rewards == {"answer": 1.0, "style": 1.0, "report": 0.9, "reward": outcome.reward}
    assert outcome.rubric is not None and outcome.rubric["judge"] == "configured"
    assert [i["reason"] for i in outcome.rubric["items"] if i["id"] == "report"] == ["report states the total"]
    [request] = grader.requests
    prompt = last_user_text(request)
    assert "report.md" in prompt and "notes/deep/check.txt" in prompt and "states both inputs" in prompt
    assert "secret.txt" not in prompt and "hidden" not in prompt
    assert "Read the two numbers" in prompt  # the task's instruction


def test_a_weak_answer_fails_below_the_threshold(tmp_path: Path, grader: ScriptedLLMServer) -> None:
    task = rubric_task(tmp_path / "task")
    runner = TaskRunner(LocalSandbox(), judge=judge_for(grader))
    workspace = runner.fresh_workspace(task, tmp_path)
    (workspace / "answer.txt").write_text(" 7\n")
    (workspace / "report.md").write_text("I added things.\n")
    outcome = runner.verify(task, workspace)
    assert outcome.reward == pytest.approx(0.5 + 0.3 * 0.1)
    assert not outcome.passed and outcome.failure_type == "verifier_rejected"


def test_judge_items_ignore_scores_in_reward_json(tmp_path: Path, grader: ScriptedLLMServer) -> None:
    task = make_task(
        tmp_path / "task",
        solve_sh=SOLVE_SH,
        extra_tests={"eval_spec.json": json.dumps(SPEC)},
        test_sh=TEST_SH.replace("$s}'", '$s, "report": 1}\''),
    )
    runner = TaskRunner(LocalSandbox(), judge=judge_for(grader))
    workspace = runner.fresh_workspace(task, tmp_path)
    (workspace / "answer.txt").write_text("7\n")
    outcome = runner.verify(task, workspace)
    assert outcome.rewards["report"] == 0.0  # no report file: the judge's 0 wins over reward.json
    assert outcome.rubric is not None
    assert next(i["reason"] for i in outcome.rubric["items"] if i["id"] == "report").startswith("no file matches")
    assert not grader.requests


def test_no_judge_configured_scores_zero_and_says_so(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("SKILLGYM_JUDGE_LLM_BASE_URL", raising=False)
    task = rubric_task(tmp_path / "task")
    for runner in (TaskRunner(LocalSandbox(), judge=None), TaskRunner(LocalSandbox())):
        outcome = runner.verify(task, solved(runner, task, tmp_path))
        assert outcome.reward == pytest.approx(0.7) and outcome.rewards["report"] == 0.0
        assert outcome.rubric is not None and outcome.rubric["judge"] == "unconfigured"
        assert outcome.rubric["judge_unavailable"] == ["report"]
        assert "no judge configured" in json.dumps(outcome.to_dict())
    strict = dict(SPEC, pass_threshold=0.9)
    task = rubric_task(tmp_path / "strict", strict)
    runner = TaskRunner(LocalSandbox(), judge=None)
    outcome = runner.verify(task, solved(runner, task, tmp_path))
    assert not outcome.passed and outcome.failure_type == "judge_unavailable"


def test_the_judge_role_comes_from_the_environment(
    tmp_path: Path, grader: ScriptedLLMServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SKILLGYM_JUDGE_LLM_BASE_URL", grader.base_url)
    task = rubric_task(tmp_path / "task")
    runner = TaskRunner(LocalSandbox())
    outcome = runner.verify(task, solved(runner, task, tmp_path))
    assert outcome.passed and outcome.rewards["report"] == 0.9 and len(grader.requests) == 1


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def test_an_unreachable_judge_scores_zero_with_the_reason(tmp_path: Path) -> None:
    client = LLMClient(LLMSettings(base_url=f"http://127.0.0.1:{free_port()}/v1", max_retries=2, backoff_s=0.01))
    task = rubric_task(tmp_path / "task", dict(SPEC, pass_threshold=0.8))
    runner = TaskRunner(LocalSandbox(), judge=EvalJudge(client))
    outcome = runner.verify(task, solved(runner, task, tmp_path))
    assert outcome.rewards["report"] == 0.0 and not outcome.passed
    assert outcome.failure_type == "judge_unavailable"
    assert outcome.rubric is not None
    [reason] = [i["reason"] for i in outcome.rubric["items"] if i["id"] == "report"]
    assert reason.startswith("judge unreachable (llm_unavailable)")


def test_unparseable_answers_are_retried_then_scored_zero(tmp_path: Path) -> None:
    with ScriptedLLMServer(lambda body: assistant("I think it is quite good!")) as server:
        task = rubric_task(tmp_path / "task")
        runner = TaskRunner(LocalSandbox(), judge=judge_for(server))
        outcome = runner.verify(task, solved(runner, task, tmp_path))
        temperatures = [request["temperature"] for request in server.requests]
    assert temperatures == [0.0, 0.3, 0.3]
    assert outcome.rewards["report"] == 0.0
    assert outcome.rubric is not None
    assert "not {score, reason} JSON" in outcome.rubric["items"][2]["reason"]


def test_transient_endpoint_errors_are_retried(tmp_path: Path) -> None:
    answer = assistant(json.dumps({"score": 1, "reason": "clear"}))
    with ScriptedLLMServer(lambda body: answer, fail_first=1) as server:
        task = rubric_task(tmp_path / "task")
        runner = TaskRunner(LocalSandbox(), judge=judge_for(server, retries=3))
        outcome = runner.verify(task, solved(runner, task, tmp_path))
        assert len(server.requests) == 2
    assert outcome.passed and outcome.reward == pytest.approx(1.0)


def test_a_malformed_spec_is_a_checker_failure(tmp_path: Path) -> None:
    task = rubric_task(tmp_path / "task", "{not json")
    runner = TaskRunner(LocalSandbox(), judge=None)
    outcome = runner.verify(task, solved(runner, task, tmp_path))
    assert outcome.failure_type == "verifier_eval_spec_invalid" and not outcome.passed
    assert "eval_spec.json" in outcome.detail


def test_tasks_without_a_spec_keep_the_plain_reward(tmp_path: Path) -> None:
    task = make_task(tmp_path / "task")
    runner = TaskRunner(LocalSandbox(), judge=None)
    outcome = runner.verify(task, solved(runner, task, tmp_path))
    assert outcome.passed and outcome.rubric is None and "rubric" not in outcome.to_dict()
