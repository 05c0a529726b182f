"""Trajectories shaped like the sampler's output, and a store filled with them."""

from __future__ import annotations

from pathlib import Path

from skillgym_core import keys
from skillgym_core.context import ServiceContext
from skillgym_core.contracts.atif import (
    Agent,
    Observation,
    ObservationResult,
    Step,
    ToolCall,
    Trajectory,
    VerificationRecord,
)
from skillgym_core.contracts.events import Envelope, TrajectoryVerified
from skillgym_core.store.base import put_json
from skillgym_core.store.local import LocalStore

BASH_TOOL = {
    "type": "function",
    "function": {
        "name": "bash",
        "description": "Run a shell command in the workspace.",
        "parameters": {
            "type": "object",
            "properties": {"command": {"type": "string"}},
            "required": ["command"],
        },
    },
}

FILES = ["report.csv", "notes.md", "data.json", "summary.txt", "config.yaml", "plot.py"]
SKILLS = ["csv-report", "markdown-notes", "json-clean", "text-summary", "yaml-config", "plot-maker"]


def make_trajectory(index: int, *, turns: int = 2, reasoning: bool = True) -> Trajectory:
    name = FILES[index % len(FILES)]
    skill = SKILLS[index % len(SKILLS)]
    steps = [
        Step(step_id=1, source="system", message="You are a careful terminal agent. Use the bash tool."),
        Step(step_id=2, source="user", message=f"Use the {skill} skill to produce {name} in /work (task {index})."),
    ]
    for turn in range(turns):
        call_id = f"call_{index}_{turn}"
        command = f"cat /work/skills/{skill}/SKILL.md" if turn == 0 else f"python make.py --out {name}"
        steps.append(
            Step(
                step_id=len(steps) + 1,
                source="agent",
                message=f"Step {turn + 1}: I will run `{command}`.",
                reasoning_content=f"The task needs {name}; turn {turn} checks progress." if reasoning else None,
                tool_calls=[ToolCall(tool_call_id=call_id, function_name="bash", arguments={"command": command})],
                observation=Observation(
                    results=[ObservationResult(source_call_id=call_id, content=f"ok: {name} step {turn}\n")]
                ),
            )
        )
    steps.append(
        Step(step_id=len(steps) + 1, source="agent", message=f"Created /work/{name}. The task is complete.")
    )
    return Trajectory(
        session_id=f"session-{index}",
        trajectory_id=f"traj-{index:04d}",
        agent=Agent(name="mini-swe-agent", version="2.4.6", model_name="teacher-a", tool_definitions=[BASH_TOOL]),
        steps=steps,
    )


def store_trajectory(
    store: LocalStore, index: int, *, passed: bool = True, reward: float = 1.0, category: str = "data"
) -> TrajectoryVerified:
    trajectory = make_trajectory(index)
    tid = trajectory.trajectory_id or ""
    store.put_bytes(keys.trajectory_atif(tid), trajectory.model_dump_json(exclude_none=True).encode())
    record = VerificationRecord(
        trajectory_id=tid,
        task_id=f"task-{index:04d}",
        harness="mini-swe-agent",
        model="teacher-a",
        reward=reward,
        passed=passed,
    )
    put_json(store, keys.trajectory_verification(tid), record.model_dump(mode="json"))
    return TrajectoryVerified(
        trajectory_id=tid,
        task_id=record.task_id,
        skill_id=f"skill-{SKILLS[index % len(SKILLS)]}",
        harness=record.harness,
        model=record.model,
        passed=passed,
        reward=reward,
        atif_key=keys.trajectory_atif(tid),
        verification_key=keys.trajectory_verification(tid),
        category=category,
    )


def envelope(payload: TrajectoryVerified) -> Envelope:
    return Envelope.wrap(payload, producer="sampler", correlation_id="test")


def make_context(tmp_path: Path) -> ServiceContext:
    return ServiceContext(
        store=LocalStore(tmp_path / "store"),
        sandbox=UnusedSandbox(),  # type: ignore[arg-type]
        scratch=tmp_path / "scratch",
    )


class UnusedSandbox:
    """The trainer never runs sandboxed code; any use is a bug."""

    def __getattr__(self, name: str) -> object:
        raise AssertionError(f"trainer used the sandbox ({name})")
