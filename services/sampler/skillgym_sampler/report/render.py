"""PNG plots (matplotlib, Agg backend) and one self-contained HTML page for the report."""

from __future__ import annotations

import html
from dataclasses import dataclass
from pathlib import Path
from typing import Any

COMPONENT_LABELS = {"reasoning": "reasoning", "tool_output": "tool output", "tool_calls": "tool calls",
                    "rest": "rest"}


def _pyplot() -> Any:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def _fmt(value: Any) -> str:
    if value is None:
        return "-"
    if isinstance(value, float):
        return f"{value:.3f}" if abs(value) < 10 else f"{value:,.1f}"
    return f"{value:,}" if isinstance(value, int) else html.escape(str(value))


@dataclass(frozen=True)
class Chart:
    """One plot: a single unit on its axis; rates on a fixed 0-1 axis; every bar labelled with its value."""

    name: str
    title: str
    unit: str  # "skills", "tasks", "agent runs", "rate", "tokens", "share"
    labels: list[str]
    values: list[float]

    @property
    def fixed_axis(self) -> tuple[float, float] | None:
        return (0.0, 1.0) if self.unit in ("rate", "share") else None


def funnel_unit(key: str) -> str:
    if key.startswith("skills"):
        return "skills"
    return "tasks" if key.startswith("tasks") else "agent runs"


def charts(report: dict[str, Any]) -> list[Chart]:
    """The report's bar charts: the funnel split by what it counts (skills, tasks, agent runs),
    pass rates on a 0-1 axis, median tokens per configuration."""
    funnel = report["funnel"]
    out = []
    for unit, file in (("skills", "funnel_skills"), ("tasks", "funnel_tasks"), ("agent runs", "funnel_runs")):
        keys = [k for k in funnel if funnel_unit(k) == unit]
        if keys:
            out.append(Chart(f"{file}.png", f"Funnel: {unit}", unit, [k.replace("_", " ") for k in keys],
                             [float(funnel[k]) for k in keys]))
    per_category, per_config = report["per_category"], report["per_configuration"]
    out.append(Chart("pass_rate_by_category.png", "Pass rate by category (share of attempts)", "rate",
                     list(per_category), [float(r["pass_rate"] or 0) for r in per_category.values()]))
    out.append(Chart("tokens_median_by_configuration.png", "Median o200k_base tokens per passed run", "tokens",
                     list(per_config), [float(r["length"]["tokens"]["median"] or 0) for r in per_config.values()]))
    return out


def _bar(path: Path, chart: Chart) -> str:
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(max(5.0, 0.9 * len(chart.labels) + 2), 3.6))
    bars = ax.bar(range(len(chart.labels)), chart.values, color="#4c72b0")
    ax.bar_label(bars, labels=[f"{v:.2f}" if chart.fixed_axis else f"{v:,.0f}" for v in chart.values], fontsize=8)
    ax.set_xticks(range(len(chart.labels)), chart.labels, rotation=30, ha="right", fontsize=8)
    if chart.fixed_axis:
        ax.set_ylim(*chart.fixed_axis)
    else:
        ax.set_ylim(0, max([*chart.values, 1.0]) * 1.15)
    ax.set_title(chart.title)
    ax.set_ylabel(chart.unit)
    fig.tight_layout()
    fig.savefig(path / chart.name if path.is_dir() else path, dpi=100)
    plt.close(fig)
    return chart.name


def _stacked(path: Path, groups: dict[str, dict[str, float | None]], keys: list[str], title: str) -> str:
    plt = _pyplot()
    names = list(groups)
    fig, ax = plt.subplots(figsize=(max(5.0, 1.1 * len(names) + 2), 3.8))
    bottom = [0.0] * len(names)
    for key in keys:
        values = [float(groups[name].get(key) or 0.0) for name in names]
        bars = ax.bar(range(len(names)), values, bottom=bottom, label=COMPONENT_LABELS.get(key, key))
        ax.bar_label(bars, labels=[f"{v:.2f}" if v >= 0.05 else "" for v in values], label_type="center", fontsize=7)
        bottom = [b + v for b, v in zip(bottom, values, strict=True)]
    ax.set_xticks(range(len(names)), names, rotation=30, ha="right", fontsize=8)
    ax.set_ylim(0, 1)
    ax.set_ylabel("share")
    ax.set_title(title)
    ax.legend(fontsize=8, loc="upper right")
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return path.name


def _table(rows: dict[str, dict[str, Any]], columns: list[tuple[str, Any]]) -> str:
    head = "".join(f"<th>{html.escape(label)}</th>" for label, _ in columns)
    body = []
    for name, row in rows.items():
        cells = "".join(f"<td>{_fmt(getter(row))}</td>" for _, getter in columns)
        body.append(f"<tr><th>{html.escape(name)}</th>{cells}</tr>")
    return f"<table><tr><th></th>{head}</tr>{''.join(body)}</table>"


SUMMARY_COLUMNS: list[tuple[str, Any]] = [
    ("attempts", lambda r: r["attempts"]),
    ("passed", lambda r: r["passed"]),
    ("pass rate", lambda r: r["pass_rate"]),
    ("explicit skill use", lambda r: r["explicit_skill_use_rate"]),
    ("tool calls median", lambda r: r["length"]["tool_calls"]["median"]),
    ("tool calls p90", lambda r: r["length"]["tool_calls"]["p90"]),
    ("tool calls p95", lambda r: r["length"]["tool_calls"]["p95"]),
    ("steps median", lambda r: r["length"]["steps"]["median"]),
    ("steps p95", lambda r: r["length"]["steps"]["p95"]),
    ("tokens median", lambda r: r["length"]["tokens"]["median"]),
    ("tokens p90", lambda r: r["length"]["tokens"]["p90"]),
    ("tokens p95", lambda r: r["length"]["tokens"]["p95"]),
    ("top 10% token share", lambda r: r["token_concentration"]["top_10pct"]),
]


def render_html(report: dict[str, Any], out: Path) -> Path:
    per_config = report["per_configuration"]
    funnel = report["funnel"]
    images = [
        *(_bar(out, chart) for chart in charts(report)),
        _stacked(out / "token_composition.png", {k: v["token_composition"] for k, v in per_config.items()},
                 ["reasoning", "tool_output", "tool_calls", "rest"], "Saved-text token composition (passed runs)"),
        _stacked(out / "message_tool_calls.png", {k: v["message_tool_call_share"] for k, v in per_config.items()},
                 ["0", "1", ">=2"], "Assistant messages with 0 / 1 / >=2 tool calls"),
    ]
    dependence = report["skill_dependence"]
    dep_columns: list[tuple[str, Any]] = [
        ("paired tasks", lambda r: r["paired_tasks"]), ("Skill-Dep.", lambda r: r["skill_dep"]),
        ("Skill-Dep. ratio", lambda r: r["skill_dep_ratio"]), ("only without skill", lambda r: r["only_without_skill"]),
    ]
    sections = [
        "<h1>SkillGym dataset statistics</h1>",
        f"<p>Tokens: {html.escape(report['tokenizer'])}; quantiles: {html.escape(report['quantiles'])}; "
        "length statistics over passed runs, pass rates over attempts.</p>",
        "<h2>Funnel</h2>", _table({"count": funnel}, [(k, lambda r, k=k: r[k]) for k in funnel]),
        "<h2>Overall</h2>", _table({"all": report["overall"]}, SUMMARY_COLUMNS),
        "<h2>Per configuration</h2>", _table(per_config, SUMMARY_COLUMNS),
        "<h2>Per configuration and skill condition</h2>",
        _table(report["per_configuration_and_skill_condition"], SUMMARY_COLUMNS),
        "<h2>Per category</h2>", _table(report["per_category"], SUMMARY_COLUMNS),
        "<h2>Skill dependence per configuration</h2>", _table(dependence["per_configuration"], dep_columns),
        "<h2>Skill dependence per category</h2>", _table(dependence["per_category"], dep_columns),
        "<h2>Plots</h2>", *(f'<p><img src="{name}" alt="{name}"></p>' for name in images),
    ]
    style = ("body{font-family:sans-serif;margin:2em}table{border-collapse:collapse;font-size:13px}"
             "td,th{border:1px solid #ccc;padding:3px 6px;text-align:right}")
    page = out / "report.html"
    page.write_text(f"<!doctype html><html><head><meta charset='utf-8'><title>SkillGym report</title>"
                    f"<style>{style}</style></head><body>{''.join(sections)}</body></html>")
    return page
