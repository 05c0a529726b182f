"""Mutation operators per file kind: each makes a named, deterministic, wrong-but-well-formed
change, and the cap spreads the mutants over files and operators."""

from __future__ import annotations

import ast
import csv
import io
import json
from typing import Any

import yaml
from skillgym_reviewer.gates.mutation.generate import file_kind, file_mutants, output_mutants
from skillgym_reviewer.gates.mutation.runs import solution_steps, without_step
from skillgym_reviewer.gates.mutation.structured import render, walk

ANSWER = {"items": [{"sku": "a-01", "total": 12.5, "paid": True}, {"sku": "b-02", "total": 3, "paid": False}],
          "count": 2, "note": "ok"}
ANSWER_JSON = (json.dumps(ANSWER, indent=2) + "\n").encode()
TABLE = b"sku,name,qty,price\na-01,apple,3,1.25\nb-02,pear,5,0.75\nc-03,plum,2,2.10\n"
MARKDOWN = b"# Report\n\nWe counted 12 items.\n\n## Fruit\napple step-01\npear\n\n## Nuts\nalmond\n"
PYTHON = b'def total(rows):\n    """Sum."""\n    value = 0\n    for row in rows:\n        if row > 2:\n            value += row\n    return value\n'


def _operators(grouped: dict[str, list]) -> set[str]:  # type: ignore[type-arg]
    return {op for op, mutants in grouped.items() if mutants}


def test_file_kinds_follow_suffix_and_content() -> None:
    assert file_kind("a.json", ANSWER_JSON) == "json"
    assert file_kind("a.txt", ANSWER_JSON) == "json"  # JSON content without the suffix
    assert file_kind("bad.json", b"{not json") == "text"
    assert file_kind("t.csv", TABLE) == "table"
    assert file_kind("r.md", MARKDOWN) == "markdown"
    assert file_kind("m.py", PYTHON) == "python"
    assert file_kind("c.yaml", b"a: 1\nb: [1, 2]\n") == "yaml"
    assert file_kind("e.jsonl", b'{"a": 1}\n{"a": 2}\n') == "jsonl"
    assert file_kind("blob.bin", b"\x00\x01\x02") == "binary"


def test_json_operators_are_structure_aware_and_named() -> None:
    grouped = file_mutants("answer.json", ANSWER_JSON, seed=0)
    assert _operators(grouped) >= {"leaf_nudge", "bool_flip", "swap_elements", "drop_element", "drop_key",
                                   "duplicate_element", "rename_key", "change_type"}
    for mutants in grouped.values():
        for mutant in mutants:
            changed = json.loads(mutant.content)  # still valid JSON, in the original's style
            assert changed != ANSWER
            assert mutant.content.endswith(b"\n") and b'\n  "' in mutant.content
            assert mutant.name.startswith(f"answer.json:{mutant.operator}:$")
    flips = {m.location: json.loads(m.content) for m in grouped["bool_flip"]}
    assert flips["$.items[0].paid"]["items"][0]["paid"] is False
    nudged = {m.location: json.loads(m.content) for m in grouped["leaf_nudge"]}
    for location, tree in nudged.items():
        if location == "$.count":
            assert tree["count"] in (1, 3)
        if location.endswith(".total") and location.startswith("$.items[0]"):
            assert tree["items"][0]["total"] != 12.5 and abs(tree["items"][0]["total"] - 12.5) < 2
    swapped = json.loads(grouped["swap_elements"][0].content)
    assert swapped["items"] == ANSWER["items"][::-1]
    original = dict((render(path), value) for path, value in walk(ANSWER))
    for mutant in grouped["change_type"]:
        retyped = dict((render(path), value) for path, value in walk(json.loads(mutant.content)))
        assert retyped[mutant.location] == [original[mutant.location]]
    for mutant in grouped["rename_key"]:
        renamed = {render(path) for path, _ in walk(json.loads(mutant.content))}
        assert mutant.location not in renamed and len(renamed) == len(original)


def test_mutants_are_deterministic_per_seed() -> None:
    first = output_mutants({"answer.json": ANSWER_JSON, "t.csv": TABLE}, seed=3, cap=100)
    again = output_mutants({"answer.json": ANSWER_JSON, "t.csv": TABLE}, seed=3, cap=100)
    assert [(m.name, m.content) for m in first] == [(m.name, m.content) for m in again]
    # a file's mutants do not depend on which other files are mutated
    alone = {(m.name, m.content) for m in output_mutants({"t.csv": TABLE}, seed=3, cap=100)}
    assert alone == {(m.name, m.content) for m in first if m.file == "t.csv"}
    other_seed = output_mutants({"answer.json": ANSWER_JSON, "t.csv": TABLE}, seed=4, cap=100)
    assert [(m.name, m.content) for m in other_seed] != [(m.name, m.content) for m in first]


def test_cap_spreads_mutants_over_files_and_operators() -> None:
    outputs = {"answer.json": ANSWER_JSON, "t.csv": TABLE, "r.md": MARKDOWN}
    chosen = output_mutants(outputs, seed=0, cap=12)
    assert len(chosen) == 12
    assert {m.file for m in chosen} == set(outputs)  # every file before any file's second region
    assert len({(m.file, m.content) for m in chosen}) == len(chosen)
    assert all(m.content != outputs[m.file] for m in chosen)
    wide = output_mutants(outputs, seed=0, cap=200)
    assert len({m.operator for m in wide if m.file == "answer.json"}) >= 8


def test_every_region_gets_a_mutant_before_the_random_draws() -> None:
    """However the seed falls, each key path of a tree, each column and the header of a table is
    changed by some mutant: a rubric item that checks only one of them still meets one."""
    report: dict[str, Any] = {"regions": [{"region": f"r{i}", "revenue": 10.5 * i, "orders": i} for i in range(1, 9)],
              "grand_total": 378.0, "currency": "EUR"}
    data = (json.dumps(report, indent=2) + "\n").encode()
    for seed in range(6):
        chosen = output_mutants({"report.json": data, "t.csv": TABLE}, seed=seed, cap=40)
        json_regions = set()
        for mutant in (m for m in chosen if m.file == "report.json" and m.effect == "value"):
            changed = json.loads(mutant.content)
            json_regions |= {key for key in ("grand_total", "currency") if changed[key] != report[key]}
            json_regions |= {f"regions.{key}" for row, new in zip(report["regions"], changed["regions"], strict=False)
                             for key in row if new.get(key) != row[key]}
        assert json_regions == {"grand_total", "currency", "regions.region", "regions.revenue", "regions.orders"}
        tables = [_rows(m.content) for m in chosen if m.file == "t.csv"]
        original = _rows(TABLE)
        assert any(rows[0] != original[0] for rows in tables)  # the header
        for c in range(len(original[0])):
            assert any(len(rows) == len(original) and rows[0] == original[0]
                       and any(row[c] != orig[c] for row, orig in zip(rows[1:], original[1:], strict=True))
                       for rows in tables), original[0][c]


def _rows(content: bytes) -> list[list[str]]:
    return list(csv.reader(io.StringIO(content.decode())))


def test_table_operators_keep_the_header_and_the_format() -> None:
    grouped = file_mutants("t.csv", TABLE, seed=0)
    assert _operators(grouped) == {"drop_row", "duplicate_row", "swap_rows", "perturb_cell", "change_cell",
                                   "swap_column_values", "fine_nudge", "truncate_number", "recase_identifier", "cover"}
    original = _rows(TABLE)
    for mutant in (m for ms in grouped.values() for m in ms):
        rows = _rows(mutant.content)
        assert rows[0] == original[0] or mutant.operator == "rename_header", mutant.name
        assert mutant.content.endswith(b"\n") and b"\r" not in mutant.content
    assert len(_rows(grouped["drop_row"][0].content)) == len(original) - 1
    assert len(_rows(grouped["duplicate_row"][0].content)) == len(original) + 1
    assert sorted(_rows(grouped["swap_rows"][0].content)) == sorted(original)
    perturbed = _rows(grouped["perturb_cell"][0].content)
    changed = [(r, c) for r, row in enumerate(perturbed) for c, cell in enumerate(row) if cell != original[r][c]]
    assert len(changed) == 1
    r, c = changed[0]
    assert float(perturbed[r][c]) != float(original[r][c])
    assert len(perturbed[r][c].split(".")[-1]) == len(original[r][c].split(".")[-1])  # decimals kept
    assert grouped["perturb_cell"][0].location.startswith("row ")


def test_tsv_uses_tabs() -> None:
    mutants = file_mutants("t.tsv", TABLE.replace(b",", b"\t"), seed=0)["drop_row"]
    assert b"\t" in mutants[0].content and b"," not in mutants[0].content


def test_text_and_markdown_operators() -> None:
    grouped = file_mutants("r.md", MARKDOWN, seed=0)
    assert _operators(grouped) >= {"drop_line", "duplicate_line", "swap_lines", "change_number", "change_identifier",
                                   "drop_section", "duplicate_section", "swap_sections"}
    number = grouped["change_number"][0]
    assert number.location.startswith("line 3:12") and b"We counted 12 items" not in number.content
    swapped = grouped["swap_sections"][0].content.decode()
    assert swapped.index("## Nuts") < swapped.index("## Fruit")
    dropped = grouped["drop_section"][0].content.decode()
    assert dropped.count("## ") == MARKDOWN.decode().count("## ") - 1
    plain = file_mutants("plan.txt", b"wash\ncut\ncook\n", seed=0)
    assert _operators(plain) >= {"drop_line", "duplicate_line", "swap_lines", "change_identifier"}
    for mutant in (m for ms in plain.values() for m in ms):
        assert mutant.content.endswith(b"\n")
        assert sorted(mutant.content.split()) != sorted(b"wash cut cook".split()) or mutant.operator == "swap_lines"


def test_python_operators_edit_the_source_in_place() -> None:
    grouped = file_mutants("m.py", PYTHON, seed=0)
    assert _operators(grouped) == {"flip_comparison", "change_constant", "delete_statement"}
    for mutant in (m for ms in grouped.values() for m in ms):
        ast.parse(mutant.content)
        assert b'"""Sum."""' in mutant.content  # the docstring is never the deleted statement
    assert b"row <= 2" in grouped["flip_comparison"][0].content
    assert any(b"row > 3" in m.content or b"row > 1" in m.content or b"value = 1" in m.content
               for m in grouped["change_constant"])
    assert all(b"pass" in m.content for m in grouped["delete_statement"])


def test_yaml_and_jsonl_operators() -> None:
    grouped = file_mutants("c.yaml", b"name: demo\nretries: 3\nhosts: [a, b]\n", seed=0)
    assert "leaf_nudge" in grouped and "swap_elements" in grouped
    assert all(yaml.safe_load(m.content) != {"name": "demo", "retries": 3, "hosts": ["a", "b"]}
               for ms in grouped.values() for m in ms)
    lines = file_mutants("e.jsonl", b'{"id": "a", "n": 1}\n{"id": "b", "n": 2}\n', seed=0)
    assert {"drop_line", "swap_lines", "leaf_nudge"} <= set(lines)
    for mutant in lines["leaf_nudge"]:
        assert [json.loads(line) for line in mutant.content.splitlines()]
        assert mutant.location.startswith("line ")


def test_binary_operators() -> None:
    data = bytes(range(64))
    grouped = file_mutants("blob.bin", data, seed=0)
    flipped = grouped["flip_byte"][0].content
    assert len(flipped) == len(data) and sum(a != b for a, b in zip(flipped, data, strict=True)) == 1
    assert grouped["truncate"][0].content == data[: len(data) - len(data) // 10]


def test_solution_steps_are_top_level_commands_only() -> None:
    script = "#!/usr/bin/env bash\nset -euo pipefail\ncd /app\nOUT=out\nmkdir -p out\npython3 /solution/a.py\n"
    steps = solution_steps(script)
    assert steps is not None and [s.command for s in steps] == ["mkdir -p out", "python3 /solution/a.py"]
    assert "python3 /solution/a.py" not in without_step(script, steps[1]) and "cd /app" in without_step(script, steps[1])
    assert solution_steps("cd /app\nfor f in *; do\n  echo $f\ndone\n") is None
    assert solution_steps("cd /app\ncat > x <<EOF\nhi\nEOF\n") is None
    assert solution_steps("cd /app\npython3 -c \"\nprint(1)\n\"\n") is None


def test_near_miss_values() -> None:
    import random

    from skillgym_reviewer.gates.mutation.nearmiss import fine_nudge, recased, shortened_id, truncated

    rng = random.Random(0)
    moved = fine_nudge(21.58, rng)
    assert moved is not None and moved != 21.58 and int(moved) == 21 and abs(moved - 21.58) >= 0.02
    assert truncated(21.58, rng) == 21.0 and truncated(-3.5, rng) == -3.0 and truncated(20.0, rng) is None
    assert recased("fast-mode", rng) == "fast mode" and recased("step_one.v2", rng) == "step one v2"
    assert recased("Install", rng) is None and recased("from source", rng) is None
    commit = "d440c5125d58a4b3f0e6c1f9b2a7e8d3c4b5a697"
    short = shortened_id(commit, rng)
    assert short is not None and commit.startswith(short) and len(short) in (7, 10)
    assert shortened_id("deadbeef", rng) is None and shortened_id("2024031512345678", rng) is None


def test_near_miss_operators_on_trees_and_tables() -> None:
    report = {"commit": "d440c5125d58a4b3f0e6c1f9b2a7e8d3c4b5a697", "anchor": "dry-runs",
              "rows": [{"name": "Dana", "hours": 6.5}, {"name": "Eli", "hours": 2.25}]}
    grouped = file_mutants("a.json", (json.dumps(report, indent=2) + "\n").encode(), seed=0)
    assert {"fine_nudge", "truncate_number", "recase_identifier", "shorten_id", "add_zero_record"} <= set(grouped)
    assert json.loads(grouped["shorten_id"][0].content)["commit"] in (report["commit"][:7], report["commit"][:10])
    added = json.loads(grouped["add_zero_record"][0].content)["rows"]
    assert len(added) == 3 and any(row["hours"] == 0 and row["name"] not in ("Dana", "Eli") for row in added)
    for mutant in grouped["truncate_number"]:
        assert all(row["hours"] == int(row["hours"]) for row in json.loads(mutant.content)["rows"]
                   if row["hours"] not in (6.5, 2.25))
    table = file_mutants("t.csv", TABLE, seed=0)
    for mutant in table["truncate_number"]:
        assert _rows(mutant.content)[0] == _rows(TABLE)[0]


def test_swap_call_keeps_code_running_but_answering_differently() -> None:
    source = b'def slug(text):\n    return text.lower().strip("-")\n'
    grouped = file_mutants("s.py", source, seed=0)
    swapped = {m.content for m in grouped["swap_call"]}
    assert b'text.lower().rstrip("-")' in b"".join(swapped) and b'text.upper().strip("-")' in b"".join(swapped)
    for content in swapped:
        ast.parse(content)


def test_decisive_near_misses_need_a_checked_place() -> None:
    from skillgym_reviewer.gates.mutation.exactness import decisive_near_misses
    from skillgym_reviewer.gates.mutation.model import Mutant, TrialResult

    def mutant(operator: str, location: str, effect: str = "value") -> Mutant:
        return Mutant("a.json", operator, location, b"", effect)  # type: ignore[arg-type]

    mutants = [mutant("leaf_nudge", "$.rows[0].mean"), mutant("truncate_number", "$.rows[1].mean"),
               mutant("truncate_number", "$.elapsed"), mutant("add_zero_record", "$.rows[2]", "shape")]
    results = [TrialResult(mutants[0].name, "output", "killed", 0.5, ["means"]),
               TrialResult(mutants[1].name, "output", "survived", 1.0),
               TrialResult(mutants[2].name, "output", "survived", 1.0),  # a place nothing checks
               TrialResult(mutants[3].name, "output", "survived", 1.0)]
    found = decisive_near_misses(results, {m.name: m for m in mutants})
    assert found == [mutants[1].name, mutants[3].name]


def test_unchecked_order_needs_a_checked_list() -> None:
    from skillgym_reviewer.gates.mutation.exactness import unchecked_orders
    from skillgym_reviewer.gates.mutation.model import Mutant, TrialResult

    def mutant(file: str, operator: str, location: str, effect: str) -> Mutant:
        return Mutant(file, operator, location, b"", effect)  # type: ignore[arg-type]

    mutants = [mutant("a.json", "leaf_nudge", "$.regions[1].revenue", "value"),
               mutant("a.json", "swap_elements", "$.regions[0]", "order"),
               mutant("a.json", "swap_elements", "$.tags[0]", "order"),  # a list no value check reads
               mutant("t.csv", "perturb_cell", "row 2.qty", "value"),
               mutant("t.csv", "swap_rows", "rows 1-2", "order"),
               mutant("u.csv", "swap_rows", "rows 3-4", "order")]
    verdicts = ["killed", "survived", "survived", "killed", "survived", "survived"]
    results = [TrialResult(m.name, "output", v, 1.0 if v == "survived" else 0.5) for m, v in zip(mutants, verdicts, strict=True)]
    assert unchecked_orders(results, {m.name: m for m in mutants}) == [mutants[1].name, mutants[4].name]
    results[1] = TrialResult(mutants[1].name, "output", "equivalent", 1.0, note="declared equivalent (reorder_lists)")
    assert unchecked_orders(results, {m.name: m for m in mutants}) == [mutants[4].name]


def test_second_look_drops_every_line_not_yet_dropped() -> None:
    from skillgym_reviewer.gates.mutation.text import every_line_dropped

    text = "# Plan\n\nintro\n- [ ] one\n- [ ] run the tests\n"
    mutants = every_line_dropped("plan.md", text, {"plan.md:drop_line:line 3"}, limit=10)
    assert [m.location for m in mutants] == ["line 1", "line 4", "line 5"]
    assert all(m.cover and m.effect == "shape" for m in mutants)
    assert mutants[-1].content == b"# Plan\n\nintro\n- [ ] one\n"
    assert len(every_line_dropped("plan.md", text, set(), limit=2)) == 2


def test_an_order_counts_where_the_instruction_asks_for_one() -> None:
    from skillgym_reviewer.gates.mutation.exactness import order_asked

    assert order_asked("a list of regions ranked by revenue, highest first")
    assert order_asked("`top_paths`: the three most requested paths, most requested first")
    assert order_asked("rows sorted by date")
    assert not order_asked("`categories` (the distinct categories, in any order)")
    assert not order_asked("the ids, sorted or not: the order does not matter")
    assert not order_asked("write the orders of each region to out/orders.json")


def test_every_item_reworded_leaves_out_each_list_items_first_word() -> None:
    from skillgym_reviewer.gates.mutation.text import every_item_reworded

    text = "# Plan\n\n- [ ] Add tests for the parser\n1. **Bump** the version\n- done\nPlain prose line\n[ ] Tag it\n"
    mutants = every_item_reworded("plan.md", text, set(), limit=10)
    assert [m.location for m in mutants] == ["line 3", "line 4", "line 7"]  # one-word items and prose are left alone
    assert all(m.cover and m.operator == "reword_item" for m in mutants)
    assert mutants[0].content.decode().splitlines()[2] == "- [ ] tests for the parser"
    assert mutants[1].content.decode().splitlines()[3] == "1. the version"
    assert mutants[2].content.decode().splitlines()[6] == "[ ] it"
    assert every_item_reworded("plan.md", text, {"plan.md:reword_item:line 3"}, limit=10)[0].location == "line 4"


def test_every_line_run_on_carries_the_other_lines_and_the_filler() -> None:
    from skillgym_reviewer.gates.mutation.text import every_line_run_on

    text = "# Update\n\nProgress: one.\n- Plans: two.\n"
    mutants = every_line_run_on("u.md", text, set(), limit=10, filler=["Three is here. Four too."])
    assert [m.location for m in mutants] == ["line 3", "line 4"]  # headings stay as they are
    assert mutants[0].content.decode() == "# Update\n\nProgress: one. Plans: two. Three is here. Four too.\n- Plans: two.\n"
    assert mutants[1].content.decode().splitlines()[3] == "- Plans: two. Progress: one. Three is here. Four too."
    assert all(m.cover and m.operator == "run_on" for m in mutants)


def test_every_key_renamed_reaches_each_key_path_once() -> None:
    import json

    from skillgym_reviewer.gates.mutation.structured import every_key_renamed

    reports = {"a.xlsx": {"total": 1, "items": [{"amount": 2}, {"amount": 3}]}, "b.xlsx": {"total": 2, "items": []}}
    text = json.dumps({"reports": reports}, indent=2) + "\n"
    mutants = every_key_renamed("out.json", text, "json", set(), limit=10)
    # the second record, keyed by another file name, has the same fields: it adds nothing
    assert [m.location for m in mutants] == ['$.reports', '$.reports["a.xlsx"]', '$.reports["a.xlsx"].total',
                                             '$.reports["a.xlsx"].items', '$.reports["a.xlsx"].items[0].amount']
    assert all(m.cover and m.effect == "key" for m in mutants)
    renamed = json.loads(mutants[2].content)["reports"]["a.xlsx"]
    assert "total" not in renamed and len(renamed) == 2
    assert every_key_renamed("out.json", text, "json", {mutants[0].name}, limit=2)[0] == mutants[1]


def test_every_key_renamed_passes_over_keys_that_are_not_strings() -> None:
    from skillgym_reviewer.gates.mutation.structured import every_key_renamed

    text = "ports:\n  8080: web\n  1.5: odd\n  null: none\nname: api\n"
    assert [m.location for m in every_key_renamed("svc.yaml", text, "yaml", set(), limit=10)] == ["$.ports", "$.name"]
