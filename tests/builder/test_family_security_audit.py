"""security-audit: a generated application repository with planted insecure defaults, safe
look-alikes, out-of-scope fixtures, traced fallbacks and unauditable files; the skill's exclusion
rules decide what is out of scope."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from skillgym_builder.families.security_audit import SecurityAuditFamily, exclusion_rules
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
    solution_helper,
    write_json,
)

SKILL = "config-hardening-review"
KNOBS = {"record_count": 12, "noise_level": 0.5, "distractor_files": 2, "multi_step": 1, "error_recovery": 1}


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory, env_provider: LocalVenvProvider) -> BuiltTask:
    card = card_for(SKILL, "security-auditing")
    return build(SecurityAuditFamily(), card, KNOBS, tmp_path_factory.mktemp("audit"), env_provider)


@pytest.fixture(scope="module")
def solved(built: BuiltTask) -> Path:
    ok, workspace = built.solve()
    assert ok
    return workspace


def _expected(built: BuiltTask) -> dict[str, Any]:
    import json

    return json.loads((built.task.tests / "expected.json").read_text())


def test_fit_by_subcategory_and_by_terms_and_a_non_fit_with_its_reason() -> None:
    family = SecurityAuditFamily()
    assert family.suitability(card_for(SKILL, "security-auditing")).code == "subcategory"
    by_terms = family.suitability(card_for(SKILL, "code-review", category="development"))
    assert by_terms.fits and by_terms.code == "terms"
    unrelated = family.suitability(card_for("csv-cleanup", "editing-proofreading", category="writing"))
    assert not unrelated.fits and unrelated.code == "subcategory_not_served"


def test_solution_side_reader_agrees_with_the_builder() -> None:
    for name in (SKILL, "config-layers", "tdd-workflow"):
        card = card_for(name, None)
        namespace = solution_helper("security-audit", "audit_rules.py", card.root / "SKILL.md")
        fact = exclusion_rules(card)
        assert namespace["exclusion_rules"]() == (fact.value if fact else None), name


def test_task_conforms_and_the_untouched_workspace_fails(built: BuiltTask) -> None:
    assert check_task(built.task.root) == []
    assert lint_environment(built.task) == []
    assert not built.untouched().passed
    assert built.extra("family") == "security-audit" and built.extra("knobs") == KNOBS


def test_out_of_scope_folders_and_suffixes_come_from_the_skill(built: BuiltTask) -> None:
    expected = _expected(built)
    decoys = expected["decoy_files"]
    assert any(d.split("/")[0] in ("test", "spec", "samples") for d in decoys)
    assert any(d.endswith((".sample", ".tmpl")) for d in decoys)
    instruction = built.task.instruction()
    assert SKILL in instruction and "`spec/`" not in instruction and ".tmpl" not in instruction
    assert expected["skipped"] == ["app/legacy_session.py", "web/src/legacy-cache.js"]


def test_reference_and_alternative_pass(built: BuiltTask, solved: Path) -> None:
    assert built.verify(solved).passed
    ok, alternative = built.solve("alternatives/line-scanner.sh")
    assert ok and built.verify(alternative).passed


def test_skill_is_needed_and_the_hidden_skill_run_fails(built: BuiltTask) -> None:
    dependence = built.extra("skill_dependence")
    assert dependence["claimed"] and dependence["holds"], dependence
    assert dependence["facts"] == ["exclusion_rules"]
    ok, workspace = built.solve(with_skill=False)
    assert not ok and not built.verify(workspace).passed


def test_knobs_change_the_instance() -> None:
    family = SecurityAuditFamily()
    card = card_for(SKILL, "security-auditing")
    easy = family.instantiate(card, 0, {})
    assert easy.params["findings"] == 6 and easy.params["decoy_files"] == 0 and easy.params["unreadable"] == 0
    more = family.instantiate(card, 0, {"record_count": 20})
    assert more.params["findings"] == 20
    traced = family.instantiate(card, 0, {"multi_step": 1})
    assert "app/defaults.py" in traced.workspace and b"vault:" in traced.workspace["deploy/production.env"]
    decoyed = family.instantiate(card, 0, {"distractor_files": 2})
    assert decoyed.params["decoy_files"] >= 4
    broken = family.instantiate(card, 0, {"error_recovery": 1})
    assert broken.params["unreadable"] == 2 and "skipped" in broken.instruction
    noisy = family.instantiate(card, 0, {"noise_level": 1})
    assert noisy.workspace != easy.workspace


def _first_finding(value: dict[str, Any]) -> dict[str, Any]:
    return value["findings"][0]


def _report_decoy(built: BuiltTask) -> Any:
    def change(value: dict[str, Any]) -> None:
        decoy = _expected(built)["decoy_files"][0]
        value["findings"].append({"file": decoy, "line": 7, "category": "fallback-secret", "severity": "critical"})
    return change


def _checksum_as_weak_crypto(workspace: Path) -> None:
    value = read_json(workspace, "out/findings.json")
    for path in sorted((workspace / "app").glob("*.py")):
        lines = path.read_text(errors="replace").split("\n")
        for number, line in enumerate(lines, 1):
            if "hashlib.md5(body)" in line:
                value["findings"].append({"file": f"app/{path.name}", "line": number, "category": "weak-crypto",
                                          "severity": "high"})
                write_json(workspace, "out/findings.json", value)
                return
    raise AssertionError("no checksum decoy planted")


def _all_critical(value: dict[str, Any]) -> None:
    for finding in value["findings"]:
        finding["severity"] = "critical"


def _line_off_by_one(value: dict[str, Any]) -> None:
    _first_finding(value)["line"] += 1


def _wrong_category(value: dict[str, Any]) -> None:
    finding = _first_finding(value)
    finding["category"] = "weak-crypto" if finding["category"] != "weak-crypto" else "weak-tls"


@pytest.mark.parametrize(("name", "edit"), [
    ("a finding left out", rewrite_json("out/findings.json", lambda v: v["findings"].pop())),
    ("a line off by one", rewrite_json("out/findings.json", _line_off_by_one)),
    ("a wrong category", rewrite_json("out/findings.json", _wrong_category)),
    ("every severity critical", rewrite_json("out/findings.json", _all_critical)),
    ("a finding reported twice", rewrite_json("out/findings.json", lambda v: v["findings"].append(v["findings"][0]))),
    ("unparseable files not listed", rewrite_json("out/findings.json", lambda v: v.update(skipped=[]))),
    ("a checksum reported as weak crypto", _checksum_as_weak_crypto),
])
def test_wrong_but_plausible_reports_are_rejected(built: BuiltTask, solved: Path, name: str, edit: Any) -> None:
    assert not built.verify_edited(solved, edit).passed, name


def test_an_out_of_scope_fixture_reported_is_rejected(built: BuiltTask, solved: Path) -> None:
    assert not built.verify_edited(solved, rewrite_json("out/findings.json", _report_decoy(built))).passed


def test_reordered_and_prefixed_reports_are_accepted(built: BuiltTask, solved: Path) -> None:
    def change(value: dict[str, Any]) -> None:
        value["findings"].reverse()
        _first_finding(value)["file"] = "/app/" + _first_finding(value)["file"]

    assert built.verify_edited(solved, rewrite_json("out/findings.json", change)).passed


def test_a_changed_protected_file_is_tampering(built: BuiltTask, solved: Path) -> None:
    def tamper(workspace: Path) -> None:
        (workspace / "Dockerfile").write_text((workspace / "Dockerfile").read_text() + "ENV DEBUG=0\n")

    outcome = built.verify_edited(solved, tamper)
    assert not outcome.passed and outcome.failure_type == "tampered_inputs"


def test_without_exclusion_rules_the_instruction_states_the_scope() -> None:
    output = SecurityAuditFamily().instantiate(card_for("tdd-workflow", "security-auditing"), 0,
                                               {"distractor_files": 1})
    assert not output.metadata["skill_claim"]["claimed"]
    assert "`tests/`" in output.instruction and "`*.example`" in output.instruction


@pytest.mark.slow
def test_the_reviewer_approves_the_task_built_for_the_seed_skill(tmp_path: Path, env_provider: LocalVenvProvider) -> None:
    assert_reviewer_approves(tmp_path, env_provider, "security-audit")


@pytest.mark.slow
def test_a_weakened_verifier_is_rejected_by_the_reviewer(tmp_path: Path, env_provider: LocalVenvProvider) -> None:
    assert_weakened_verifier_rejected(tmp_path, env_provider, "security-audit")
