"""Embedded mode: every service in one process over the in-memory bus, a local store under the
output directory and the local sandbox. Same service code as the distributed mode. The bus ends
with the run; its records are kept below the output directory: the events in ``events/``, the
dead letters in ``dlq/``."""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from skillgym_core.bus.dlq import RUN_LOG_DIR, write_dead_letter_log
from skillgym_core.bus.memory import MemoryBus
from skillgym_core.bus.record_log import EVENT_LOG_DIR, write_record_log
from skillgym_core.context import ServiceContext
from skillgym_core.contracts.cloudevents import publish_event, read_event
from skillgym_core.contracts.events import Envelope
from skillgym_core.contracts.topics import ALL_TOPICS, dlq
from skillgym_core.errors import SkillGymError
from skillgym_core.sandbox.local import LocalSandbox
from skillgym_core.service import Worker
from skillgym_core.settings import CommonSettings
from skillgym_core.store.local import LocalStore

from skillgym.local_model import local_endpoint
from skillgym.summary import read_build_reports, skill_dependence, summarize, write_pipeline_funnel
from skillgym.task_variety import instruction_variety
from skillgym.wiring import PIPELINE_ORDER, create_service, environment

Progress = Callable[[str, dict[str, int]], None]
LLM_REQUIRED = "llm_required"  # the builder's failure reason under require_llm
# An endpoint a one-shot run needs (a baseline model, say) that stays down this long costs the
# event a dead letter, which the run's DLQ log keeps, rather than stalling the run for good.
TRANSIENT_PATIENCE_S = 60.0


@dataclass
class EmbeddedOptions:
    llm_base_url: str | None = None
    llm_model: str = "default"
    builder_llm_base_url: str | None = None
    builder_llm_model: str | None = None
    train: bool = True
    require_llm: bool = False  # a builder-agent failure fails the run instead of falling back
    local_model: str | None = None  # served for the run when no llm_base_url is given (skillgym.local_model)
    extra_env: dict[str, str] = field(default_factory=dict)

    def env(self) -> dict[str, str | None]:
        overrides: dict[str, str | None] = {
            "SKILLGYM_SAMPLER_LLM_BASE_URL": self.llm_base_url,
            "SKILLGYM_SAMPLER_LLM_MODEL": self.llm_model if self.llm_base_url else None,
            "SKILLGYM_BUILDER_LLM_BASE_URL": self.builder_llm_base_url,
            "SKILLGYM_BUS": "memory",
            "SKILLGYM_STORE": "local",
            "SKILLGYM_SANDBOX": "local",
        }
        if self.builder_llm_model:
            overrides["SKILLGYM_BUILDER_LLM_MODEL"] = self.builder_llm_model
        if self.require_llm:
            overrides["SKILLGYM_REQUIRE_LLM"] = "true"
        overrides.update(self.extra_env)
        return overrides


@dataclass
class EmbeddedResult:
    summary: dict[str, Any]
    out_dir: Path
    dead_letters: list[dict[str, Any]]
    seconds: float


def run_pipeline(
    sources: Sequence[Path],
    out_dir: Path,
    options: EmbeddedOptions | None = None,
    progress: Progress | None = None,
) -> EmbeddedResult:
    from skillgym_ingest.pipeline import ingest, write_outputs

    options = options or EmbeddedOptions()
    if options.local_model and not options.llm_base_url:
        with local_endpoint(options.local_model) as endpoint:
            local = replace(options, local_model=None, extra_env={**endpoint.settings(), **options.extra_env})
            served = run_pipeline(sources, out_dir, local, progress)
        served.summary["local_model"] = endpoint.name
        (served.out_dir / "summary.json").write_text(json.dumps(served.summary, indent=2, default=str))
        return served
    started = time.perf_counter()
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    store = LocalStore(out_dir / "store")
    bus = MemoryBus()
    bus.ensure_topics(ALL_TOPICS)
    notify = progress or (lambda stage, counts: None)

    with environment(options.env()):
        ctx = ServiceContext(store=store, sandbox=LocalSandbox(), scratch=out_dir / "scratch")
        notify("ingest", {})
        result = ingest(list(sources), store=store)
        write_outputs(result, out_dir / "ingest")
        settings = CommonSettings()
        for payload in result.events:
            publish_event(bus, Envelope.wrap(payload, producer="ingest", correlation_id=out_dir.name), settings.event_mode)
        services = {name: create_service(name, ctx) for name in PIPELINE_ORDER}
        concurrency = settings.worker_concurrency
        workers = [Worker(services[name], bus, store, backoff_s=0.05, transient_patience_s=TRANSIENT_PATIENCE_S,
                          concurrency=concurrency) for name in PIPELINE_ORDER]
        while True:
            moved = 0
            for worker in workers:
                count = worker.run_once(timeout_s=0, max_records=worker.concurrency)
                moved += count
                if count:
                    notify(worker.service.name, _counts(bus))
            if not moved:
                break
        trainer = services["trainer"]
        if options.train:
            notify("trainer", _counts(bus))
            completed = trainer.train_now()  # type: ignore[attr-defined]
            if completed is not None:
                event = Envelope.wrap(completed, producer="trainer", correlation_id=out_dir.name)
                publish_event(bus, event, settings.event_mode)

    write_dead_letter_log(out_dir / RUN_LOG_DIR, (record for topic in ALL_TOPICS for record in bus.records(dlq(topic))))
    records = [record for topic in ALL_TOPICS for record in bus.records(topic)]
    write_record_log(out_dir / EVENT_LOG_DIR, records)
    events = [read_event(record) for record in records]
    accepted = sum(1 for record in result.records if record.accepted)
    build_reports = list(read_build_reports(store))
    summary = summarize(events, skills_seen=len(result.records), skills_accepted=accepted,
                        build_reports=build_reports)
    dead = [record for worker in workers for record in worker.stats.failures]
    summary["dead_letters"] = len(dead)
    summary["skill_dependence"] = skill_dependence(store, events)
    summary["instruction_variety"] = instruction_variety(store, events)
    summary["seconds"] = round(time.perf_counter() - started, 2)
    (out_dir / "summary.json").write_text(json.dumps(summary, indent=2, default=str))
    write_pipeline_funnel(out_dir / "funnel.json", result.funnel, summary)
    _raise_if_llm_was_required(build_reports, dead)
    return EmbeddedResult(summary=summary, out_dir=out_dir, dead_letters=dead, seconds=summary["seconds"])


def _raise_if_llm_was_required(build_reports: list[dict[str, Any]], dead: list[dict[str, Any]]) -> None:
    """With require_llm, a build the builder agent failed fails the run (after the summary is
    written): skills it left without a task, and revisions it dead-lettered."""
    failures = [r for r in build_reports if r.get("skip_reason") == LLM_REQUIRED]
    failures += [d["error"] for d in dead if isinstance(d.get("error"), dict) and d["error"].get("reason") == LLM_REQUIRED]
    if failures:
        first = failures[0]
        raise SkillGymError(
            f"{len(failures)} build(s) failed under require_llm; first: {first.get('message', '')}",
            reason=LLM_REQUIRED, failures=len(failures))


def _counts(bus: MemoryBus) -> dict[str, int]:
    return {topic: len(bus.records(topic)) for topic in ALL_TOPICS}
