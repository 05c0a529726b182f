"""The trusted verifier runtime, run for real in the local sandbox."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from skillgym_core.reward import read_reward
from skillgym_core.sandbox.local import LocalSandbox
from skillgym_core.taskrun import TaskRunner

from tests.validator.tasks import make_task


@pytest.fixture(scope="module")
def runner() -> TaskRunner:
    return TaskRunner(LocalSandbox())


# -- read_reward ------------------------------------------------------------------------


def test_reward_txt_and_json_must_agree(tmp_path: Path) -> None:
    (tmp_path / "reward.txt").write_text("0.25\n")
    assert read_reward(tmp_path) == (0.25, {"reward": 0.25})
    (tmp_path / "reward.json").write_text(json.dumps({"correct": 1, "style": 0.5}))
    assert read_reward(tmp_path) is None  # 0.75 against 0.25: a conflict, never a precedence rule
    (tmp_path / "reward.txt").write_text("0.75\n")
    assert read_reward(tmp_path) == (0.75, {"correct": 1.0, "style": 0.5})
    (tmp_path / "reward.txt").unlink()
    (tmp_path / "reward.json").write_text(json.dumps({"reward": 1, "style": 0}))
    assert read_reward(tmp_path) == (1.0, {"reward": 1.0, "style": 0.0})


@pytest.mark.parametrize(
    ("name", "content"),
    [
        ("reward.txt", "NaN"),
        ("reward.txt", "inf"),
        ("reward.txt", "yes"),
        ("reward.json", '{"reward": true}'),
        ("reward.json", '{"reward": NaN}'),
        ("reward.json", "[1]"),
        ("reward.json", "{}"),
        ("reward.txt", "1" + " " * 70_000),
    ],
)
def test_invalid_rewards_are_none(tmp_path: Path, name: str, content: str) -> None:
    (tmp_path / name).write_text(content)
    assert read_reward(tmp_path) is None


def test_reward_links_and_fifos_are_not_followed(tmp_path: Path) -> None:
    target = tmp_path / "elsewhere.txt"
    target.write_text("1")
    logs = tmp_path / "logs"
    logs.mkdir()
    (logs / "reward.txt").symlink_to(target)
    assert read_reward(logs) is None
    (logs / "reward.txt").unlink()
    os.mkfifo(logs / "reward.txt")
    assert read_reward(logs) is None  # and did not block


# -- phases -----------------------------------------------------------------------------


def test_oracle_passes_and_nop_fails(runner: TaskRunner, tmp_path: Path) -> None:
    task = make_task(tmp_path / "task")
    nop = runner.verify(task, runner.fresh_workspace(task, tmp_path))
    assert not nop.passed and nop.failure_type == "verifier_rejected" and nop.reward == 0
    workspace = runner.fresh_workspace(task, tmp_path)
    assert runner.run_solution(task, workspace).ok
    verdict = runner.verify(task, workspace)
    assert verdict.passed and verdict.reward == 1.0 and verdict.failure_type is None


def test_agent_never_sees_tests_or_solution(runner: TaskRunner, tmp_path: Path) -> None:
    task = make_task(tmp_path / "task")
    workspace = runner.fresh_workspace(task, tmp_path)
    result = runner.run_agent_command(
        task, workspace, f"ls /tests /solution {task.root}/tests {task.root}/solution 2>&1; ls /logs; ls /"
    )
    assert "test.sh" not in result.stdout and "solve.sh" not in result.stdout
    assert {"tests", "solution", "verifier"}.isdisjoint(result.stdout.split())  # /logs holds only agent/


def test_logs_agent_is_kept_across_commands_and_hidden_from_the_verifier(runner: TaskRunner, tmp_path: Path) -> None:
    task = make_task(tmp_path / "task", test_sh="#!/bin/bash\nls -A /logs; cat /logs/agent/note 2>&1\n")
    workspace = runner.fresh_workspace(task, tmp_path)
    assert runner.run_agent_command(task, workspace, "echo first > /logs/agent/note").ok
    assert runner.run_agent_command(task, workspace, "cat /logs/agent/note").stdout == "first\n"
    assert runner.run_solution(task, workspace).ok  # the solution's runs have it too
    verdict = runner.verify(task, workspace)
    assert verdict.result is not None and "first" not in verdict.result.stdout
    assert verdict.result.stdout.split()[0] == "verifier"


def test_skills_are_mounted_read_only(runner: TaskRunner, tmp_path: Path) -> None:
    task = make_task(tmp_path / "task", skills={"adder": "OFFSET=13\n"})
    workspace = runner.fresh_workspace(task, tmp_path)
    result = runner.run_agent_command(
        task, workspace, "cat /skills/adder/SKILL.md; echo x > /skills/adder/SKILL.md", skills=task.skills
    )
    assert "OFFSET=13" in result.stdout and "Read-only" in result.stderr
    assert (task.skills / "adder" / "SKILL.md").read_text() == "OFFSET=13\n"


def test_stale_reward_written_by_agent_is_discarded(runner: TaskRunner, tmp_path: Path) -> None:
    task = make_task(tmp_path / "task", test_sh="#!/bin/bash\nls /logs/verifier\n")
    workspace = runner.fresh_workspace(task, tmp_path)
    runner.run_agent_command(
        task,
        workspace,
        "mkdir -p logs/verifier; echo 1 > logs/verifier/reward.txt; echo 1 > /logs/verifier/reward.txt",
    )
    verdict = runner.verify(task, workspace)
    assert verdict.failure_type == "reward_file_missing" and not verdict.passed
    assert verdict.result is not None and verdict.result.stdout == ""


def test_tampered_protected_input_fails(runner: TaskRunner, tmp_path: Path) -> None:
    task = make_task(tmp_path / "task")
    workspace = runner.fresh_workspace(task, tmp_path)
    runner.run_agent_command(task, workspace, "echo '3 4 ' > input.txt; echo 7 > answer.txt")
    verdict = runner.verify(task, workspace)
    assert verdict.failure_type == "tampered_inputs" and verdict.tampered == ["input.txt"]
    assert not verdict.passed


def test_protected_input_replaced_by_link_or_fifo(runner: TaskRunner, tmp_path: Path) -> None:
    task = make_task(tmp_path / "task")
    for trick in ("rm input.txt; ln -s /dev/zero input.txt", "rm input.txt; mkfifo input.txt"):
        workspace = runner.fresh_workspace(task, tmp_path)
        runner.run_agent_command(task, workspace, f"{trick}; echo 7 > answer.txt")
        verdict = runner.verify(task, workspace)
        assert verdict.failure_type == "tampered_inputs", trick


def test_workspace_links_out_and_fifos_are_dropped_with_reasons(runner: TaskRunner, tmp_path: Path) -> None:
    secret = tmp_path / "host-secret.txt"
    secret.write_text("7")
    task = make_task(tmp_path / "task")
    workspace = runner.fresh_workspace(task, tmp_path)
    runner.run_agent_command(task, workspace, f"ln -s {secret} answer.txt; mkfifo pipe; ln -s / root-link")
    verdict = runner.verify(task, workspace)
    assert not verdict.passed and verdict.failure_type == "verifier_rejected"
    reasons = {item["path"]: item["reason"] for item in verdict.dropped_files}
    assert set(reasons) == {"answer.txt", "pipe", "root-link"}
    assert reasons["pipe"] == "special_file" and reasons["answer.txt"].startswith("link_")


def test_planted_module_cannot_grade_itself(runner: TaskRunner, tmp_path: Path) -> None:
    checker = (
        "#!/bin/bash\npython3 - <<'PY'\nimport json\n"
        "ok = open('/app/answer.txt').read().strip() == '7' if __import__('os').path.exists('/app/answer.txt') else False\n"
        "open('/logs/verifier/reward.txt', 'w').write('1' if ok else '0')\nPY\n"
    )
    task = make_task(tmp_path / "task", test_sh=checker)
    workspace = runner.fresh_workspace(task, tmp_path)
    (workspace / "json.py").write_text("open('/logs/verifier/reward.txt', 'w').write('1')\nraise SystemExit(0)\n")
    verdict = runner.verify(task, workspace)
    assert verdict.failure_type == "verifier_rejected" and verdict.reward == 0.0


def test_verifier_logs_can_be_kept(runner: TaskRunner, tmp_path: Path) -> None:
    task = make_task(
        tmp_path / "task",
        test_sh="#!/bin/bash\necho detail > /logs/verifier/out.log\necho 0.5 > /logs/verifier/reward.txt\n",
    )
    workspace = runner.fresh_workspace(task, tmp_path)
    verdict = runner.verify(task, workspace, keep_logs=tmp_path / "kept")
    assert verdict.reward == 0.5 and verdict.failure_type == "verifier_rejected"
    assert (tmp_path / "kept" / "out.log").read_text() == "detail\n"
