"""Episodes: open one on a task in a fresh sandboxed workspace and a sandbox session on it (on
Kubernetes a pod kept warm for the episode), run its tool calls one at a time, finish it with the
trusted verifier, or let the janitor end it when its client went away. Every change is saved
before it is answered, so a restarted server resumes open episodes (and their sessions) by id."""

from __future__ import annotations

import logging
import secrets
import threading
import time
from collections.abc import Callable
from pathlib import Path

from skillgym_core import metrics as core_metrics
from skillgym_core.contracts.events import HardeningRequested, Payload
from skillgym_core.envbuild.provider import EnvironmentBuildError
from skillgym_core.errors import SandboxError, SkillGymError
from skillgym_core.ids import content_id
from skillgym_core.multistep import StepOutcome
from skillgym_core.rlenv.api import (
    EpisodeLimits,
    EpisodeStarted,
    EpisodeStatus,
    FinishResult,
    SampleSpec,
    StartEpisode,
    StepRequest,
    StepResult,
    tool_schemas,
)
from skillgym_core.sandbox.janitor import discard_tree
from skillgym_core.sandbox.session import SandboxSession
from skillgym_core.store.base import Store
from skillgym_core.taskrun import SKILLS_MOUNT, TaskRunner, VerifierOutcome

from skillgym_envserver import metrics
from skillgym_envserver.catalog import TaskCatalog, TaskEntry
from skillgym_envserver.curriculum import Curriculum
from skillgym_envserver.records import Episode, EpisodeRecords, ToolStep
from skillgym_envserver.rewards import components, reward
from skillgym_envserver.rollout import HARNESS, store_rollout
from skillgym_envserver.settings import EnvServerSettings
from skillgym_envserver.task_steps import StepNotReady, grade_step, rolled_up, start_step, verdict_record
from skillgym_envserver.tools import ToolLimits, run_call

log = logging.getLogger(__name__)
Publish = Callable[[Payload, str], None]


class EpisodeError(SkillGymError):
    status = 400
    retryable = False


class EpisodeNotFound(EpisodeError):
    reason = "episode_not_found"
    status = 404


class EpisodeClosed(EpisodeError):
    reason = "episode_closed"
    status = 409


class StepLimitReached(EpisodeError):
    reason = "step_limit_reached"
    status = 409


class SessionLost(EpisodeError):
    """The episode's sandbox session could not be opened, reached or closed; the episode ends."""

    reason = "session_lost"
    status = 503


class ServerBusy(EpisodeError):
    reason = "server_busy"
    status = 429
    retryable = True


class EpisodeManager:
    def __init__(self, settings: EnvServerSettings, store: Store, runner: TaskRunner, catalog: TaskCatalog,
                 curriculum: Curriculum, publish: Publish) -> None:
        self.settings = settings
        self.store = store
        self.runner = runner
        self.catalog = catalog
        self.curriculum = curriculum
        self.publish = publish
        self.records = EpisodeRecords(settings.state_dir / "episodes")
        self.workspaces = settings.state_dir / "workspaces"
        self._live: dict[str, Episode] = {}  # open ones, and ended ones until their event is out
        self._unpublished: dict[str, Payload] = {}
        self._locks: dict[str, threading.Lock] = {}
        self._sessions: dict[str, SandboxSession] = {}
        self._lock = threading.Lock()
        self._opening = 0
        self.tool_limits = ToolLimits(settings.step_timeout_s, settings.max_observation_chars,
                                      settings.max_read_bytes, settings.max_write_bytes)

    def restore(self) -> int:
        """Resume the open episodes a previous server left (their idle clock restarts now); count
        the finished ones into the curriculum. Returns how many were resumed."""
        resumed = 0
        for episode in self.records.load_all():
            if episode.status is EpisodeStatus.FINISHED and episode.result is not None:
                self.curriculum.record(episode.task_id, episode.result.passed)
            elif episode.status is EpisodeStatus.OPEN:
                if Path(episode.workspace).is_dir():
                    episode.last_active_at = time.time()
                    self._remember(episode)
                    resumed += 1
                else:
                    self._end(episode, EpisodeStatus.EXPIRED)
        metrics.OPEN_EPISODES.set(self.open_count())
        return resumed

    def open_count(self) -> int:
        with self._lock:
            return sum(e.status is EpisodeStatus.OPEN for e in self._live.values())

    def start(self, request: StartEpisode) -> EpisodeStarted:
        with self._lock:
            if sum(e.status is EpisodeStatus.OPEN for e in self._live.values()) + self._opening >= \
                    self.settings.max_open_episodes:
                metrics.BUSY_REJECTIONS.inc()
                raise ServerBusy(f"{self.settings.max_open_episodes} episodes are open; retry later",
                                 retry_after_s=self.settings.retry_after_s)
            self._opening += 1
        try:
            entry = (self.catalog.get(request.task_id) if request.task_id
                     else self.curriculum.choose(self.catalog.entries(), request.sample or SampleSpec()))
            episode_id = f"ep-{secrets.token_hex(12)}"
            parent = self.workspaces / episode_id
            parent.mkdir(parents=True)
            workspace = self.runner.fresh_workspace(entry.task, parent)
            step_names, instructions = [], []
            if self.runner.config(entry.task).is_multi_step:
                try:
                    name, text = start_step(self.runner, entry.task, 0, workspace)
                except StepNotReady:
                    discard_tree(parent)
                    raise
                step_names, instructions = [name], [text]
            now = time.time()
            skill_provided = request.skill_provided and entry.task.skills.is_dir()
            ttl_s = request.ttl_s or self.settings.episode_ttl_s
            max_steps = request.max_steps or self.settings.max_steps
            try:
                session = self.runner.open_agent_session(
                    entry.task, workspace, skills=entry.task.skills if skill_provided else None,
                    lifetime_s=max_steps * self.settings.step_timeout_s + ttl_s, idle_s=ttl_s,
                )  # fmt: skip
            except (SandboxError, EnvironmentBuildError) as exc:
                discard_tree(parent)
                raise SessionLost(f"no sandbox session for task {entry.task_id}: {exc}", task_id=entry.task_id) from exc
            episode = Episode(
                episode_id=episode_id, task_id=entry.task_id, skill_id=entry.skill_id, skill_name=entry.skill_name,
                category=entry.category, family=entry.family, skill_provided=skill_provided,
                reward_mode=request.reward, policy=request.policy,
                max_steps=max_steps, ttl_s=ttl_s, created_at=now, last_active_at=now,
                instruction=instructions[0] if instructions else entry.task.instruction(), workspace=str(workspace),
                session=session.record(), step_names=step_names, instructions=instructions,
                workdir=self.runner.workdir(entry.task),
            )  # fmt: skip
            self.records.save(episode)
            self._remember(episode)
            with self._lock:
                self._sessions[episode_id] = session
        finally:
            with self._lock:
                self._opening -= 1
        metrics.EPISODES_STARTED.labels(entry.family).inc()
        metrics.OPEN_EPISODES.set(self.open_count())
        return EpisodeStarted(
            episode_id=episode_id, task_id=entry.task_id, instruction=episode.instruction, tools=tool_schemas(episode.workdir),
            limits=EpisodeLimits(max_steps=episode.max_steps, step_timeout_s=self.settings.step_timeout_s,
                                 ttl_s=episode.ttl_s, expires_at=episode.expires_at),
            skill_provided=skill_provided, skills_path=SKILLS_MOUNT if skill_provided else None,
            workdir=episode.workdir, reward=episode.reward_mode, task_step=episode.current_step,
            task_steps=[s.name for s in self.runner.config(entry.task).steps],
        )  # fmt: skip

    def step(self, episode_id: str, request: StepRequest) -> StepResult:
        episode, lock = self._live_episode(episode_id)
        with lock:
            if episode.status is not EpisodeStatus.OPEN:
                raise EpisodeClosed(f"episode {episode_id} is {episode.status.value}", episode_id=episode_id)
            if len(episode.steps) >= episode.max_steps:
                raise StepLimitReached(f"episode {episode_id} used its {episode.max_steps} steps; finish it",
                                       episode_id=episode_id)
            session = self._session(episode)
            started = time.time()
            outcome = run_call(session, request.tool, request.arguments, self.tool_limits)
            took = time.time() - started
            episode.steps.append(ToolStep(tool=request.tool, arguments=request.arguments,
                                          observation=outcome.observation, exit_code=outcome.exit_code,
                                          malformed=outcome.malformed, started_at=started, duration_s=took,
                                          task_step=episode.current_step))
            episode.last_active_at = time.time()
            episode.step_result = None
            self.records.save(episode)
        metrics.STEP_SECONDS.labels(request.tool if not outcome.malformed else "malformed").observe(took)
        if outcome.malformed:
            metrics.MALFORMED_CALLS.inc()
        return StepResult(step=len(episode.steps), observation=outcome.observation, exit_code=outcome.exit_code,
                          malformed=outcome.malformed, truncated=outcome.truncated,
                          steps_left=episode.max_steps - len(episode.steps))

    def finish(self, episode_id: str) -> FinishResult:
        episode, lock = self._any_episode(episode_id)
        with lock:
            if episode.result is not None:
                return episode.result
            if episode.step_result is not None:
                return episode.step_result  # a retried finish: no tool call has come in since
            if episode.status is not EpisodeStatus.OPEN:
                raise EpisodeClosed(f"episode {episode_id} is {episode.status.value}", episode_id=episode_id)
            entry = self.catalog.get(episode.task_id)
            try:
                self._session(episode).close(keep_files=True)  # the workspace as the agent left it, on the host
            except SandboxError as exc:
                self._end(episode, EpisodeStatus.EXPIRED)
                raise SessionLost(f"episode {episode_id}: its files could not be collected: {exc}",
                                  episode_id=episode_id) from exc  # fmt: skip
            started = time.perf_counter()
            if episode.step_names:
                graded = self._finish_task_step(episode, entry)
                if isinstance(graded, FinishResult):
                    return graded
                outcome = graded
            else:
                outcome = self.runner.verify(entry.task, Path(episode.workspace))
            verify_s = time.perf_counter() - started
            parts = components(outcome, episode.malformed_calls, self.settings.format_penalty,
                               self.settings.format_penalty_cap)
            value = reward(episode.reward_mode, parts)
            trajectory_id = content_id("traj", {"episode_id": episode.episode_id, "task_id": episode.task_id})
            event = store_rollout(self.store, episode, trajectory_id, outcome, value, verify_s)
            episode.result = FinishResult(
                episode_id=episode_id, task_id=episode.task_id, trajectory_id=trajectory_id, reward=value,
                passed=outcome.passed, reward_mode=episode.reward_mode, components=parts,
                rubric={k: v for k, v in outcome.rewards.items() if k != "reward"},
                failure_type=outcome.failure_type, steps=len(episode.steps), malformed_calls=episode.malformed_calls,
                task_step=episode.current_step, task_steps=list(episode.step_verdicts) or None,
            )  # fmt: skip
            self._end(episode, EpisodeStatus.FINISHED)
            with self._lock:
                self._unpublished[episode_id] = event
        metrics.VERIFY_SECONDS.observe(verify_s)
        metrics.EPISODE_REWARD.labels(episode.reward_mode).observe(value)
        metrics.EPISODE_STEPS.observe(len(episode.steps))
        core_metrics.RUNS_FINISHED.labels(HARNESS, episode.policy, episode.category or "unknown",
                                          str(outcome.passed).lower()).inc()
        stats = self.curriculum.record(episode.task_id, outcome.passed)
        self._request_hardening(episode)
        log.info("episode finished", extra={"episode_id": episode_id, "task_id": episode.task_id,
                                            "reward": value, "pass_rate": stats.pass_rate})
        self.flush_events()
        return episode.result

    def _finish_task_step(self, episode: Episode, entry: TaskEntry) -> FinishResult | VerifierOutcome:
        """Grade a multi-step task's current step; open the next one when the step met its gate
        and one remains (the result then says so), else the episode's rolled-up verdict."""
        config = self.runner.config(entry.task)
        workspace = Path(episode.workspace)
        name = episode.current_step or config.steps[0].name
        step = grade_step(self.runner, entry.task, name, workspace, self.workspaces / episode.episode_id)
        episode.step_verdicts.append(verdict_record(step))
        index = len(episode.step_names)
        if not step.ends_trial and index < len(config.steps):
            try:
                next_name, text = start_step(self.runner, entry.task, index, workspace)
                session = self._reopen(episode, fresh=True)
            except (StepNotReady, SandboxError, EnvironmentBuildError) as exc:
                failure = exc.details.get("failure", exc.reason) if isinstance(exc, SkillGymError) else "session_lost"
                episode.step_verdicts.append({"name": config.steps[index].name, "reward": 0.0, "rewards": {},
                                              "passed": False, "failure_type": failure, "below_min_reward": False,
                                              "error": failure})  # fmt: skip
            else:
                with self._lock:
                    self._sessions[episode.episode_id] = session
                episode.session, episode.instruction = session.record(), text
                episode.step_names.append(next_name)
                episode.instructions.append(text)
                episode.last_active_at = time.time()
                episode.step_result = self._step_result(episode, step, next_name, text)
                self.records.save(episode)
                return episode.step_result
        return rolled_up(config, episode.step_verdicts, step.verifier, self.runner.pass_threshold)

    def _step_result(self, episode: Episode, step: StepOutcome, next_name: str, text: str) -> FinishResult:
        assert step.verifier is not None
        parts = components(step.verifier, episode.malformed_calls, self.settings.format_penalty,
                           self.settings.format_penalty_cap)  # fmt: skip
        return FinishResult(
            episode_id=episode.episode_id, task_id=episode.task_id,
            trajectory_id=content_id("traj", {"episode_id": episode.episode_id, "task_id": episode.task_id}),
            reward=reward(episode.reward_mode, parts), passed=step.verifier.passed, reward_mode=episode.reward_mode,
            components=parts, rubric={k: v for k, v in step.verifier.rewards.items() if k != "reward"},
            failure_type=step.verifier.failure_type, steps=len(episode.steps), malformed_calls=episode.malformed_calls,
            done=False, task_step=step.name, next_step=next_name, next_instruction=text,
            task_steps=list(episode.step_verdicts),
        )  # fmt: skip

    def delete(self, episode_id: str) -> None:
        episode, lock = self._any_episode(episode_id)
        with lock:
            if episode.status is EpisodeStatus.OPEN:
                self._end(episode, EpisodeStatus.DELETED)
        self._forget_if_settled(episode_id)

    def sweep(self, now: float | None = None) -> int:
        """End open episodes idle past their TTL (not one mid-step), retry unpublished events,
        drop settled episodes from memory. Returns how many episodes expired."""
        now = time.time() if now is None else now
        with self._lock:
            candidates = [(e, self._locks[e.episode_id]) for e in self._live.values()
                          if e.status is EpisodeStatus.OPEN and now > e.expires_at]
        expired = 0
        for episode, lock in candidates:
            if lock.acquire(blocking=False):
                try:
                    if episode.status is EpisodeStatus.OPEN and now > episode.expires_at:
                        self._end(episode, EpisodeStatus.EXPIRED)
                        expired += 1
                finally:
                    lock.release()
                self._forget_if_settled(episode.episode_id)
        self.flush_events()
        return expired

    def flush_events(self) -> None:
        with self._lock:
            pending = list(self._unpublished.items())
        for episode_id, event in pending:
            try:
                self.publish(event, episode_id)
            except Exception as exc:  # a broker outage must not lose the rollout: retried by the janitor
                metrics.PUBLISH_FAILURES.inc()
                log.warning("publish failed; will retry", extra={"episode_id": episode_id, "error": str(exc)})
                continue
            with self._lock:
                self._unpublished.pop(episode_id, None)
            self._forget_if_settled(episode_id)

    def _request_hardening(self, episode: Episode) -> None:
        saturated = self.curriculum.claim_hardening(episode.task_id, self.settings.hardening_pass_rate)
        if saturated is None:
            return
        revision = self.catalog.get(episode.task_id).task.config().metadata.revision
        request = HardeningRequested(task_id=episode.task_id, skill_id=episode.skill_id,
                                     pass_rate=saturated.pass_rate, round=revision + 1)
        with self._lock:
            self._unpublished[f"harden-{episode.task_id}"] = request

    def state(self, episode_id: str) -> Episode:
        return self._any_episode(episode_id)[0]

    def _session(self, episode: Episode) -> SandboxSession:
        """The episode's live session, or the one its record names (after a restart)."""
        with self._lock:
            session = self._sessions.get(episode.episode_id)
        if session is not None:
            return session
        try:
            session = self._reopen(episode)
        except (SandboxError, EnvironmentBuildError) as exc:
            self._end(episode, EpisodeStatus.EXPIRED)
            raise SessionLost(f"episode {episode.episode_id}: its sandbox session is gone: {exc}",
                              episode_id=episode.episode_id) from exc  # fmt: skip
        with self._lock:
            self._sessions[episode.episode_id] = session
        return session

    def _reopen(self, episode: Episode, *, fresh: bool = False) -> SandboxSession:
        """The session the episode's record names, or (``fresh``) a new one on its workspace."""
        entry = self.catalog.get(episode.task_id)
        return self.runner.open_agent_session(
            entry.task, Path(episode.workspace), skills=entry.task.skills if episode.skill_provided else None,
            lifetime_s=episode.max_steps * self.settings.step_timeout_s + episode.ttl_s, idle_s=episode.ttl_s,
            record=None if fresh else episode.session or {},
        )  # fmt: skip

    def _close_discarding(self, episode: Episode, session: SandboxSession | None) -> None:
        """End an unfinished episode's session, its files unwanted: a warm pod is not left running."""
        try:
            if session is None and (episode.session or {}).get("kind") == "kubernetes":
                session = self._reopen(episode)
            if session is not None:
                session.close(keep_files=False)
        except Exception as exc:  # the pod still goes at its idle limit
            log.warning("closing a session failed", extra={"episode_id": episode.episode_id, "error": str(exc)})

    def _end(self, episode: Episode, status: EpisodeStatus) -> None:
        with self._lock:
            session = self._sessions.pop(episode.episode_id, None)
        if status is not EpisodeStatus.FINISHED:
            self._close_discarding(episode, session)
        episode.status = status
        episode.last_active_at = time.time()
        self.records.save(episode)
        discard_tree(self.workspaces / episode.episode_id)
        metrics.EPISODES_ENDED.labels(status.value).inc()
        metrics.OPEN_EPISODES.set(self.open_count())

    def _remember(self, episode: Episode) -> None:
        with self._lock:
            self._live[episode.episode_id] = episode
            self._locks.setdefault(episode.episode_id, threading.Lock())

    def _forget_if_settled(self, episode_id: str) -> None:
        with self._lock:
            episode = self._live.get(episode_id)
            if episode is not None and episode.status is not EpisodeStatus.OPEN and episode_id not in self._unpublished:
                self._live.pop(episode_id, None)
                self._locks.pop(episode_id, None)

    def _live_episode(self, episode_id: str) -> tuple[Episode, threading.Lock]:
        with self._lock:
            if episode_id in self._live:
                return self._live[episode_id], self._locks[episode_id]
        return self._any_episode(episode_id)

    def _any_episode(self, episode_id: str) -> tuple[Episode, threading.Lock]:
        with self._lock:
            if episode_id in self._live:
                return self._live[episode_id], self._locks[episode_id]
        path = self.records.path(episode_id)
        if not episode_id.startswith("ep-") or "/" in episode_id or not path.is_file():
            raise EpisodeNotFound(f"no episode {episode_id}", episode_id=episode_id)
        return Episode.model_validate_json(path.read_bytes()), threading.Lock()
