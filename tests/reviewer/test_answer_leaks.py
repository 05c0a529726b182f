"""The leak scans for answers told piecemeal (short worked-out values, id prefixes) and for
fixes shipped as patches."""

from __future__ import annotations

import difflib
import json
from pathlib import Path

from skillgym_reviewer.gates.answer_values import VisibleText, id_prefixes, told_values
from skillgym_reviewer.gates.patches import apply, parse, patches_to_solution

ANSWER = {"limit": 40, "employees": [{"name": "Dana", "week": "2024-W10", "overtime": 6.5},
                                     {"name": "Eli", "week": "2024-W11", "overtime": 2.25},
                                     {"name": "Gus", "week": "2024-W11", "overtime": 3.5}]}
INPUTS = {"timesheet.csv": "employee,date,hours\nDana,2024-03-04,9.5\nEli,2024-03-11,9.0\nGus,2024-03-11,11.0\n"}


def test_values_told_in_prose_are_a_leak_but_a_stated_parameter_is_not() -> None:
    outputs = {"out/overtime.json": json.dumps(ANSWER).encode()}
    plain = "The weekly limit is 40 hours. Round to 2 decimals. Write out/overtime.json."
    assert told_values(outputs, VisibleText(plain, INPUTS)) == {}
    told = plain + " Payroll flagged Dana (6.5 h), Eli (2.25 h) and Gus (3.5 h)."
    assert sorted(told_values(outputs, VisibleText(told, INPUTS))["out/overtime.json"]) == ["2.25", "3.5", "40", "6.5"]


def test_a_prefix_of_the_answer_id_is_a_leak() -> None:
    commit = "d440c5125d58a4b3f0e6c1f9b2a7e8d3c4b5a697"
    outputs = {"out/answer.json": json.dumps({"commit": commit}).encode()}
    assert id_prefixes(outputs, {"instruction.md": f"Ops believe it was `{commit[:10]}`."})
    assert id_prefixes(outputs, {"instruction.md": "Find the commit; 2024 was a busy year (see 0xdeadbeef)."}) == []
    assert id_prefixes(outputs, {"workspace/refs": commit + "\n"}) == []  # the full id is an input, not a hint


def test_a_patch_that_gives_the_reference_result_is_found(tmp_path: Path) -> None:
    before, after = "def f(x):\n    return x\n\n\nY = 1\n", "def f(x):\n    return x + 1\n\n\nY = 1\n"
    diff = "".join(difflib.unified_diff(before.splitlines(keepends=True), after.splitlines(keepends=True),
                                        "a/pkg/f.py", "b/pkg/f.py"))
    assert apply(before, parse(diff)[0]) == after
    assert apply("something else\n", parse(diff)[0]) is None
    initial, solved = tmp_path / "initial", tmp_path / "solved"
    for root, text in ((initial, before), (solved, after)):
        (root / "pkg").mkdir(parents=True)
        (root / "pkg" / "f.py").write_text(text)
    workspace = {"pkg/f.py": before.encode(), "fix.diff": diff.encode()}
    assert patches_to_solution(workspace, initial, solved)
    other = diff.replace("x + 1", "x + 2")
    assert patches_to_solution({"pkg/f.py": before.encode(), "fix.diff": other.encode()}, initial, solved) == []
