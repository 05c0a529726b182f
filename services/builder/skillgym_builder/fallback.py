"""When the builder agent fails on a task the family instance or a text template can still
provide: the fallback is recorded (the task's ``[metadata]`` and
``skills/<skill>/fallbacks/<task>.json``, which the run summary lists), or, with
``require_llm``, it is an error."""

from __future__ import annotations

from typing import Any

from skillgym_core.contracts.events import EnvBuilt
from skillgym_core.errors import SkillGymError
from skillgym_core.store.base import Store, put_json

from skillgym_builder.errors import LLMRequiredError

FALLBACK_REASON = "llm_fallback_reason"  # the agent's error message
FALLBACK_ERROR = "llm_fallback_error"  # its typed reason, e.g. llm_unavailable
FALLBACK_OUTCOME = "llm_fallback"
MAX_REASON_CHARS = 500


def fallback_record_key(skill_id: str, task_id: str) -> str:
    return f"skills/{skill_id}/fallbacks/{task_id}.json"


def llm_required(exc: SkillGymError, *, fallback: str | None) -> LLMRequiredError:
    """The error for a build the agent failed with ``exc`` while ``require_llm`` is set;
    ``fallback`` is the builder it would have fallen back to (None: the skill would be skipped)."""
    return LLMRequiredError(
        f"the builder agent failed and require_llm is set: {exc.reason}: {str(exc)[:MAX_REASON_CHARS]}",
        fallback=fallback,
        llm_error={"error": type(exc).__name__, "reason": exc.reason, "message": str(exc)[:MAX_REASON_CHARS]},
    )


def fallback_metadata(exc: SkillGymError, *, fallback: str, require_llm: bool) -> dict[str, str]:
    """The ``[metadata]`` fields of a task the ``fallback`` builder makes because the agent failed
    with ``exc``; under ``require_llm`` an :class:`LLMRequiredError` instead."""
    if require_llm:
        raise llm_required(exc, fallback=fallback) from exc
    return {FALLBACK_REASON: str(exc)[:MAX_REASON_CHARS], FALLBACK_ERROR: exc.reason}


def record_fallback(store: Store, built: EnvBuilt, extra: dict[str, Any] | None) -> None:
    """Keep the fallback of a task built from ``extra`` (the build's metadata) next to the skill's
    build report, first builds and revisions alike."""
    reason = (extra or {}).get(FALLBACK_REASON)
    if reason is None:
        return
    put_json(store, fallback_record_key(built.skill_id, built.task_id), {
        "outcome": FALLBACK_OUTCOME, "skill_id": built.skill_id, "task_id": built.task_id,
        "family": built.template, "revision": built.revision, "builder": built.builder,
        "error": (extra or {}).get(FALLBACK_ERROR), "reason": reason,
    })
