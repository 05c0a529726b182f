"""The reviewer's own Prometheus metrics (exported by the service's /metrics like the shared ones)."""

from __future__ import annotations

from prometheus_client import Counter, Histogram

MUTATION_SCORE = Histogram(
    "skillgym_review_mutation_score",
    "Share of wrong results a task's verifier rejected, per template",
    ["template"],
    buckets=(0.25, 0.5, 0.7, 0.8, 0.85, 0.9, 0.95, 0.99, 1.0),
)
TOO_LAX_REJECTIONS = Counter(
    "skillgym_review_too_lax_rejections_total", "Tasks rejected because their verifier is too lax", ["template"]
)
