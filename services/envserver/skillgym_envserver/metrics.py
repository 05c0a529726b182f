"""The environment server's Prometheus metrics (``skillgym_envserver_*``)."""

from __future__ import annotations

from prometheus_client import Counter, Gauge, Histogram

EPISODES_STARTED = Counter("skillgym_envserver_episodes_started_total", "Episodes opened", ["family"])
EPISODES_ENDED = Counter("skillgym_envserver_episodes_ended_total", "Episodes ended, by how", ["how"])
EPISODE_REWARD = Histogram("skillgym_envserver_episode_reward", "Reward of finished episodes", ["mode"],
                           buckets=(-0.5, 0.0, 0.25, 0.5, 0.75, 0.99, 1.0))
EPISODE_STEPS = Histogram("skillgym_envserver_episode_steps", "Tool calls per finished episode",
                          buckets=(1, 2, 5, 10, 20, 50, 100))
STEP_SECONDS = Histogram("skillgym_envserver_step_seconds", "Time to run one tool call", ["tool"])
VERIFY_SECONDS = Histogram("skillgym_envserver_verify_seconds", "Time to verify a finished episode")
OPEN_EPISODES = Gauge("skillgym_envserver_open_episodes", "Episodes open now")
BUSY_REJECTIONS = Counter("skillgym_envserver_busy_rejections_total", "Episode starts refused with 429")
MALFORMED_CALLS = Counter("skillgym_envserver_malformed_calls_total", "Tool calls that were not well formed")
PUBLISH_FAILURES = Counter("skillgym_envserver_publish_failures_total", "trajectory-verified events not yet published")
