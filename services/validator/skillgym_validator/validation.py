"""Validating one task: the validity gate, then (when a baseline endpoint is configured) the
skill-dependence contrast. Produces the JSON report the service stores and the CLI prints."""

from __future__ import annotations

import tempfile
import time
from collections import Counter
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from skillgym_core.contracts.task import TaskDir
from skillgym_core.envbuild import environment_provider
from skillgym_core.errors import MalformedModelOutput, TransientError
from skillgym_core.llm import LLMClient, LLMSettings
from skillgym_core.metrics import VALIDATION_LABELS, VALIDATION_SECONDS
from skillgym_core.sandbox import janitor
from skillgym_core.sandbox.base import Sandbox
from skillgym_core.sandbox.factory import make_sandbox
from skillgym_core.taskrun import TaskRunner

from skillgym_validator.baseline import BaselineAgent
from skillgym_validator.contrast import VERIFIER_PASSED, LabelRule, mcnemar_exact, skill_contrast
from skillgym_validator.errors import BaselineEndpointError
from skillgym_validator.gate import ValidityGate, error_info, failure_reason
from skillgym_validator.settings import ValidatorSettings

UNLABELLED = "unlabelled"


def baseline_client(settings: ValidatorSettings) -> LLMClient | None:
    """The shared LLM client for the configured baseline endpoint; None when there is none."""
    if not settings.baseline_base_url:
        return None
    llm = LLMSettings(
        base_url=settings.baseline_base_url,
        model=settings.baseline_model,
        api_key=settings.baseline_api_key,
        timeout_s=settings.baseline_request_timeout_s,
        max_retries=settings.baseline_max_retries,
        backoff_s=settings.baseline_backoff_s,
        temperature=settings.baseline_temperature,
    )
    return LLMClient(llm, role="baseline")


class Validator:
    """Validates task directories with one sandbox and one (optional) baseline endpoint."""

    def __init__(self, sandbox: Sandbox, settings: ValidatorSettings) -> None:
        self.settings = settings
        self.sandbox = sandbox
        self.runner = TaskRunner(
            sandbox, pass_threshold=settings.pass_threshold, environment=environment_provider(settings, sandbox.name)
        )
        self.gate = ValidityGate(
            self.runner,
            nop_runs=settings.nop_runs,
            oracle_runs=settings.oracle_runs,
            log_tail_chars=settings.log_tail_chars,
        )
        self.client = baseline_client(settings)
        self.rule = LabelRule(settings.skill_dep_min_with, settings.skill_dep_max_without)

    def close(self) -> None:
        if self.client is not None:
            self.client.close()

    def validate(self, task: TaskDir, scratch: Path) -> dict[str, Any]:
        """The task's record. A crash after the gate ran fails the record and keeps the gate's
        report; a TransientError, a model's malformed answer, or an error loading the task, propagates."""
        started = time.monotonic()
        config = task.config()
        gate = self.gate.check(task, scratch)
        gate_seconds = time.monotonic() - started
        record: dict[str, Any] = {
            "task_id": config.metadata.task_id,
            "skill_id": config.metadata.skill_id,
            "category": config.metadata.category,
            "path": str(task.root),
            "valid": gate.valid,
            "label": UNLABELLED,
            "reasons": list(gate.reasons),
            "gate": gate.to_dict(),
            "contrast": None,
            "sandbox": self.sandbox.describe(),
        }
        if gate.error is not None:
            record["error"] = gate.error
        contrast_seconds = 0.0
        if gate.valid:
            record["label"] = VERIFIER_PASSED
            if self.client is not None:
                contrast_started = time.monotonic()
                try:
                    self._contrast(self.client, task, scratch, record)
                except (TransientError, MalformedModelOutput, BaselineEndpointError):
                    raise  # the endpoint's trouble, not the task's: retried, then dead-lettered
                except Exception as exc:
                    record.update(valid=False, label=UNLABELLED, reasons=[failure_reason(exc)], error=error_info(exc))
                contrast_seconds = time.monotonic() - contrast_started
        total = time.monotonic() - started
        record["timings"] = {
            "gate_s": round(gate_seconds, 4),
            "contrast_s": round(contrast_seconds, 4),
            "total_s": round(total, 4),
        }
        VALIDATION_SECONDS.observe(total)
        VALIDATION_LABELS.labels(record["label"]).inc()
        return record

    def _contrast(self, client: LLMClient, task: TaskDir, scratch: Path, record: dict[str, Any]) -> None:
        agent = BaselineAgent(
            client,
            self.runner,
            max_steps=self.settings.baseline_max_steps,
            step_timeout_s=self.settings.baseline_step_timeout_s,
        )
        contrast = skill_contrast(agent, task, scratch, k=self.settings.baseline_runs, rule=self.rule)
        record["contrast"] = contrast.to_dict(include_transcripts=self.settings.baseline_keep_transcripts)
        record["label"] = contrast.label


def error_record(path: Path, exc: BaseException) -> dict[str, Any]:
    """The record of a task whose validation raised ``exc``."""
    return {
        "task_id": None,
        "path": str(path),
        "valid": False,
        "label": UNLABELLED,
        "reasons": [failure_reason(exc)],
        "error": error_info(exc),
        "gate": None,
        "contrast": None,
    }


def _validate_one(validator: Validator, path: Path, scratch: Path) -> dict[str, Any]:
    task_scratch: Path | None = None
    try:
        task_scratch = Path(tempfile.mkdtemp(prefix="task-", dir=scratch))
        return validator.validate(TaskDir(path), task_scratch)
    except Exception as exc:  # one task's failure, whatever it is, is that task's record
        return error_record(path, exc)
    finally:
        if task_scratch is not None:
            janitor.discard_tree(task_scratch)


def validate_task_dirs(paths: Sequence[Path | str], settings: ValidatorSettings | None = None) -> list[dict[str, Any]]:
    """One JSON-ready record per task directory, in order; a task that fails for any reason gets
    an error record and the rest go on. Never raises for a task's sake."""
    task_paths = [Path(raw) for raw in paths]
    try:
        settings = settings or ValidatorSettings()
        validator = Validator(make_sandbox(settings), settings)
    except Exception as exc:  # without a validator no task can be checked; each still gets a record
        return [error_record(path, exc) for path in task_paths]
    try:
        with tempfile.TemporaryDirectory(prefix="skillgym-validate-", ignore_cleanup_errors=True) as scratch:
            records = [_validate_one(validator, path, Path(scratch)) for path in task_paths]
            janitor.wait_idle()
    finally:
        validator.close()
    return records


def summarize(records: Iterable[dict[str, Any]]) -> dict[str, Any]:
    """Labels, validity and McNemar's exact test over the tasks that had a contrast."""
    records = list(records)
    pairs = [(c["r_plus"] >= 0.5, c["r_minus"] >= 0.5) for r in records if (c := r.get("contrast")) is not None]
    return {
        "tasks": len(records),
        "valid": sum(1 for r in records if r.get("valid")),
        "labels": dict(Counter(r.get("label", UNLABELLED) for r in records)),
        "mcnemar": mcnemar_exact(pairs).to_dict() if pairs else None,
    }
