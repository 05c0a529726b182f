"""A finished episode as the rest of SkillGym sees any run: an ATIF trajectory and a verification
record in the store, and a ``trajectory-verified`` event, tagged as an RL rollout (harness
``rl-env``, prompt variant ``rl-rollout``, ``extra.rollout`` in the trajectory) so datasets and
reports can tell them from the sampler's runs."""

from __future__ import annotations

from datetime import UTC, datetime

from skillgym_core import keys
from skillgym_core.contracts.atif import (
    Agent,
    FinalMetrics,
    Observation,
    ObservationResult,
    Step,
    ToolCall,
    Trajectory,
    VerificationRecord,
)
from skillgym_core.contracts.events import TrajectoryVerified
from skillgym_core.provenance import with_source
from skillgym_core.rlenv.api import tool_schemas
from skillgym_core.store.base import Store, put_json
from skillgym_core.taskrun import VerifierOutcome

from skillgym_envserver.records import Episode

HARNESS = "rl-env"
PROMPT_VARIANT = "rl-rollout"
AGENT_VERSION = "1"


def _when(timestamp: float) -> str:
    return datetime.fromtimestamp(timestamp, UTC).isoformat()


def trajectory(episode: Episode, trajectory_id: str, rl_reward: float) -> Trajectory:
    """The episode's calls in order; a multi-step task's next instruction is a user message where
    its step's first call begins."""
    first = episode.instructions[0] if episode.instructions else episode.instruction
    steps = [Step(step_id=1, timestamp=_when(episode.created_at), source="user", message=first)]
    shown = episode.step_names[:1]
    for number, call in enumerate(episode.steps, start=1):
        if call.task_step is not None and call.task_step not in shown and call.task_step in episode.step_names:
            shown.append(call.task_step)
            steps.append(Step(step_id=len(steps) + 1, timestamp=_when(call.started_at), source="user",
                              message=episode.instructions[episode.step_names.index(call.task_step)],
                              extra={"task_step": call.task_step}))  # fmt: skip
        call_id = f"call-{number}"
        arguments = call.arguments if isinstance(call.arguments, dict) else {"raw": call.arguments}
        steps.append(Step(
            step_id=len(steps) + 1, timestamp=_when(call.started_at), source="agent", message="",
            model_name=episode.policy,
            tool_calls=[ToolCall(tool_call_id=call_id, function_name=call.tool, arguments=arguments,
                                 extra={"malformed": True} if call.malformed else None)],
            observation=Observation(results=[ObservationResult(source_call_id=call_id, content=call.observation)]),
        ))  # fmt: skip
    made = Trajectory(
        session_id=episode.episode_id, trajectory_id=trajectory_id,
        agent=Agent(name=HARNESS, version=AGENT_VERSION, model_name=episode.policy, tool_definitions=tool_schemas(episode.workdir)),
        steps=steps, final_metrics=FinalMetrics(total_steps=len(steps)),
        extra={"rollout": "rl", "episode_id": episode.episode_id, "reward_mode": episode.reward_mode,
               "rl_reward": rl_reward},
    )  # fmt: skip
    return with_source(made, "model")


def store_rollout(
    store: Store, episode: Episode, trajectory_id: str, outcome: VerifierOutcome, reward: float, verify_s: float
) -> TrajectoryVerified:
    """Stored with the verifier's own reward (as every run is); the reward the client trains on,
    shaped by the episode's reward mode, travels in the trajectory's ``extra.rl_reward``."""
    made = trajectory(episode, trajectory_id, reward)
    record = VerificationRecord(
        trajectory_id=trajectory_id, task_id=episode.task_id, harness=HARNESS, model=episode.policy,
        prompt_variant=PROMPT_VARIANT, skill_provided=episode.skill_provided, reward=outcome.reward,
        rewards=outcome.rewards, passed=outcome.passed, failure_type=outcome.failure_type,
        verifier_stdout=outcome.result.stdout[-4000:] if outcome.result else "",
        verifier_stderr=outcome.result.stderr[-4000:] if outcome.result else "",
        timings={"episode_s": round(episode.last_active_at - episode.created_at, 4), "verify_s": round(verify_s, 4)},
        tool_calls=len(episode.steps), steps=len(made.steps), skill_id=episode.skill_id,
        skill_name=episode.skill_name, category=episode.category,
    )  # fmt: skip
    store.put_bytes(keys.trajectory_atif(trajectory_id), made.model_dump_json(exclude_none=True, indent=2).encode(),
                    "application/json")
    put_json(store, keys.trajectory_verification(trajectory_id), record.model_dump(mode="json"))
    return TrajectoryVerified(
        trajectory_id=trajectory_id, task_id=episode.task_id, skill_id=episode.skill_id, harness=HARNESS,
        model=episode.policy, prompt_variant=PROMPT_VARIANT, skill_provided=episode.skill_provided,
        passed=outcome.passed, reward=outcome.reward, failure_type=outcome.failure_type,
        atif_key=keys.trajectory_atif(trajectory_id), verification_key=keys.trajectory_verification(trajectory_id),
        category=episode.category,
    )  # fmt: skip
