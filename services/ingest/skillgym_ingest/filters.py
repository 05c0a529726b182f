"""Acceptance filters from the papers. Every rule that fails adds its reason; none short-circuits."""

from __future__ import annotations

from typing import Any

from skillgym_core.contracts.skill import SkillRecord

from skillgym_ingest.annotate.safety import is_unsafe
from skillgym_ingest.settings import IngestSettings

# Reasons, stable slugs used in records, funnel counts and metrics.
NO_SKILL_MD = "no_skill_md"
NOT_ENGLISH = "not_english"
EMPTY = "empty"
INCONSISTENT = "inconsistent"
RUNTIME_NETWORK = "runtime_network"
RUNTIME_GPU = "runtime_gpu"
DESTRUCTIVE_WRITES = "destructive_writes"
UNSAFE = "unsafe"
TOO_MANY_FILES = "too_many_files"
SPEC_INVALID = "spec_invalid"
DUPLICATE = "duplicate"

ALL_REASONS = (
    NO_SKILL_MD, NOT_ENGLISH, EMPTY, INCONSISTENT, RUNTIME_NETWORK, RUNTIME_GPU, DESTRUCTIVE_WRITES,
    UNSAFE, TOO_MANY_FILES, SPEC_INVALID, DUPLICATE,
)


def _value(record: SkillRecord, axis: str, key: str) -> Any:
    annotation = getattr(record, axis).get(key)
    return None if annotation is None else annotation.value


def rejection_reasons(record: SkillRecord, settings: IngestSettings, *, has_skill_md: bool) -> list[str]:
    reasons: list[str] = []
    if not has_skill_md:
        reasons.append(NO_SKILL_MD)
    language = _value(record, "basic", "language") or {}
    if settings.require_english and language.get("score", 0.0) < settings.english_min_score:
        reasons.append(NOT_ENGLISH)
    if len(record.body.strip()) < settings.min_body_chars or not record.description.strip():
        reasons.append(EMPTY)
    consistency = _value(record, "quality", "description_consistency")
    if isinstance(consistency, dict) and consistency.get("score", 1.0) < settings.min_consistency:
        reasons.append(INCONSISTENT)
    network = _value(record, "runtime", "network")
    if settings.reject_network and isinstance(network, dict) and network.get("required"):
        reasons.append(RUNTIME_NETWORK)
    gpu = _value(record, "runtime", "gpu")
    if settings.reject_gpu and isinstance(gpu, dict) and gpu.get("required"):
        reasons.append(RUNTIME_GPU)
    destructive = _value(record, "runtime", "destructive_writes")
    if settings.reject_destructive and isinstance(destructive, dict) and destructive.get("outside_workdir"):
        reasons.append(DESTRUCTIVE_WRITES)
    if settings.reject_unsafe and is_unsafe(record.safety):
        reasons.append(UNSAFE)
    file_count = _value(record, "basic", "file_count")
    if isinstance(file_count, int) and file_count > settings.max_files:
        reasons.append(TOO_MANY_FILES)
    if settings.reject_spec_errors and any(d.severity == "error" for d in record.diagnostics):
        reasons.append(SPEC_INVALID)
    return reasons
