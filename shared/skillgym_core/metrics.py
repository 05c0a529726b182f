"""Every Prometheus metric SkillGym exports, defined once so dashboards have one source."""

from __future__ import annotations

from prometheus_client import Counter, Gauge, Histogram

EVENTS_CONSUMED = Counter("skillgym_events_consumed_total", "Events handled", ["service", "topic"])
EVENTS_PRODUCED = Counter("skillgym_events_produced_total", "Events published", ["service", "topic"])
EVENTS_FAILED = Counter(
    "skillgym_events_failed_total", "Handler attempts that raised", ["service", "topic", "reason"]
)
EVENTS_DLQ = Counter("skillgym_events_dlq_total", "Events routed to <topic>.dlq", ["service", "topic"])
EVENTS_SKIPPED = Counter(
    "skillgym_events_duplicate_total", "Redelivered events answered from the done-marker", ["service", "topic"]
)
HANDLER_SECONDS = Histogram(
    "skillgym_handler_seconds",
    "Handler latency",
    ["service", "topic"],
    buckets=(0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300),
)
CONSUMER_LAG = Gauge("skillgym_consumer_lag", "Records not yet consumed", ["service", "topic"])
CONSUMER_STALLED_PARTITIONS = Gauge(
    "skillgym_consumer_stalled_partitions",
    "Partitions of the topic this consumer owns where records wait and none was settled for stall_after_s",
    ["service", "topic"],
)
DEPENDENCY_UP = Gauge(
    "skillgym_dependency_up",
    "1 while a dependency (store, broker, ...) answers the service, 0 while it fails",
    ["service", "dependency"],
)

SKILLS_SEEN = Counter("skillgym_skills_seen_total", "Skill folders found by ingestion")
SKILLS_ACCEPTED = Counter("skillgym_skills_accepted_total", "Skills accepted by ingestion")
SKILLS_REJECTED = Counter("skillgym_skills_rejected_total", "Skills rejected, per reason", ["reason"])

GATE_OUTCOMES = Counter(
    "skillgym_gate_outcomes_total", "Gate verdicts per gate and reason", ["gate", "outcome", "reason"]
)
TASKS_BUILT = Counter("skillgym_tasks_built_total", "Task packages built", ["template"])
VALIDATION_LABELS = Counter("skillgym_validation_labels_total", "Skill-dependence labels", ["label"])
VALIDATION_SECONDS = Histogram(
    "skillgym_validation_seconds", "Validation latency per task", buckets=(0.1, 0.5, 1, 2, 5, 10, 30, 60, 300)
)

SANDBOX_RUNS = Counter("skillgym_sandbox_runs_total", "Sandboxed runs by outcome", ["backend", "outcome"])
SANDBOX_SECONDS = Histogram(
    "skillgym_sandbox_seconds",
    "Sandboxed run wall time",
    ["backend"],
    buckets=(0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300),
)

RUNS_STARTED = Counter("skillgym_runs_started_total", "Agent runs started", ["harness", "model"])
RUNS_FINISHED = Counter(
    "skillgym_runs_finished_total", "Agent runs verified", ["harness", "model", "category", "passed"]
)
RUN_SECONDS = Histogram(
    "skillgym_run_seconds", "Agent run wall time", ["harness"], buckets=(0.1, 0.5, 1, 5, 10, 30, 60, 300, 900)
)
TRAJECTORY_STEPS = Histogram(
    "skillgym_trajectory_steps", "Steps per trajectory", ["harness"], buckets=(1, 2, 5, 10, 20, 35, 50, 100, 200, 350)
)
TRAJECTORY_TOOL_CALLS = Histogram(
    "skillgym_trajectory_tool_calls",
    "Tool calls per trajectory",
    ["harness"],
    buckets=(0, 1, 2, 5, 10, 20, 50, 100, 200, 350),
)
TRAJECTORY_TOKENS = Histogram(
    "skillgym_trajectory_tokens",
    "Tokens per trajectory",
    ["harness"],
    buckets=(100, 1000, 5000, 10000, 30000, 60000, 100000, 200000, 400000),
)

TRAIN_LOSS = Gauge("skillgym_train_loss", "Latest training loss", ["run_id"])
TRAIN_TOKENS_PER_SECOND = Gauge("skillgym_train_tokens_per_second", "Training throughput", ["run_id"])
TRAIN_STEPS = Counter("skillgym_train_steps_total", "Optimizer steps taken")
