"""Letter case where the instruction makes it part of the answer."""

from __future__ import annotations

import pytest
from skillgym_reviewer.gates.mutation.exactness import case_asked, decisive_near_misses
from skillgym_reviewer.gates.mutation.lettercase import case_mutants
from skillgym_reviewer.gates.mutation.model import Mutant, TrialResult


@pytest.mark.parametrize(("instruction", "asked"), [
    ("Write each name exactly as it appears in the CSV.", True),
    ("List every link target as written, before any `#`.", True),
    ("Region names keep their letter case.", True),
    ("Contigs are wrapped and partly lower case.", False),  # says what the input looks like
    ("Tags are case-sensitive.", True),
    ("Rank the regions by revenue, highest first.", False),
    ("Ids are lowercase; they are matched case-insensitively.", False),
    ("Write the names as written in the file; letter case does not matter.", False),
])  # fmt: skip
def test_case_is_asked_only_where_the_instruction_makes_it_part_of_the_answer(instruction: str, asked: bool) -> None:
    assert case_asked(instruction) is asked


@pytest.mark.parametrize(("value", "changed"), [
    ("Depot North", "depot north"), ("ok", "OK"), ("north-east", "NORTH-EAST"),
    ("2024-03-12T10:00:00", None), ("alice@example.com", None), ("SKU-102", None), ("MKVLAAGIRRW", None),
    ("src/app.py", None), ("42", None),
])  # fmt: skip
def test_only_values_made_of_words_change_case(value: str, changed: str | None) -> None:
    from skillgym_reviewer.gates.mutation.nearmiss import other_case

    assert other_case(value) == changed


def test_case_mutants_change_one_value_per_field_of_structured_outputs() -> None:
    outputs = {
        "out.json": b'{"depot": {"name": "Depot North", "count": 3}, "ids": ["ann", "bo"]}\n',
        "t.csv": b"id,name\n1,alpha\n2,Beta\n",
        "notes.md": b"# Title\n",
    }
    mutants = case_mutants(outputs, seed=0)
    by_place = {(m.file, m.location): m.content.decode() for m in mutants}
    assert by_place[("out.json", "$.depot.name")] == '{"depot": {"name": "depot north", "count": 3}, "ids": ["ann", "bo"]}\n'
    assert ("out.json", "$.depot.count") not in by_place  # numbers have no case
    assert sum(1 for file, where in by_place if where.startswith("$.ids")) == 1  # one site per field
    assert any(file == "t.csv" and ("ALPHA" in text or "beta" in text) for (file, _), text in by_place.items())
    assert not any(file == "notes.md" for file, _ in by_place)
    assert all(m.cover and m.operator == "change_case" for m in mutants)


def test_a_case_change_accepted_where_a_wrong_value_was_rejected_is_decisive() -> None:
    wrong = Mutant("out.json", "leaf_nudge", "$.depot.name", b"{}", "value")
    recased = Mutant("out.json", "change_case", "$.depot.name", b"{}", "value", cover=True)
    elsewhere = Mutant("out.json", "change_case", "$.note", b"{}", "value", cover=True)
    results = [TrialResult(wrong.name, "output", "killed", 0.0), TrialResult(recased.name, "output", "survived", 1.0),
               TrialResult(elsewhere.name, "output", "survived", 1.0)]
    mutants = {m.name: m for m in (wrong, recased, elsewhere)}
    assert decisive_near_misses(results, mutants) == [recased.name]
