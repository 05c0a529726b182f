"""The example report the docs link to: ``skillgym report`` run over a small store of
illustrative agent runs (two harnesses, two categories, with and without the skill), made here
so the page always shows what the current report code draws."""

from __future__ import annotations

import random
import tempfile
from pathlib import Path

from skillgym_core import keys
from skillgym_core.contracts.atif import Metrics, ObservationResult, ToolCall, VerificationRecord
from skillgym_core.store.base import put_json
from skillgym_core.store.local import LocalStore
from skillgym_sampler.recorder import TrajectoryRecorder
from skillgym_sampler.report import build_report

CONFIGURATIONS = (("builtin", "smollm2-135m"), ("mini-swe-agent", "smollm2-135m"))
CATEGORIES = ("data-science", "documents")


def _run(store: LocalStore, index: int, rng: random.Random, *, harness: str, model: str, task: str,
         category: str, skill: bool) -> None:
    trajectory_id = f"example-{index:04d}"
    recorder = TrajectoryRecorder(session_id=trajectory_id, trajectory_id=trajectory_id, agent_name=harness,
                                  agent_version="1", model_name=model)
    recorder.system("You are an agent working in /app.")
    recorder.user(f"Task {task}: produce the result the skill's procedure gives.")
    read_skill = skill and rng.random() < 0.7
    for turn in range(rng.randint(2, 6)):
        calls = [ToolCall(tool_call_id=f"c{turn}_{k}", function_name="bash",
                          arguments={"command": "cat /skills/example/SKILL.md" if read_skill and turn == 0 and k == 0
                                     else f"python3 step_{turn}_{k}.py"}) for k in range(rng.randint(0, 2))]
        recorder.agent_step(f"turn {turn}", tool_calls=calls,
                            results=[ObservationResult(source_call_id=c.tool_call_id, content="ok " * rng.randint(3, 40))
                                     for c in calls],
                            reasoning="checking the inputs" if turn % 2 == 0 else None,
                            metrics=Metrics(prompt_tokens=rng.randint(200, 900), completion_tokens=rng.randint(20, 120)))
    store.put_bytes(keys.trajectory_atif(trajectory_id), recorder.build().model_dump_json(exclude_none=True).encode())
    passed = rng.random() < (0.6 if skill else 0.25)
    record = VerificationRecord(trajectory_id=trajectory_id, task_id=task, harness=harness, model=model,
                                skill_provided=skill, reward=1.0 if passed else 0.0, passed=passed,
                                skill_read=read_skill, category=category)
    put_json(store, keys.trajectory_verification(trajectory_id), record.model_dump(mode="json"))


def write_example(out: Path) -> Path:
    """``out/report.html`` with its charts, from 48 illustrative runs (seeded, so it does not change)."""
    rng = random.Random(7)
    with tempfile.TemporaryDirectory(prefix="skillgym-report-example-") as tmp:
        store = LocalStore(Path(tmp) / "store")
        index = 0
        for task_no in range(6):
            for harness, model in CONFIGURATIONS:
                for skill in (True, False):
                    for _ in range(2):
                        _run(store, index, rng, harness=harness, model=model, task=f"task-{task_no}",
                             category=CATEGORIES[task_no % 2], skill=skill)
                        index += 1
        build_report(store, out)
    return out / "report.html"
