"""A TRL ``environment_factory`` environment over the environment server's episode API.

TRL turns every public method of the class, except ``reset`` and ``get_reward``, into a tool the
model may call, with the schema read from its type hints and docstring: so ``bash``,
``read_file`` and ``write_file`` are the only public methods, and everything else is private.
One instance plays one rollout at a time; TRL resets and reuses instances across batches.

The model's text only ever travels to the server as tool-call arguments; it runs inside the
episode's sandbox there, never on this host."""

from __future__ import annotations

from typing import Any, Protocol

from pydantic import BaseModel, Field
from skillgym_core.rlenv.api import EpisodeStarted, FinishResult, RewardMode, StartEpisode, StepResult
from skillgym_core.rlenv.client import EnvClient, EnvServerError

from skillgym_trainer.rl.episodes import EpisodeLog, EpisodeRecord


class EpisodeClient(Protocol):
    """The part of ``EnvClient`` an environment uses."""

    def start(self, request: StartEpisode | None = None, **fields: Any) -> EpisodeStarted: ...

    def step(self, episode_id: str, tool: str, arguments: dict[str, Any] | str) -> StepResult: ...

    def finish(self, episode_id: str) -> FinishResult: ...

    def delete(self, episode_id: str) -> None: ...


class EpisodeSettings(BaseModel):
    """How each episode is opened, unless the dataset row says otherwise (``skill_provided``)."""

    reward: RewardMode = "binary"
    skill_provided: bool = True
    policy: str = Field("unnamed-policy", max_length=200)
    max_steps: int | None = Field(None, ge=1, le=1000)


NO_EPISODE = "error: no episode is open, so the tools cannot be used; give your final answer."
STEP_LIMIT = "error: this episode has no steps left; no more tool calls are possible. Give your final answer."


class SkillGymEnvironment:
    def __init__(self, client: str | EpisodeClient, *, reward: RewardMode = "binary", skill_provided: bool = True,
                 policy: str = "unnamed-policy", max_steps: int | None = None,
                 log: EpisodeLog | None = None) -> None:  # fmt: skip
        self._client: EpisodeClient = EnvClient(client) if isinstance(client, str) else client
        self._settings = EpisodeSettings(reward=reward, skill_provided=skill_provided, policy=policy,
                                         max_steps=max_steps)  # fmt: skip
        self._log = log if log is not None else EpisodeLog()
        self._episode: EpisodeStarted | None = None
        self._record: EpisodeRecord | None = None
        self._reward: float | None = None
        self._steps_left: int | None = None

    @property
    def episode_log(self) -> EpisodeLog:
        return self._log

    def reset(self, **example: Any) -> str:
        """Open an episode on the row's ``task_id``; the instruction is appended to the prompt."""
        self._abandon_unscored_episode()
        task_id = example.get("task_id")
        if not isinstance(task_id, str) or not task_id:
            raise ValueError(f"a dataset row needs a task_id, got {task_id!r}")
        skill_provided = example.get("skill_provided")
        request = StartEpisode(
            task_id=task_id,
            skill_provided=self._settings.skill_provided if skill_provided is None else bool(skill_provided),
            reward=self._settings.reward,
            policy=self._settings.policy,
            max_steps=self._settings.max_steps,
        )
        self._record = EpisodeRecord(task_id=task_id)
        self._reward = None
        try:
            self._episode = self._client.start(request)
        except EnvServerError as exc:
            self._record.error = f"the episode could not start: {exc}"
            return "\n\n" + NO_EPISODE
        self._record.episode_id = self._episode.episode_id
        self._steps_left = self._episode.limits.max_steps
        return "\n\n" + self._task_text(self._episode)

    def bash(self, command: str) -> str:
        """Run a shell command in the task's workspace (/app) and return its output and exit code.

        Args:
            command: The shell command to run, for example `ls -la` or `cat notes.txt`.
        """
        result = self._step("bash", {"command": command})
        if isinstance(result, str):
            return result
        text, exit_note = result.observation, f"[exit code {result.exit_code}]"
        if result.exit_code is not None and exit_note not in text:
            text = f"{text.rstrip()}\n{exit_note}"
        return _with_notes(result, text)

    def read_file(self, path: str) -> str:
        """Return the text of a file (at most 64 KiB); a relative path is inside the workspace (/app).

        Args:
            path: The file to read, for example `data.csv` or `/app/data.csv`.
        """
        result = self._step("read_file", {"path": path})
        return result if isinstance(result, str) else _with_notes(result, result.observation)

    def write_file(self, path: str, content: str) -> str:
        """Write text to a file, creating its folders; a relative path is inside the workspace (/app).

        Args:
            path: The file to write, for example `total.txt`.
            content: The whole new text of the file.
        """
        result = self._step("write_file", {"path": path, "content": content})
        return result if isinstance(result, str) else _with_notes(result, result.observation)

    def get_reward(self) -> float | None:
        """Finish the episode once and return the verifier's reward. ``None`` when the server failed
        the episode: TRL leaves such a rollout unscored instead of counting it as a reward of 0."""
        record = self._record
        if record is None:
            return self._reward
        if self._episode is not None:
            try:
                result = self._client.finish(self._episode.episode_id)
                # a multi-step task's later steps: the rollout has ended, so they are graded as they stand
                while not result.done:
                    result = self._client.finish(self._episode.episode_id)
            except EnvServerError as exc:
                record.error = f"the episode could not be finished: {exc}"
            else:
                self._reward = result.reward
                record.reward = result.reward
                record.passed = result.passed
                record.components = dict(result.components)
                record.trajectory_id = result.trajectory_id
                record.steps = result.steps
                record.malformed_calls = result.malformed_calls
            self._episode = None
        self._log.add(record)
        self._record = None
        return self._reward

    def _step(self, tool: str, arguments: dict[str, Any]) -> StepResult | str:
        episode = self._episode
        if episode is None:
            return NO_EPISODE
        if self._steps_left == 0:
            return STEP_LIMIT
        try:
            result = self._client.step(episode.episode_id, tool, arguments)
        except EnvServerError as exc:
            if exc.status is not None and 400 <= exc.status < 500 and exc.status != 429:
                return f"error: the environment refused the call: {_reason(exc)}"
            self._log.step_failed(episode.episode_id, str(exc))
            return f"error: the environment could not run the call: {exc}"
        self._steps_left = result.steps_left
        return result

    def _abandon_unscored_episode(self) -> None:
        """A rollout whose reward was never asked for: its episode is deleted, and it is logged as
        failed, since it produced no reward."""
        record, episode = self._record, self._episode
        self._episode, self._record = None, None
        if record is None:
            return
        if episode is not None:
            try:
                self._client.delete(episode.episode_id)
            except EnvServerError as exc:
                record.error = f"the unscored episode could not be deleted: {exc}"
        record.error = record.error or "the rollout ended without its reward being taken"
        self._log.add(record)

    @staticmethod
    def _task_text(episode: EpisodeStarted) -> str:
        text = episode.instruction.strip()
        if episode.workdir != "/app" and episode.workdir not in text:
            text += f"\n\nThe task's workspace is {episode.workdir}."
        if episode.skill_provided and episode.skills_path and episode.skills_path not in text:
            text += f"\n\nSkills that may help are in {episode.skills_path}."
        return text


def _reason(exc: EnvServerError) -> str:
    detail = exc.detail
    if isinstance(detail, dict) and detail.get("message"):
        return str(detail["message"])
    return str(detail or exc)


def _with_notes(result: StepResult, text: str) -> str:
    if result.truncated:
        text += "\n[output truncated]"
    if result.steps_left == 0:
        text += "\n[that was the last tool call this episode allows]"
    return text
