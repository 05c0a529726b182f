"""symbolic-math: a generated worksheet answered in sympy syntax; the verifier parses answers
without evaluating them and checks equivalence; the skill's ordering rule for solution lists
makes the skill necessary where it states one."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from skillgym_builder.families.base import family_text
from skillgym_builder.families.seeds import seed_card
from skillgym_builder.families.symbolic_math import ARCHIVE, WORKSHEET, SymbolicMathFamily, root_order
from skillgym_core.conformance import check_task
from skillgym_core.envbuild import LocalVenvProvider, lint_environment

from tests.builder.family_support import (
    BuiltTask,
    assert_reviewer_approves,
    assert_weakened_verifier_rejected,
    build,
    card_for,
    rewrite_json,
    solution_helper,
)

KNOBS = {"record_count": 14, "noise_level": 0.5, "distractor_files": 1, "multi_step": 2, "error_recovery": 2}


def tutor() -> Any:
    return card_for("calculus-tutor", "education-tutoring", category="productivity")


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory, env_provider: LocalVenvProvider) -> BuiltTask:
    return build(SymbolicMathFamily(), tutor(), KNOBS, tmp_path_factory.mktemp("symbolic"), env_provider)


@pytest.fixture(scope="module")
def solved(built: BuiltTask) -> Path:
    ok, workspace = built.solve()
    assert ok
    return workspace


@pytest.fixture(scope="module")
def expected(built: BuiltTask) -> dict[str, Any]:
    return json.loads((built.task.tests / "expected.json").read_text())["problems"]


def _first(expected: dict[str, Any], kind: str) -> str:
    return next(pid for pid, spec in expected.items() if spec["kind"] == kind and spec["type"] != "malformed")


def test_fit_by_subcategory_and_terms_and_a_non_fit_with_its_reason() -> None:
    family = SymbolicMathFamily()
    assert family.suitability(seed_card(family.spec)).code == "subcategory"
    fit = family.suitability(tutor())
    assert fit.fits and fit.code == "terms" and fit.strength == 1
    unrelated = family.suitability(card_for("csv-cleanup", "editing-proofreading", category="writing"))
    assert not unrelated.fits and unrelated.code == "subcategory_not_served"


def test_the_ordering_rule_is_read_alike_by_builder_and_solution(tmp_path: Path) -> None:
    plain = tmp_path / "plain"
    plain.mkdir()
    text = (card_for("calculus-tutor", None).root / "SKILL.md").read_text()
    (plain / "SKILL.md").write_text(text.replace("are written in increasing order, no value repeated", "are listed"))
    cases = [(tutor(), "ascending"), (seed_card(SymbolicMathFamily().spec), "descending"),
             (card_for("plain", None, folder=plain), None)]
    for card, order in cases:
        fact = root_order(card)
        assert (fact.value if fact else None) == order
        namespace = solution_helper("common", "skillfacts.py", card.root / "SKILL.md")
        helper = family_text("symbolic-math", "mathsheet.py").replace("from skillfacts import skill_lines\n", "")
        helper_ns: dict[str, Any] = {"skill_lines": namespace["skill_lines"]}
        exec(helper, helper_ns)
        if order is None:
            with pytest.raises(SystemExit):
                helper_ns["root_order"]()
        else:
            assert helper_ns["root_order"]() == order


def test_without_an_ordering_rule_nothing_is_claimed_and_lists_are_sets(tmp_path: Path) -> None:
    plain = tmp_path / "plain"
    plain.mkdir()
    (plain / "SKILL.md").write_text("---\nname: plain-math\ndescription: sympy algebra and calculus\n---\n\n"
                                     "Use sympy for symbolic algebra, derivatives and integrals.\n")
    output = SymbolicMathFamily().instantiate(card_for("plain-math", "mathematics", folder=plain), 0, {})
    assert not output.metadata["skill_claim"]["claimed"]
    assert "Any order." in output.instruction and "reorder_lists" in output.equivalences["out/answers.json"]
    assert json.loads(output.tests["expected.json"])["order"] is None


def test_knobs_change_the_instance() -> None:
    family, card = SymbolicMathFamily(), tutor()
    base = family.instantiate(card, 0, {})
    sheet = base.workspace[WORKSHEET].decode()
    assert sheet.count("### P") == 8 and "^" not in sheet and set(base.workspace) == {WORKSHEET}

    def raised(name: str, level: float) -> Any:
        return family.instantiate(card, 0, {name: level})

    assert raised("record_count", 24).workspace[WORKSHEET].decode().count("### P") == 24
    noisy = raised("noise_level", 1.0).workspace[WORKSHEET].decode()
    assert any(token in noisy for token in ("^", "ln(", "arctan(", "infinity")) and noisy != sheet
    assert set(raised("distractor_files", 1).workspace) == {WORKSHEET, *ARCHIVE}
    chained = raised("multi_step", 2).workspace[WORKSHEET].decode()
    assert chained.count("(multi-step)") == 2 and "your answer to P" in chained
    broken = json.loads(raised("error_recovery", 4).tests["expected.json"])["problems"]
    assert sum(spec["type"] == "malformed" for spec in broken.values()) == 4


def test_task_conforms_and_the_untouched_workspace_fails(built: BuiltTask) -> None:
    assert check_task(built.task.root) == []
    assert lint_environment(built.task) == []
    assert not built.untouched().passed
    assert {p.path for p in built.metadata.protected_inputs} == {WORKSHEET, *ARCHIVE}
    assert "increasing" not in built.task.instruction() and "prescribes" in built.task.instruction()


def test_reference_and_alternative_pass(built: BuiltTask, solved: Path) -> None:
    assert built.verify(solved).passed
    ok, alternative = built.solve("alternatives/other-solvers.sh")
    assert ok and built.verify(alternative).passed


def test_skill_is_needed_and_the_hidden_skill_run_fails(built: BuiltTask) -> None:
    dependence = built.extra("skill_dependence")
    assert dependence["claimed"] and dependence["holds"], dependence
    assert set(dependence["facts"]) == {"root_order"}
    ok, workspace = built.solve(with_skill=False)
    assert not ok and not built.verify(workspace).passed


def _set(pid_of: Any, value: Any) -> Any:
    def change(answers: dict[str, Any], expected: dict[str, Any]) -> None:
        pid = pid_of(expected)
        answers["answers"][pid] = value(answers["answers"][pid], expected[pid]) if callable(value) else value
    return change


def _roots_reversed(answers: dict[str, Any], expected: dict[str, Any]) -> None:
    pid = next(p for p, s in expected.items() if s["type"] == "roots" and len(s["answer"]) > 1)
    answers["answers"][pid] = answers["answers"][pid][::-1]


def _old_key(answers: dict[str, Any], expected: dict[str, Any], workspace: Path) -> None:
    key = json.loads((workspace / ARCHIVE[1]).read_text())["key"]
    answers["answers"].update(key)


WRONG = [
    ("roots against the skill's order", _roots_reversed),
    ("an unevaluated Integral", _set(lambda e: _first(e, "antiderivative"), "Integral(x, x)")),
    ("the problem copied back", _set(lambda e: _first(e, "simplify"), lambda mine, spec: f"({mine})*(x**2 - 1)/((x - 1)*(x + 1))")),
    ("a sign error in a derivative", _set(lambda e: _first(e, "derivative"), lambda mine, spec: f"-({mine})")),
    ("a decimal for an exact integral", _set(lambda e: _first(e, "definite_integral"),
                                              lambda mine, spec: f"1.0*({mine})")),
    ("the order term kept", _set(lambda e: _first(e, "series"), lambda mine, spec: f"{mine} + O(x**6)")),
    ("a malformed problem guessed", _set(lambda e: next(p for p, s in e.items() if s["type"] == "malformed"), "0")),
    ("a valid problem called malformed", _set(lambda e: _first(e, "limit"), "malformed")),
    ("a root listed twice", _set(lambda e: _first(e, "solve"), lambda mine, spec: [*mine, mine[0]])),
    ("a general ODE solution", _set(lambda e: _first(e, "ode"), lambda mine, spec: f"{mine} + C1*exp(x)")),
    ("an extra system unknown", _set(lambda e: _first(e, "system"), lambda mine, spec: {**mine, "w": "0"})),
]


@pytest.mark.parametrize(("name", "change"), WRONG, ids=[name for name, _ in WRONG])
def test_wrong_but_plausible_answers_are_rejected(built: BuiltTask, solved: Path, expected: dict[str, Any],
                                                  name: str, change: Any) -> None:
    outcome = built.verify_edited(solved, rewrite_json("out/answers.json", lambda value: change(value, expected)))
    assert not outcome.passed, name


def test_copying_the_old_marking_key_is_rejected(built: BuiltTask, solved: Path, expected: dict[str, Any]) -> None:
    def edit(workspace: Path) -> None:
        rewrite_json("out/answers.json", lambda value: _old_key(value, expected, workspace))(workspace)

    assert not built.verify_edited(solved, edit).passed


def test_equivalent_forms_are_accepted(built: BuiltTask, solved: Path, expected: dict[str, Any]) -> None:
    def change(value: dict[str, Any]) -> None:
        answers = value["answers"]
        answers[_first(expected, "antiderivative")] += " + 7"
        answers[_first(expected, "derivative")] = f"(({answers[_first(expected, 'derivative')]})*2)/2"
        system = _first(expected, "system")
        answers[system] = {k: f"({v}) + 0*pi" for k, v in answers[system].items()}

    assert built.verify_edited(solved, rewrite_json("out/answers.json", change)).passed


def test_hostile_answers_are_parsed_never_run(built: BuiltTask, solved: Path, expected: dict[str, Any]) -> None:
    hostile = ["__import__('os').system('touch /app/pwned')", "(lambda: 1)()", "x.__class__", "10**10**10**10",
               "[x for x in ().__class__.__base__.__subclasses__()]", "x" * 5000]
    pids = [p for p, s in expected.items() if s["type"] in ("expr", "number")][: len(hostile)]

    def change(value: dict[str, Any]) -> None:
        value["answers"].update(dict(zip(pids, hostile, strict=False)))

    def edit(workspace: Path) -> None:
        rewrite_json("out/answers.json", change)(workspace)

    outcome = built.verify_edited(solved, edit)
    assert not outcome.passed and outcome.failure_type == "verifier_rejected"
    assert not any(built.scratch.glob("edited-*/pwned"))


def test_a_changed_worksheet_is_tampering(built: BuiltTask, solved: Path) -> None:
    def tamper(workspace: Path) -> None:
        path = workspace / WORKSHEET
        path.write_text(path.read_text().replace("### P01", "### P01 (easy)", 1))

    outcome = built.verify_edited(solved, tamper)
    assert not outcome.passed and outcome.failure_type == "tampered_inputs"


@pytest.mark.slow
def test_the_reviewer_approves_the_task_built_for_the_seed_skill(tmp_path: Path, env_provider: LocalVenvProvider) -> None:
    assert_reviewer_approves(tmp_path, env_provider, "symbolic-math")


@pytest.mark.slow
def test_a_weakened_verifier_is_rejected_by_the_reviewer(tmp_path: Path, env_provider: LocalVenvProvider) -> None:
    assert_weakened_verifier_rejected(tmp_path, env_provider, "symbolic-math")
