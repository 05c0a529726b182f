"""layered-config: layered JSON configuration resolved into the effective configuration and
provenance; the skill's layer order and null rule make the skill necessary."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from skillgym_builder.families.layered_config import LayeredConfigFamily
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
    write_json,
)

HARD = {"record_count": 8, "distractor_files": 2, "multi_step": 3, "error_recovery": 1, "long_horizon": 2}


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory, env_provider: LocalVenvProvider) -> BuiltTask:
    card = card_for("config-layers", "version-control")
    return build(LayeredConfigFamily(), card, HARD, tmp_path_factory.mktemp("layered"), env_provider)


@pytest.fixture(scope="module")
def solved(built: BuiltTask) -> Path:
    ok, workspace = built.solve()
    assert ok
    return workspace


def test_config_merge_skill_fits_by_what_its_text_describes() -> None:
    fit = LayeredConfigFamily().suitability(card_for("config-layers", "version-control"))
    assert fit.fits and fit.code == "terms" and fit.strength == 1


def test_task_conforms_and_the_untouched_workspace_fails(built: BuiltTask) -> None:
    assert check_task(built.task.root) == []
    assert lint_environment(built.task) == []
    assert not built.untouched().passed
    assert built.extra("family") == "layered-config" and built.extra("knobs") == HARD


def test_reference_and_alternative_pass(built: BuiltTask, solved: Path) -> None:
    assert built.verify(solved).passed
    ok, alternative = built.solve("alternatives/flattened-paths.sh")
    assert ok and built.verify(alternative).passed


def test_skill_is_needed_and_the_hidden_skill_run_fails(built: BuiltTask) -> None:
    dependence = built.extra("skill_dependence")
    assert dependence["claimed"] and dependence["holds"], dependence
    assert set(dependence["facts"]) == {"layer_order", "null_rule"}
    ok, workspace = built.solve(with_skill=False)
    assert not ok and not built.verify(workspace).passed


def test_layer_order_comes_from_the_skill_not_the_instruction(built: BuiltTask) -> None:
    instruction = built.task.instruction()
    assert "prescribes" in instruction and "`env.json`" not in instruction
    files = {p.name for p in built.task.workspace.rglob("*.json")}
    assert {"defaults.json", "env.json", "local.json", "staging.json"} <= files


def _layers(workspace: Path, service: str) -> dict[str, Any]:
    folder = workspace / "services" / service / "config"
    out = {}
    for name in ("defaults.json", "env.json", "local.json"):
        text = (folder / name).read_text()
        out[name] = json.loads(text.replace(",\n}", "\n}"))
    return out


def _shallow_merge(workspace: Path) -> None:
    effective = read_json(workspace, "out/effective.json")
    for service in effective:
        merged: dict[str, Any] = {}
        for layer in _layers(workspace, service).values():
            merged.update(layer)  # top-level keys only: nested objects are replaced, not merged
        effective[service] = merged
    write_json(workspace, "out/effective.json", effective)


def _keep_nulls(workspace: Path) -> None:
    effective = read_json(workspace, "out/effective.json")
    for service in effective:
        for layer in list(_layers(workspace, service).values())[1:]:
            for section, values in layer.items():
                for key, value in (values.items() if isinstance(values, dict) else []):
                    if value is None:
                        effective[service].setdefault(section, {})[key] = None
    write_json(workspace, "out/effective.json", effective)


def _first_layer_wins(value: dict[str, Any]) -> None:
    for queries in value.values():
        for key in list(queries)[:1]:
            queries[key] = "defaults.json" if queries[key] != "defaults.json" else "local.json"


def _concatenate_a_list(value: dict[str, Any]) -> None:
    for config in value.values():
        for section in config.values():
            if isinstance(section, dict) and isinstance(section.get("tags"), list):
                section["tags"] = section["tags"] + ["blue"]
                return


def _ints_as_strings(value: dict[str, Any]) -> None:
    for config in value.values():
        for section in config.values():
            if isinstance(section, dict) and isinstance(section.get("port"), int):
                section["port"] = str(section["port"])
                return


@pytest.mark.parametrize(("name", "edit"), [
    ("shallow merge", _shallow_merge),
    ("nulls kept instead of deleting keys", _keep_nulls),
    ("first layer wins", rewrite_json("out/provenance.json", _first_layer_wins)),
    ("lists concatenated", rewrite_json("out/effective.json", _concatenate_a_list)),
    ("numbers turned into strings", rewrite_json("out/effective.json", _ints_as_strings)),
    ("a service left out", rewrite_json("out/effective.json", lambda v: v.pop(sorted(v)[0]))),
])
def test_wrong_but_plausible_results_are_rejected(built: BuiltTask, solved: Path, name: str, edit: Any) -> None:
    outcome = built.verify_edited(solved, edit)
    assert not outcome.passed, name


def test_reformatted_results_are_accepted(built: BuiltTask, solved: Path) -> None:
    def reformat(workspace: Path) -> None:
        for rel in ("out/effective.json", "out/provenance.json"):
            write_json(workspace, rel, read_json(workspace, rel))  # other indentation, same content

    assert built.verify_edited(solved, reformat).passed


def test_a_changed_protected_layer_is_tampering(built: BuiltTask, solved: Path) -> None:
    protected = built.metadata.protected_inputs[0].path

    def tamper(workspace: Path) -> None:
        (workspace / protected).write_text((workspace / protected).read_text() + "\n")

    outcome = built.verify_edited(solved, tamper)
    assert not outcome.passed and outcome.failure_type == "tampered_inputs"


def test_without_the_skill_facts_the_instruction_states_the_order(tmp_path: Path) -> None:
    plain = tmp_path / "skill"
    plain.mkdir()
    text = (card_for("config-layers", None).root / "SKILL.md").read_text()
    text = text.replace("Layers are applied in order: `defaults.json`, then `env.json`, then `local.json`.",
                        "Layers are applied from the most general to the most specific.")
    (plain / "SKILL.md").write_text(text.replace("A value of `null` in a later layer deletes the key.", ""))
    card = card_for("plain-layers", "cloud-infrastructure", folder=plain)
    output = LayeredConfigFamily().instantiate(card, 0, {})
    assert not output.metadata["skill_claim"]["claimed"]
    assert "`defaults.json`, `production.json`, `local.json`" in output.instruction


@pytest.mark.slow
def test_the_reviewer_approves_the_task_built_for_the_seed_skill(tmp_path: Path, env_provider: LocalVenvProvider) -> None:
    assert_reviewer_approves(tmp_path, env_provider, "layered-config")


@pytest.mark.slow
def test_a_weakened_verifier_is_rejected_by_the_reviewer(tmp_path: Path, env_provider: LocalVenvProvider) -> None:
    assert_weakened_verifier_rejected(tmp_path, env_provider, "layered-config")
