"""Multi-step tasks as Harbor runs them, on the real bubblewrap sandbox: steps in order on one
workspace in the task's own working directory, each step's files merged and its setup run where
the agent cannot see them, tests layered and hidden, a ``min_reward`` gate that ends the trial,
a healthcheck, and the trial's reward rolled up from the steps'."""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Any

import pytest
import tomli_w
from skillgym_core.conformance import check_task
from skillgym_core.contracts.task import StepSection, TaskConfig, TaskDir, TaskStep
from skillgym_core.errors import TaskFormatError
from skillgym_core.multistep import StepOutcome, aggregate, run_steps
from skillgym_core.sandbox.local import LocalSandbox
from skillgym_core.taskrun import TaskRunner, VerifierOutcome

from tests.support.harbor_tasks import log_steps


@pytest.fixture
def task(tmp_path: Path) -> TaskDir:
    return TaskDir(log_steps(tmp_path / "log-steps"))


@pytest.fixture
def runner() -> TaskRunner:
    return TaskRunner(LocalSandbox(), judge=None)


def _edit(task: TaskDir, change: Any) -> None:
    raw = tomllib.loads(task.config_path.read_text())
    change(raw)
    task.config_path.write_text(tomli_w.dumps(raw))


def _agent(runner: TaskRunner, task: TaskDir, workspace: Path, commands: dict[str, str]) -> Any:
    seen: dict[str, Any] = {}

    def act(step: TaskStep, config: StepSection) -> dict[str, Any]:
        result = runner.run_agent_command(task, workspace, commands[step.name])
        seen[step.name] = result
        return {"outcome": result.outcome.value, "exit_code": result.exit_code}

    act.seen = seen  # type: ignore[attr-defined]
    return act


SOLVE = {
    "count": "grep -c '^ERROR' events.log > errors.txt",
    "summarize": "python3 -c 'import collections, json; json.dump(collections.Counter(l.split()[0] for l in "
                 "open(\"events.log\")), open(\"summary.json\", \"w\"))'",
}


def test_the_steps_are_read_in_order_with_their_settings(task: TaskDir) -> None:
    config = task.config()
    assert [s.name for s in config.steps] == ["count", "summarize"] and config.reward_strategy == "mean"
    assert config.environment.workdir == "/workspace" and config.steps[0].min_reward == 1.0
    assert config.steps[1].agent.timeout_sec == 90 and config.steps[1].healthcheck is not None
    assert [step.name for step in task.steps()] == ["count", "summarize"]
    assert task.steps()[0].test_script() == task.root / "steps/count/tests/test.sh"
    assert check_task(task.root) == [] and task.check_layout() == []
    assert "steps" not in tomllib.loads(TaskDir(task.root).config().model_copy(update={"steps": []}).to_toml())


@pytest.mark.parametrize("change", [
    lambda raw: raw["steps"].append({"name": "count"}),
    lambda raw: raw["steps"][0].update(name="../escape"),
    lambda raw: raw["environment"].update(workdir="/tests"),
    lambda raw: raw["environment"].update(workdir="//tests"),
    lambda raw: raw["environment"].update(workdir="//"),
    lambda raw: raw["environment"].update(workdir="/usr/local"),
    lambda raw: raw["environment"].update(workdir="/opt"),
    lambda raw: raw["environment"].update(workdir="/agent"),
    lambda raw: raw["environment"].update(workdir="relative/dir"),
    lambda raw: raw.update(multi_step_reward_strategy="max"),
])
def test_malformed_steps_and_workdirs_are_refused(task: TaskDir, change: Any) -> None:
    _edit(task, change)
    with pytest.raises(TaskFormatError):
        task.config()
    assert "config_contract" in [issue.code for issue in check_task(task.root)]


def test_a_workdir_beside_the_system_directories_is_kept(task: TaskDir) -> None:
    for workdir, normal in (("/usr/src/app", "/usr/src/app"), ("//srv//data/", "/srv/data"), ("/opt/app", "/opt/app")):
        _edit(task, lambda raw, w=workdir: raw["environment"].update(workdir=w))
        assert task.config().environment.workdir == normal


def test_each_step_needs_an_instruction_and_a_test(task: TaskDir) -> None:
    (task.root / "steps/summarize/instruction.md").unlink()
    (task.root / "steps/count/tests/test.sh").unlink()
    paths = {issue.path for issue in check_task(task.root)}
    assert paths == {"steps/summarize/instruction.md", "steps/count/tests/test.sh"}
    assert task.check_layout() == ["missing steps/summarize/instruction.md", "missing steps/count/tests/test.sh"]
    (task.root / "tests/test.sh").write_text("#!/bin/bash\necho 0 > /logs/verifier/reward.txt\n")
    assert {issue.path for issue in check_task(task.root)} == {"steps/summarize/instruction.md"}  # the shared one serves


def test_a_step_instruction_may_not_point_at_the_tests(task: TaskDir) -> None:
    (task.root / "steps/count/instruction.md").write_text("Run /tests/test.sh when done.\n")
    assert [issue.code for issue in check_task(task.root)] == ["instruction_mentions_hidden"]


def test_state_carries_over_and_setup_tests_and_solutions_stay_hidden(task: TaskDir, runner: TaskRunner,
                                                                      tmp_path: Path) -> None:
    workspace = runner.fresh_workspace(task, tmp_path)
    look = "test ! -e /tests && test ! -e /solution && test ! -e /step && test ! -e setup.sh && pwd && ls"
    act = _agent(runner, task, workspace, {name: f"{look} && {command}" for name, command in SOLVE.items()})
    outcome = run_steps(runner, task, workspace, act, scratch=tmp_path)
    assert [s.name for s in outcome.steps] == ["count", "summarize"] and outcome.stopped_at is None
    assert all(s.verifier and s.verifier.passed for s in outcome.steps), [s.to_dict() for s in outcome.steps]
    assert outcome.verifier.passed and outcome.verifier.reward == 1.0
    first, second = act.seen["count"], act.seen["summarize"]
    assert first.ok and first.stdout.splitlines()[0] == "/workspace" and "events.log" in first.stdout
    assert second.ok and "errors.txt" in second.stdout  # the first step's output is still there
    assert (workspace / "events.log").read_text().endswith("ERROR fan\nWARN hot\n")  # the setup ran
    assert not (workspace / "setup.sh").exists()


def test_a_step_below_its_minimum_ends_the_trial(task: TaskDir, runner: TaskRunner, tmp_path: Path) -> None:
    workspace = runner.fresh_workspace(task, tmp_path)
    act = _agent(runner, task, workspace, {"count": "echo 3 > errors.txt", **{"summarize": SOLVE["summarize"]}})
    outcome = run_steps(runner, task, workspace, act, scratch=tmp_path)
    assert outcome.stopped_at == "count" and [s.name for s in outcome.steps] == ["count"]
    assert "summarize" not in act.seen and outcome.steps[0].below_minimum
    assert not outcome.verifier.passed and outcome.verifier.failure_type == "step_below_min_reward"


def test_without_a_gate_the_mean_counts_every_step(task: TaskDir, runner: TaskRunner, tmp_path: Path) -> None:
    _edit(task, lambda raw: raw["steps"][0].pop("min_reward"))
    workspace = runner.fresh_workspace(task, tmp_path)
    act = _agent(runner, task, workspace, {"count": "echo 3 > errors.txt", "summarize": SOLVE["summarize"]})
    outcome = run_steps(runner, task, workspace, act, scratch=tmp_path)
    assert [s.verifier.reward for s in outcome.steps if s.verifier] == [0.0, 1.0]
    assert outcome.verifier.reward == 0.5 and not outcome.verifier.passed
    _edit(task, lambda raw: raw.update(multi_step_reward_strategy="final"))
    workspace = runner.fresh_workspace(task, tmp_path)
    act = _agent(runner, task, workspace, {"count": "echo 3 > errors.txt", "summarize": SOLVE["summarize"]})
    assert run_steps(runner, task, workspace, act, scratch=tmp_path).verifier.reward == 1.0


def test_a_failed_healthcheck_or_setup_stops_before_the_agent(task: TaskDir, runner: TaskRunner,
                                                               tmp_path: Path) -> None:
    _edit(task, lambda raw: raw["steps"][0].pop("min_reward"))
    workspace = runner.fresh_workspace(task, tmp_path)
    act = _agent(runner, task, workspace, {"count": "true", "summarize": SOLVE["summarize"]})
    outcome = run_steps(runner, task, workspace, act, scratch=tmp_path)
    assert outcome.stopped_at == "summarize" and outcome.steps[1].error == "step_healthcheck_failed"
    assert "summarize" not in act.seen and not outcome.verifier.passed
    assert outcome.verifier.failure_type == "step_healthcheck_failed"
    (task.root / "steps/summarize/workdir/setup.sh").write_text("echo broken >&2; exit 3\n")
    workspace = runner.fresh_workspace(task, tmp_path)
    act = _agent(runner, task, workspace, SOLVE)
    outcome = run_steps(runner, task, workspace, act, scratch=tmp_path)
    assert outcome.steps[1].error == "step_setup_failed" and "broken" in outcome.steps[1].detail
    assert "summarize" not in act.seen


def test_a_reward_pre_written_by_the_agent_is_discarded(task: TaskDir, runner: TaskRunner, tmp_path: Path) -> None:
    workspace = runner.fresh_workspace(task, tmp_path)
    act = _agent(runner, task, workspace, {"count": "mkdir -p /logs/verifier 2>/dev/null; echo 1 > reward.txt"})
    outcome = run_steps(runner, task, workspace, act, scratch=tmp_path)
    assert outcome.stopped_at == "count" and outcome.verifier.reward == 0.0


def _verdict(reward: float, rewards: dict[str, float], failure: str | None = None) -> VerifierOutcome:
    return VerifierOutcome(reward, rewards, failure is None and reward >= 1, failure, None)


def test_rewards_roll_up_as_harbor_rolls_them() -> None:
    steps = [StepOutcome("a", _verdict(1.0, {"reward": 1.0, "style": 1.0})),
             StepOutcome("b", _verdict(0.5, {"reward": 0.5}, "verifier_rejected"))]
    mean = aggregate("mean", steps, 1.0, None)
    assert mean.reward == 0.75 and mean.rewards == {"reward": 0.75, "style": 0.5} and not mean.passed
    final = aggregate("final", steps, 1.0, None)
    assert final.reward == 0.5 and final.rewards == {"reward": 0.5}
    crashed = [steps[0], StepOutcome("b", VerifierOutcome.failed("verifier_timeout"))]
    rolled = aggregate("mean", crashed, 0.5, None)
    assert rolled.reward == 0.5 and not rolled.passed and rolled.failure_type == "verifier_timeout"
    assert aggregate("mean", [steps[0]], 1.0, "a").passed is False
    never = aggregate("mean", [StepOutcome("a", None, "step_setup_failed", "exit 3")], 1.0, "a")
    assert never.failure_type == "step_setup_failed" and never.reward == 0.0


def test_a_stopped_trial_is_the_mean_of_the_steps_it_graded() -> None:
    steps = [StepOutcome("a", _verdict(1.0, {"reward": 1.0})),
             StepOutcome("b", _verdict(0.2, {"reward": 0.2}, "verifier_rejected"), below_minimum=True)]
    stopped = aggregate("mean", steps, 1.0, "b")  # a third step, never reached, counts for nothing
    assert stopped.reward == 0.6 and stopped.rewards == {"reward": 0.6}
    assert not stopped.passed and stopped.failure_type == "step_below_min_reward"


def test_the_trial_reward_is_read_from_the_per_key_means() -> None:
    mixed = [StepOutcome("a", _verdict(1.0, {"reward": 1.0})), StepOutcome("b", _verdict(0.2, {"a": 0.2}))]
    outcome = aggregate("mean", mixed, 1.0, None)  # b has no reward key: it counts 0 there, as in Harbor
    assert outcome.rewards == {"a": 0.1, "reward": 0.5} and outcome.reward == 0.5
    keyed = [StepOutcome("a", _verdict(1.0, {"a": 1.0, "b": 1.0})), StepOutcome("b", _verdict(1.0, {"a": 1.0}))]
    outcome = aggregate("mean", keyed, 1.0, None)
    assert outcome.rewards == {"a": 1.0, "b": 0.5} and outcome.reward == 0.75


def test_an_unverifiable_step_counts_zero_on_every_key() -> None:
    steps = [StepOutcome("a", _verdict(1.0, {"a": 1.0, "b": 1.0})),
             StepOutcome("b", VerifierOutcome.failed("reward_file_missing"))]
    outcome = aggregate("mean", steps, 0.5, None)
    assert outcome.rewards == {"a": 0.5, "b": 0.5} and outcome.reward == 0.5
    assert outcome.failure_type == "reward_file_missing" and not outcome.passed
    assert aggregate("mean", steps[1:], 0.5, None).rewards == {"reward": 0.0}


def test_final_is_the_last_step_that_ran_graded_or_not() -> None:
    steps = [StepOutcome("a", _verdict(1.0, {"reward": 1.0})), StepOutcome("b", None, "step_setup_failed", "exit 3")]
    outcome = aggregate("final", steps, 1.0, "b")
    assert (outcome.reward, outcome.rewards, outcome.passed) == (0.0, {"reward": 0.0}, False)
    assert outcome.failure_type == "step_setup_failed" and outcome.detail == "exit 3"
    assert aggregate("mean", steps, 1.0, "b").reward == 1.0  # the mean leaves the ungraded step out


def test_inputs_tampered_with_in_one_step_zero_the_whole_trial() -> None:
    honest = StepOutcome("a", _verdict(1.0, {"reward": 1.0}))
    tampered = StepOutcome("b", VerifierOutcome.failed("tampered_inputs", tampered=["data.csv"]))
    for strategy in ("mean", "final"):
        for steps in ([honest, tampered], [tampered, honest]):
            outcome = aggregate(strategy, steps, 0.5, None)
            assert (outcome.reward, outcome.rewards, outcome.passed) == (0.0, {"reward": 0.0}, False)
            assert outcome.failure_type == "tampered_inputs" and outcome.tampered == ["data.csv"]


def test_min_reward_per_key() -> None:
    step = StepSection(name="s", min_reward={"safety": 1.0})
    assert step.below_minimum({"reward": 1.0}, 1.0) and not step.below_minimum({"safety": 1.0}, 0.0)
    assert not StepSection(name="s").below_minimum({}, 0.0)
    assert TaskConfig.model_validate({"task": {"name": "a/b"}, "steps": [{"name": "s", "min_reward": 0.5}]}).is_multi_step


def test_a_floor_on_a_key_the_verifier_did_not_report_is_missed_even_at_zero() -> None:
    step = StepSection(name="s", min_reward={"style": 0.0})
    assert step.below_minimum({"reward": 1.0}, 1.0) and not step.below_minimum({"style": 0.0}, 0.0)


def test_a_step_whose_verifier_gave_no_verdict_ends_the_trial(task: TaskDir, runner: TaskRunner,
                                                             tmp_path: Path) -> None:
    _edit(task, lambda raw: raw["steps"][0].pop("min_reward"))
    tests = task.step("count").root / "tests" / "test.sh"
    tests.write_text("#!/bin/bash\nexit 0\n")  # writes no reward
    workspace = runner.fresh_workspace(task, tmp_path)
    act = _agent(runner, task, workspace, {"count": SOLVE["count"], "summarize": SOLVE["summarize"]})
    outcome = run_steps(runner, task, workspace, act, scratch=tmp_path)
    assert outcome.stopped_at == "count" and "summarize" not in act.seen
    first = outcome.steps[0]
    assert first.verifier is not None and not first.verifier.judged and first.ends_trial
    assert outcome.verifier.reward == 0.0 and outcome.verifier.failure_type == first.verifier.failure_type
    assert StepOutcome("s", _verdict(0.0, {"reward": 0.0}, "verifier_rejected")).ends_trial is False
