"""tabular-profile: CSV, SQLite and Parquet datasets with planted duplicates, gaps, outliers and
malformed lines; a JSON profile and, since the skill prescribes them, the report's sections."""

from __future__ import annotations

import math
import random
from pathlib import Path
from typing import Any

import pytest
from skillgym_builder.families.skillfacts import report_sections
from skillgym_builder.families.tabular import TabularProfileFamily
from skillgym_builder.families.tabular_data import generate, measurements, profile
from skillgym_core.conformance import check_task
from skillgym_core.envbuild import LocalVenvProvider, lint_environment

from tests.builder.family_support import (
    BuiltTask,
    assert_reviewer_approves,
    assert_weakened_verifier_rejected,
    build,
    card_for,
    read_json,
    rewrite_json,
)

KNOBS = {"long_horizon": 3, "error_recovery": 1, "multi_step": 1, "noise_level": 0.06, "distractor_files": 2,
         "record_count": 400}
SEED = 7  # an instance with one dataset in each format


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory, env_provider: LocalVenvProvider) -> BuiltTask:
    card = card_for("eda-report", "data-analysis")
    return build(TabularProfileFamily(), card, KNOBS, tmp_path_factory.mktemp("tabular"), env_provider, seed=SEED)


@pytest.fixture(scope="module")
def solved(built: BuiltTask) -> Path:
    ok, workspace = built.solve()
    assert ok
    return workspace


def test_planted_properties_are_what_the_profile_reports() -> None:
    rng = random.Random(1)
    knobs = {"record_count": 200, "noise_level": 0.1, "multi_step": 0, "error_recovery": 1}
    dataset = generate(rng, "energy", 0, knobs, "csv", measurements(rng, "energy"))
    result = profile(dataset)
    assert result["rejected_rows"] == 3 and result["duplicate_rows"] >= 1
    for name, column in result["columns"].items():
        assert column["outliers"], name  # far outliers were planted in every column
        assert column["missing"] >= 1
        assert column["min"] < column["median"] < column["max"]


def test_the_skills_report_sections_are_read() -> None:
    fact = report_sections(card_for("eda-report", None))
    assert fact is not None and fact.value == ["Dataset Overview", "Data Quality", "Distribution Statistics",
                                               "Outliers and Anomalies", "Recommendations"]


def test_task_conforms_and_declares_its_environment(built: BuiltTask) -> None:
    assert check_task(built.task.root) == []
    assert lint_environment(built.task) == []
    assert built.metadata.params["formats"] == ["csv", "sqlite", "parquet"]
    requirements = (built.task.root / "environment" / "requirements.txt").read_text().split()
    assert requirements == ["pandas>=2.0", "pyarrow>=14"]
    assert built.extra("skill_dependencies_skipped") == {}
    assert not built.untouched().passed


def test_pandas_reference_and_standard_library_alternative_pass(built: BuiltTask, solved: Path) -> None:
    assert built.verify(solved).passed
    ok, alternative = built.solve("alternatives/standard-library.sh")
    assert ok and built.verify(alternative).passed


def test_the_report_needs_the_skill(built: BuiltTask) -> None:
    dependence = built.extra("skill_dependence")
    assert dependence["claimed"] and dependence["holds"], dependence
    assert dependence["without_skill"]["reward"] < 1
    assert "Data Quality" not in built.task.instruction()


def _entries(value: dict[str, Any]) -> list[dict[str, Any]]:
    return list(value["datasets"].values())


def _population_std(value: dict[str, Any]) -> None:
    entry = _entries(value)[0]
    for column in entry["columns"].values():
        n = entry["rows"] - entry["duplicate_rows"] - column["missing"]
        column["std"] *= math.sqrt((n - 1) / n)


def _duplicates_ignored(value: dict[str, Any]) -> None:
    _entries(value)[0]["duplicate_rows"] = 0


def _markers_read_as_values(value: dict[str, Any]) -> None:
    column = next(iter(_entries(value)[0]["columns"].values()))
    column["missing"] -= 1


def _means_rounded(value: dict[str, Any]) -> None:
    for column in _entries(value)[0]["columns"].values():
        column["mean"] = round(column["mean"], 2)


def _an_outlier_missed(value: dict[str, Any]) -> None:
    column = next(c for c in _entries(value)[0]["columns"].values() if c["outliers"])
    column["outliers"].pop()


def _untrimmed_groups(value: dict[str, Any]) -> None:
    groups = _entries(value)[0]["groups"]
    name = sorted(groups)[0]
    groups[f" {name}"] = groups.pop(name)


def _section_left_out(workspace: Path) -> None:
    report = workspace / "out" / "report.md"
    report.write_text(report.read_text().replace("## Recommendations", "## Next steps"))


def _skill_copied_as_report(workspace: Path) -> None:
    (workspace / "out" / "report.md").write_text((card_for("eda-report", None).root / "SKILL.md").read_text())


@pytest.mark.parametrize(("name", "edit"), [
    ("population standard deviation", rewrite_json("out/profile.json", _population_std)),
    ("duplicates not counted", rewrite_json("out/profile.json", _duplicates_ignored)),
    ("a missing marker read as a value", rewrite_json("out/profile.json", _markers_read_as_values)),
    ("means rounded to cents", rewrite_json("out/profile.json", _means_rounded)),
    ("an outlier missed", rewrite_json("out/profile.json", _an_outlier_missed)),
    ("group names not trimmed", rewrite_json("out/profile.json", _untrimmed_groups)),
    ("a report section left out", _section_left_out),
    ("the skill copied as the report", _skill_copied_as_report),
])
def test_wrong_but_plausible_profiles_are_rejected(built: BuiltTask, solved: Path, name: str, edit: Any) -> None:
    assert not built.verify_edited(solved, edit).passed, name


def test_outliers_in_any_order_are_accepted(built: BuiltTask, solved: Path) -> None:
    def reverse(value: dict[str, Any]) -> None:
        for entry in _entries(value):
            for column in entry["columns"].values():
                column["outliers"].reverse()

    assert built.verify_edited(solved, rewrite_json("out/profile.json", reverse)).passed
    assert read_json(solved, "out/profile.json")["datasets"]


@pytest.mark.slow
def test_the_reviewer_approves_the_task_built_for_the_seed_skill(tmp_path: Path, env_provider: LocalVenvProvider) -> None:
    assert_reviewer_approves(tmp_path, env_provider, "tabular-profile")


@pytest.mark.slow
def test_a_weakened_verifier_is_rejected_by_the_reviewer(tmp_path: Path, env_provider: LocalVenvProvider) -> None:
    assert_weakened_verifier_rejected(tmp_path, env_provider, "tabular-profile")
