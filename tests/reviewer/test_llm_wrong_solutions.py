"""Wrong solutions written by the reviewer model (a scripted OpenAI-compatible double over real
HTTP): each runs like the reference solution; one the verifier accepts is a surviving mutant."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from skillgym_core.llm import LLMClient, LLMSettings
from skillgym_reviewer import ReviewerSettings, review_task_dir
from skillgym_reviewer.gates.mutation.llm import WrongSolutionWriter, parse_solutions

from tests.reviewer import catalogue
from tests.support.scripted_llm import Rules, ScriptedLLMServer, assistant

OFF_BY_ONE = ("bash /solution/solve.sh\n"
              "python3 -c \"import json; p='out/report.json'; d=json.load(open(p)); d['count'] += 1; "
              "json.dump(d, open(p, 'w'))\"\n")
SOLUTIONS = [
    {"criterion": "count is the number of items", "script": OFF_BY_ONE},
    {"criterion": "nothing (the reference itself)", "script": "bash /solution/solve.sh\n"},
]


def _wrong_solutions(body: dict[str, Any]) -> dict[str, Any]:
    return assistant(json.dumps({"solutions": SOLUTIONS}))


def _model() -> Rules:
    return Rules([("You test the verifier of a practice task", _wrong_solutions)],
                 default=lambda body: assistant(json.dumps({"verdict": "approve", "failure_type": None, "reasons": []})))


def _llm_trials(report: Any) -> dict[str, dict[str, Any]]:
    gate = next(g for g in report.gates if g.gate == "mutation")
    return {t["name"]: t for t in gate.details["trials"] if t["kind"] == "llm_solution"}


def test_model_answers_are_parsed_leniently() -> None:
    text = "Here you go: " + json.dumps({"solutions": [*SOLUTIONS, {"criterion": "x", "script": "  "}, "junk"]})
    assert [s.criterion for s in parse_solutions(text, 5)] == [s["criterion"] for s in SOLUTIONS]
    assert parse_solutions("no json at all", 3) == [] and parse_solutions('{"verdict": "approve"}', 3) == []
    assert len(parse_solutions(text, 1)) == 1


@pytest.mark.slow
@pytest.mark.parametrize(("count", "verdict"), [("exact", "killed"), ("anything", "survived")])
def test_wrong_solutions_from_the_model_are_run_and_judged(tmp_path: Path, count: str, verdict: str) -> None:
    with ScriptedLLMServer(_model()) as server:
        settings = ReviewerSettings(reviewer_llm_base_url=server.base_url, mutation_llm_solutions=2)
        report = review_task_dir(catalogue.write_task(tmp_path / count, count=count).root, settings)
        asked = [r for r in server.requests if "You test the verifier" in json.dumps(r)]
    assert len(asked) == 1 and "acceptance_criteria" in json.dumps(asked[0])
    trials = _llm_trials(report)
    off_by_one = trials["llm_solution:1:count is the number of items"]
    assert off_by_one["verdict"] == verdict
    assert trials["llm_solution:2:nothing (the reference itself)"]["verdict"] == "equivalent"
    assert report.mutation is not None
    if verdict == "killed":
        assert report.passed, report.reasons
        assert off_by_one["failed_items"] == ["count"]
    else:
        assert not report.passed and report.failure_type == "too_lax"
        assert "llm_solution:1:count is the number of items" in report.mutation["survivors"]


def test_an_unreachable_model_gives_no_wrong_solutions_and_a_note(tmp_path: Path) -> None:
    with ScriptedLLMServer(_model(), fail_first=100) as server:
        client = LLMClient(LLMSettings(base_url=server.base_url, timeout_s=2.0, backoff_s=0.01), role="reviewer")
        task = catalogue.write_task(tmp_path / "offline")
        solutions, note = WrongSolutionWriter(client, 2).write(task, {}, {}, {})
    assert solutions == [] and note.startswith("the model wrote no wrong solutions: llm_unavailable")
