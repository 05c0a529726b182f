"""Group accumulators: attempts and passes for every run, length and composition statistics for
passed runs only (as in the papers: pass-rate denominators are attempts, lengths describe the
successful records). Rows are a few numbers per trajectory, never the trajectories themselves."""

from __future__ import annotations

from array import array
from dataclasses import dataclass, field
from typing import Any

from skillgym_sampler.report.stats import COMPONENTS, TrajectoryStats, distribution, quantile, top_share

MESSAGE_BUCKETS = ((0, 20), (21, 40), (41, 60), (61, None))
LONG_TOKENS = 128_000


@dataclass
class Group:
    attempts: int = 0
    passed: int = 0
    reward_sum: float = 0.0
    skill_read: int = 0
    passed_with_skill: int = 0
    skill_read_with_skill: int = 0
    tool_calls: array = field(default_factory=lambda: array("d"))
    messages: array = field(default_factory=lambda: array("d"))
    steps: array = field(default_factory=lambda: array("d"))
    tokens: array = field(default_factory=lambda: array("d"))
    calls_per_message: array = field(default_factory=lambda: array("d"))
    tokens_per_message: array = field(default_factory=lambda: array("d"))
    tokens_per_call: array = field(default_factory=lambda: array("d"))
    components: dict[str, int] = field(default_factory=lambda: dict.fromkeys(COMPONENTS, 0))
    share_sums: list[float] = field(default_factory=lambda: [0.0, 0.0, 0.0])
    share_count: int = 0

    def add(self, record: dict[str, Any], stats: TrajectoryStats | None) -> None:
        self.attempts += 1
        self.reward_sum += float(record.get("reward") or 0.0)
        if not record.get("passed") or stats is None:
            return
        self.passed += 1
        skill_read = bool(record.get("skill_read"))
        self.skill_read += skill_read
        if record.get("skill_provided", True):
            self.passed_with_skill += 1
            self.skill_read_with_skill += skill_read
        total = stats.total_tokens
        self.tool_calls.append(stats.tool_calls)
        self.messages.append(stats.messages)
        self.steps.append(stats.steps)
        self.tokens.append(total)
        if stats.messages:
            self.calls_per_message.append(stats.tool_calls / stats.messages)
            self.tokens_per_message.append(total / stats.messages)
        if stats.tool_calls:
            self.tokens_per_call.append(total / stats.tool_calls)
        for name in COMPONENTS:
            self.components[name] += stats.tokens[name]
        if stats.message_shares is not None:
            self.share_count += 1
            for index, share in enumerate(stats.message_shares):
                self.share_sums[index] += share

    def _buckets(self) -> list[dict[str, Any]]:
        total_tokens = sum(self.tokens) or 1.0
        rows = []
        for low, high in MESSAGE_BUCKETS:
            chosen = [t for m, t in zip(self.messages, self.tokens, strict=True)
                      if m >= low and (high is None or m <= high)]
            rows.append({
                "messages": f"{low}-{high}" if high is not None else f">{low - 1}",
                "record_share": len(chosen) / self.passed if self.passed else None,
                "token_share": sum(chosen) / total_tokens if self.passed else None,
            })
        return rows

    def summary(self) -> dict[str, Any]:
        component_total = sum(self.components.values())
        return {
            "attempts": self.attempts,
            "passed": self.passed,
            "pass_rate": self.passed / self.attempts if self.attempts else None,
            "mean_reward": self.reward_sum / self.attempts if self.attempts else None,
            "explicit_skill_use_rate": self.skill_read / self.passed if self.passed else None,
            "explicit_skill_use_rate_skill_provided": (
                self.skill_read_with_skill / self.passed_with_skill if self.passed_with_skill else None
            ),
            "length": {
                "tool_calls": distribution(self.tool_calls),
                "assistant_messages": distribution(self.messages),
                "steps": distribution(self.steps),
                "tokens": distribution(self.tokens),
            },
            "share_over_128k_tokens": (
                sum(1 for t in self.tokens if t >= LONG_TOKENS) / self.passed if self.passed else None
            ),
            "token_composition": {
                name: (value / component_total if component_total else None)
                for name, value in self.components.items()
            },
            "token_totals": dict(self.components),
            "message_tool_call_share": {
                label: (self.share_sums[i] / self.share_count if self.share_count else None)
                for i, label in enumerate(("0", "1", ">=2"))
            },
            "density": {
                name: {"median": quantile(values, 0.5), "p95": quantile(values, 0.95)}
                for name, values in (("calls_per_message", self.calls_per_message),
                                     ("tokens_per_message", self.tokens_per_message),
                                     ("tokens_per_call", self.tokens_per_call))
            },
            "token_concentration": {f"top_{int(p * 100)}pct": top_share(self.tokens, p) for p in (0.01, 0.05, 0.10)},
            "message_buckets": self._buckets(),
        }


@dataclass
class SkillDependence:
    """Paired outcomes per (configuration, task): Skill-Dep. when solved with the skill and not without."""

    outcomes: dict[tuple[str, str], list[bool]] = field(default_factory=dict)
    categories: dict[str, str] = field(default_factory=dict)

    def add(self, configuration: str, record: dict[str, Any], category: str) -> None:
        key = (configuration, str(record.get("task_id")))
        row = self.outcomes.setdefault(key, [False, False, False, False])  # with seen/passed, without seen/passed
        offset = 0 if record.get("skill_provided", True) else 2
        row[offset] = True
        row[offset + 1] = row[offset + 1] or bool(record.get("passed"))
        self.categories[str(record.get("task_id"))] = category

    def ratios(self, by: str) -> dict[str, dict[str, Any]]:
        grouped: dict[str, list[int]] = {}
        for (configuration, task_id), (w_seen, w_pass, wo_seen, wo_pass) in self.outcomes.items():
            if not (w_seen and wo_seen):
                continue
            name = configuration if by == "configuration" else self.categories.get(task_id, "unknown")
            counts = grouped.setdefault(name, [0, 0, 0, 0])
            counts[0] += 1
            counts[1] += w_pass and not wo_pass
            counts[2] += wo_pass and not w_pass
            counts[3] += w_pass and wo_pass
        return {
            name: {"paired_tasks": n, "skill_dep": dep, "skill_dep_ratio": dep / n, "only_without_skill": only_wo,
                   "both": both}
            for name, (n, dep, only_wo, both) in sorted(grouped.items())
        }
