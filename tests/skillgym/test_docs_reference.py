"""The docs site's reference pages are generated from the code: a command, option, setting,
family, topic, chart value or metric that exists without its entry (or an entry for one that is
gone) fails here, and the README stays a page a newcomer reads in one screenful."""

from __future__ import annotations

import importlib
import json
import re
from pathlib import Path

import pytest
from prometheus_client.metrics import MetricWrapperBase
from skillgym_core.contracts.topics import ALL_TOPICS, DLQ_SUFFIX

from skillgym import docs_reference as ref

ROOT = Path(__file__).resolve().parents[2]


def _rows(page: str) -> set[str]:
    """The first cells of a page's table rows, unquoted."""
    return {m.group(1) for m in re.finditer(r"(?m)^\| `([^`]+)` \|", page)}


def test_every_command_and_option_has_its_entry() -> None:
    page = ref.commands_page()
    headings = set(re.findall(r"(?m)^## `([^`]+)`$", page))
    paths = {path for path, _ in ref.commands()}
    assert headings == paths and {"skillgym run", "skillgym families", "skillgym dlq replay"} <= paths
    for path, parser in ref.commands():
        section = page.split(f"## `{path}`\n", 1)[1].split("\n## ", 1)[0]
        assert {w for w, _, _ in ref.options(parser)} == _rows(section), path


def test_every_setting_has_its_entry() -> None:
    page = ref.settings_page()
    classes = ref.settings_classes()
    for cls in classes:
        section = page.split(f"## {cls.__name__}\n", 1)[1].split("\n## ", 1)[0]
        inherited = set() if cls.__name__ == "CommonSettings" else set(cls.__mro__[1].model_fields)
        assert _rows(section) == set(cls.model_fields) - inherited, cls.__name__
    # every service settings class is listed: a new one cannot be left out
    from skillgym_core.settings import CommonSettings

    for spec in ref.SETTINGS:
        importlib.import_module(spec.partition(":")[0])
    known = {c.__name__ for c in classes}
    subclasses = {c.__name__ for c in CommonSettings.__subclasses__() if c.__module__.startswith(("skillgym", "skillgym_"))}
    assert subclasses <= known, subclasses - known


def test_every_family_topic_chart_value_and_metric_has_its_entry() -> None:
    from skillgym_builder.families import registry

    families = ref.families_page()
    assert set(re.findall(r"(?m)^## `([^`]+)`$", families)) == set(registry().ids())
    topics = _rows(ref.events_page().split("## Payloads", 1)[0])
    assert topics == {*ALL_TOPICS, *(t + DLQ_SUFFIX for t in ALL_TOPICS)}
    schema = json.loads(ref.CHART_SCHEMA.read_text())
    assert _rows(ref.chart_page()) == {path for path, _ in ref.chart_values(schema)}
    assert {"image.repository", "metrics.serviceMonitor.enabled"} & _rows(ref.chart_page())
    metrics = _rows(ref.metrics_page())
    core = importlib.import_module("skillgym_core.metrics")
    defined = {m._name + ("_total" if m._type == "counter" else "") for m in vars(core).values()
               if isinstance(m, MetricWrapperBase)}
    assert defined <= metrics and all(name.startswith("skillgym_") for name in metrics)


@pytest.mark.parametrize("page", ["measured"])
def test_measured_results_carry_their_provenance(page: str) -> None:
    text = ref.measured_page()
    for path in sorted(ref.RESULTS.glob("*.json")):
        assert f"## {path.stem}\n" in text
    assert "Command: `python -m benchmarks.family_bench`" in text


def test_the_readme_fits_a_screen_and_links_into_the_docs() -> None:
    readme = (ROOT / "README.md").read_text()
    assert len(readme.splitlines()) <= 150
    assert readme.startswith("# SkillGym\n\n```bash\nmake run")
    for link in re.findall(r"\]\((docs/[^)#]+)", readme):
        assert (ROOT / link).is_file(), link


def test_the_example_report_is_drawn_by_the_current_code(tmp_path: Path) -> None:
    from skillgym.docs_report_example import write_example

    page = write_example(tmp_path).read_text()
    assert page.count("<img") == 7
    assert {p.name for p in tmp_path.glob("*.png")} >= {"funnel_tasks.png", "funnel_runs.png", "pass_rate_by_category.png"}
    assert json.loads((tmp_path / "report.json").read_text())["funnel"]["attempts"] == 48
