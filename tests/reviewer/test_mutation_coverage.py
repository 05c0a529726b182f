"""What lets every check be seen to catch something: a verifier's composite items report their
checks (``item:check``), each judged like an item; empty lists and pasted-in text are mutated;
and a check that no wrong result fails is named."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from skillgym_core.taskrun import VerifierOutcome
from skillgym_reviewer.gates.mutation.borrowed import borrowable_lines, borrowed_text_mutants, text_sources
from skillgym_reviewer.gates.mutation.model import TrialResult, seeded
from skillgym_reviewer.gates.mutation.score import MutationScore, judge
from skillgym_reviewer.gates.mutation.structured import filled_empty_lists

from tests.reviewer.weaken import composite_checks

RUNNER = Path(__file__).resolve().parents[2] / "shared/skillgym_core/data/verifier/checks.py"


def _verdict(tmp_path: Path, body: str) -> dict[str, float]:
    tests = tmp_path / "tests"
    tests.mkdir()
    (tests / "checks.py").write_text(RUNNER.read_text())
    (tests / "rubric.json").write_text(json.dumps([{"name": "doc", "weight": 0.5}, {"name": "rows", "weight": 0.5}]))
    (tests / "expected.json").write_text("{}")
    (tests / "verify.py").write_text("import sys, os\nsys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))\n"
                                     "from checks import run, share\n" + body)
    logs = tmp_path / "logs"
    logs.mkdir()
    env = {"SKILLGYM_VERIFIER_LOGS": str(logs), "SKILLGYM_APP_DIR": str(tmp_path), "PATH": "/usr/bin:/bin"}
    subprocess.run([sys.executable, str(tests / "verify.py")], env=env, check=True, capture_output=True)
    return json.loads((logs / "reward.json").read_text())  # type: ignore[no-any-return]


def test_a_composite_item_reports_each_check_beside_the_items(tmp_path: Path) -> None:
    rewards = _verdict(tmp_path, "def bad():\n    raise ValueError('no')\n"
                                 "run([('doc', lambda: share('doc', [('schema', lambda: True), ('fields', bad)])),"
                                 " ('rows', lambda: 1.0)])\n")
    assert rewards == {"reward": 0.75, "doc": 0.5, "rows": 1.0, "doc:schema": 1.0, "doc:fields": 0.0}


def test_composite_checks_are_listed_from_the_verifier_source() -> None:
    source = "run([('doc', lambda: share('doc', [('schema', s), ('fields', f)]))])\n"
    assert composite_checks(source) == ["doc:schema", "doc:fields"]


def _outcome(rewards: dict[str, float]) -> VerifierOutcome:
    return VerifierOutcome(0.5, {"reward": 0.5, **rewards}, False, "verifier_rejected", None)


def test_a_check_is_failed_only_where_it_was_scored() -> None:
    items = ["doc", "doc:fields", "doc:schema", "rows"]
    assert judge(_outcome({"doc": 0.5, "doc:fields": 0.0, "doc:schema": 1.0, "rows": 1.0}), items)[1] == ["doc", "doc:fields"]
    # the item stopped before its checks (unreadable output): they are not credited with the kill
    assert judge(_outcome({"doc": 0.0, "rows": 1.0}), items)[1] == ["doc"]


def test_a_check_no_wrong_result_failed_is_named_apart_from_items() -> None:
    results = [TrialResult("m1", "output", "killed", 0.5, ["doc", "doc:schema"]),
               TrialResult("m2", "output", "killed", 0.5, ["rows"])]
    score = MutationScore(["doc", "doc:fields", "doc:schema", "rows"], results)
    reasons = score.shortfalls(0.9, every_item=True)
    assert score.unkilled_items == ["doc:fields"]
    assert len(reasons) == 1 and "checks inside rubric items" in reasons[0] and "doc:fields" in reasons[0]


def test_an_empty_list_is_filled_with_a_name_the_output_uses() -> None:
    tree = {"documents": {"docs/a.pdf": {"pages": 2}}, "skipped": [], "unreadable": []}
    changes = filled_empty_lists(tree, seeded(1, "t"))
    assert {(name, path) for name, path, _, _ in changes} == {("fill_empty_list", ("skipped",)),
                                                              ("fill_empty_list", ("unreadable",))}
    assert all(new[path[0]] == ["docs/a.pdf"] for _, path, new, _ in changes)


def test_placeholders_and_prose_of_the_skill_are_pasted_and_the_output_padded(tmp_path: Path) -> None:
    skills = tmp_path / "skills" / "plan"
    skills.mkdir(parents=True)
    (skills / "SKILL.md").write_text("# Plan\n\n<Two sentences: what and why.>\n\n- [ ] <Step>\n- [ ] <Step>\n\n"
                                     "Always keep the plan short and name every file the change touches by path.\n")
    (tmp_path / "skills" / "logo.png").write_bytes(b"\x89PNG\r\n")
    sources = text_sources(tmp_path / "skills", {"REQUEST.md": b"Please rename the parse function everywhere it is used.\n",
                                                 "data.bin": b"\xff\xfe"})
    assert set(sources) == {"skill:plan/SKILL.md", "input:REQUEST.md"}
    lines = dict(borrowable_lines(sources))
    assert lines["skill:plan/SKILL.md:placeholder line 3"] == "<Two sentences: what and why.>"
    assert lines["skill:plan/SKILL.md:placeholder line 5"] == "- [ ] <Step>"
    assert "skill:plan/SKILL.md:placeholder line 6" not in lines  # the same placeholder again
    mutants = borrowed_text_mutants("out/plan.md", "# My plan\n\nDo it.\n", sources, set())
    pasted = {m.location: m.content.decode() for m in mutants if m.operator == "paste_line"}
    assert pasted["skill:plan/SKILL.md:placeholder line 3"] == "# My plan\n<Two sentences: what and why.>\n\nDo it.\n"
    padded = next(m for m in mutants if m.operator == "pad_text")
    assert len(padded.content.split()) > 2 * len(["#", "My", "plan", "Do", "it."])
    assert all(m.cover for m in mutants)
