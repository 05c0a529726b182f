"""Trajectories shaped like the sampler's output, and a store filled with them."""

from __future__ import annotations

import random
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

WORDS = [
    "alpha",
    "bravo",
    "column",
    "delta",
    "export",
    "filter",
    "gamma",
    "header",
    "index",
    "join",
    "kernel",
    "ledger",
    "merge",
    "number",
    "offset",
    "parse",
    "query",
    "range",
    "schema",
    "table",
    "unique",
    "value",
    "window",
    "yield",
    "zone",
    "sort",
    "group",
    "pivot",
    "chart",
    "label",
    "axis",
    "scale",
    "total",
    "average",
    "median",
    "round",
    "format",
    "encode",
]
FILES = ["report.csv", "notes.md", "data.json", "summary.txt", "config.yaml", "plot.py"]
SKILLS = ["csv-report", "markdown-notes", "json-clean", "text-summary", "yaml-config", "plot-maker"]


def make_trajectory(
    index: int,
    *,
    turns: int = 2,
    reasoning: bool = True,
    trajectory_id: str | None = None,
    final_note: str = "",
) -> Trajectory:
    name = FILES[index % len(FILES)]
    skill = SKILLS[index % len(SKILLS)]
    rng = random.Random(index)

    def phrase(n: int) -> str:
        return " ".join(rng.choice(WORDS) for _ in range(n))

    steps = [
        Step(step_id=1, source="system", message="You are a careful terminal agent. Use the bash tool."),
        Step(step_id=2, source="user", message=f"Use the {skill} skill to produce {name} in /work: {phrase(12)}."),
    ]
    for turn in range(turns):
        call_id = f"call_{index}_{turn}"
        command = f"cat /work/skills/{skill}/SKILL.md" if turn == 0 else f"python make.py --out {name}"
        steps.append(
            Step(
                step_id=len(steps) + 1,
                source="agent",
                message=f"Step {turn + 1}: {phrase(6)}; I will run `{command}`.",
                reasoning_content=f"The task needs {name}; turn {turn} checks progress." if reasoning else None,
                tool_calls=[ToolCall(tool_call_id=call_id, function_name="bash", arguments={"command": command})],
                observation=Observation(
                    results=[ObservationResult(source_call_id=call_id, content=f"ok: {name} step {turn} {phrase(8)}\n")]
                ),
            )
        )
    steps.append(
        Step(step_id=len(steps) + 1, source="agent", message=f"Created /work/{name}. The task is complete.{final_note}")
    )
    return Trajectory(
        session_id=f"session-{index}",
        trajectory_id=trajectory_id or f"traj-{index:04d}",
        agent=Agent(name="mini-swe-agent", version="2.4.6", model_name="teacher-a", tool_definitions=[BASH_TOOL]),
        steps=steps,
    )


def store_trajectory(
    store: LocalStore,
    index: int,
    *,
    passed: bool = True,
    reward: float = 1.0,
    category: str = "data",
    harness: str = "mini-swe-agent",
    model: str = "teacher-a",
    content: int | None = None,
    turns: int = 2,
    final_note: str = "",
    task: str | None = None,
) -> TrajectoryVerified:
    """Store ATIF + verification record for run ``index``; ``content`` reuses another run's
    conversation (a duplicate), ``task`` overrides the task id."""
    source = index if content is None else content
    trajectory = make_trajectory(source, turns=turns, trajectory_id=f"traj-{index:04d}", final_note=final_note)
    tid = trajectory.trajectory_id or ""
    store.put_bytes(keys.trajectory_atif(tid), trajectory.model_dump_json(exclude_none=True).encode())
    record = VerificationRecord(
        trajectory_id=tid,
        task_id=task or f"task-{source:04d}",
        harness=harness,
        model=model,
        reward=reward,
        passed=passed,
    )
    put_json(store, keys.trajectory_verification(tid), record.model_dump(mode="json"))
    return TrajectoryVerified(
        trajectory_id=tid,
        task_id=record.task_id,
        skill_id=f"skill-{SKILLS[source % len(SKILLS)]}",
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


CATEGORIES = {skill: ("data" if i % 2 == 0 else "docs") for i, skill in enumerate(SKILLS)}


def populate(store: LocalStore) -> list[TrajectoryVerified]:
    """A store as the pipeline leaves it: 12 passed runs over 6 skills and 2 configurations,
    one exact duplicate, one near duplicate, one failed and one low-reward run. Each event
    is recorded by the trainer and each task has a validation report with its label."""
    from skillgym_trainer.service import TrainerService
    from skillgym_trainer.settings import TrainerSettings

    events = []
    for index in range(12):
        skill = SKILLS[index % len(SKILLS)]
        events.append(
            store_trajectory(
                store,
                index,
                category=CATEGORIES[skill],
                model="teacher-a" if index % 3 else "teacher-b",
                turns=2 + index % 3,
            )
        )
    events.append(store_trajectory(store, 20, content=0, turns=2, reward=0.95, category=CATEGORIES[SKILLS[0]]))
    events.append(
        store_trajectory(
            store, 21, content=1, turns=3, reward=0.92, final_note=" Done.", category=CATEGORIES[SKILLS[1]]
        )
    )
    events.append(store_trajectory(store, 22, passed=False, reward=0.0))
    events.append(store_trajectory(store, 23, reward=0.5))
    service = TrainerService(
        ServiceContext(store=store, sandbox=UnusedSandbox(), scratch=store.root.parent / "scratch"),  # type: ignore[arg-type]
        TrainerSettings(min_reward=0.0),
    )
    for event in events:
        if event.passed:
            service.record(event)
        label = "skill-dep" if int(event.task_id.split("-")[1]) % 2 == 0 else "verifier-passed"
        put_json(store, keys.task_validation(event.task_id), {"task_id": event.task_id, "valid": True, "label": label})
    return events
