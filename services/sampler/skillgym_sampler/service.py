"""The sampler service: ``env-validated`` in, one ``trajectory-verified`` per run out (plus a
``hardening-requested`` when solvers pass a task too easily)."""

from __future__ import annotations

import logging
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace

from skillgym_core.context import ServiceContext
from skillgym_core.contracts.events import NO_SOLUTION, Envelope, EnvValidated, Payload, TrajectoryVerified
from skillgym_core.contracts.task import TaskDir
from skillgym_core.contracts.topics import ENV_VALIDATED
from skillgym_core.envbuild import environment_provider

from skillgym_sampler.hardening import hardening_request
from skillgym_sampler.harness.base import RunSpec
from skillgym_sampler.harness.registry import make_harness
from skillgym_sampler.plan import SamplingPlan
from skillgym_sampler.settings import SamplerSettings
from skillgym_sampler.trial import TrialRunner

log = logging.getLogger(__name__)


class SamplerService:
    name = "sampler"
    concurrent = True  # events share no state but the sandbox and the store, both thread-safe
    consumes = (ENV_VALIDATED,)

    def __init__(self, ctx: ServiceContext, settings: SamplerSettings | None = None,
                 plan: SamplingPlan | None = None) -> None:
        self.ctx = ctx
        self.settings = settings or SamplerSettings()
        self.plan = plan or SamplingPlan.from_settings(self.settings)
        self.trials = TrialRunner(
            ctx,
            pass_threshold=self.settings.pass_threshold,
            command_timeout_s=self.settings.command_timeout_s,
            environment=environment_provider(self.settings, ctx.sandbox.name),
        )

    def handle(self, event: Envelope) -> Sequence[Payload]:
        validated: EnvValidated = event.payload_as(EnvValidated)
        unproven = not validated.valid and validated.reasons == [NO_SOLUTION] and self.settings.sample_unvalidated
        if not validated.valid and not unproven:
            return []
        with self.ctx.task_checkout(validated.package_key) as task:
            metadata = task.config().metadata
            specs = self.plan.trials(
                task_id=validated.task_id,
                skill_id=validated.skill_id,
                skill_name=metadata.skill_name,
                category=validated.category or metadata.category,
            )
            if unproven:  # no reference to play back; every run says its task was not proven
                specs = [replace(spec, task_validated=False) for spec in specs if spec.harness != "oracle"]
            runs = self.run_trials(task, specs)
        outputs: list[Payload] = list(runs)
        if unproven:
            return outputs  # an unproven verifier's pass rate says nothing a harder revision could use
        request = hardening_request(
            runs,
            task_id=validated.task_id,
            skill_id=validated.skill_id,
            revision=metadata.revision,
            threshold=self.settings.hardening_threshold,
            max_rounds=self.settings.max_hardening_rounds,
        )
        if request is not None:
            outputs.append(request)
        return outputs

    def run_trials(self, task: TaskDir, specs: Sequence[RunSpec]) -> list[TrajectoryVerified]:
        """Run every trial, at most ``concurrency`` at a time. A failing trial does not stop the
        others; the first failure is raised afterwards so the event is retried, and only the trials
        without a stored record run again."""
        concurrency = self.plan.concurrency or self.settings.concurrency

        def one(spec: RunSpec) -> TrajectoryVerified:
            harness = make_harness(
                spec,
                self.settings,
                variants=self.plan.prompt_variants,
                base_url=self.plan.base_url_for(spec.harness, spec.model),
            )
            return self.trials.run(task, spec, harness)

        with ThreadPoolExecutor(max_workers=concurrency, thread_name_prefix="trial") as pool:
            futures = [pool.submit(one, spec) for spec in specs]
        results: list[TrajectoryVerified] = []
        errors: list[BaseException] = []
        for spec, future in zip(specs, futures, strict=True):
            error = future.exception()
            if error is None:
                results.append(future.result())
            else:
                log.warning("trial failed", extra={"trajectory_id": spec.trajectory_id, "error": str(error)})
                errors.append(error)
        if errors:
            raise errors[0]
        return results
