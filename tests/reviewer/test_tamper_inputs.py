"""Forged inputs for the tamper probe: the reference solution must still be able to read them,
so a settings file has a value changed rather than a key dropped. Wrong answers for the lax
probes change a line that carries content; equivalent answers are reformatted only where the file is text."""

from __future__ import annotations

import json

from skillgym_reviewer.gates.probes import changed_inputs, mutations, reformattings


def test_a_settings_file_gets_a_value_changed_and_keeps_its_keys() -> None:
    policy = {"currency": "EUR", "weekly_limit": 40}
    (forged,) = changed_inputs("policy.json", json.dumps(policy).encode())
    changed = json.loads(forged)
    assert set(changed) == set(policy) and changed["currency"] == "EUR" and changed["weekly_limit"] != 40


def test_a_data_file_loses_a_record_the_last_then_one_from_the_middle() -> None:
    data = b"id,n\na,1\nb,2\nc,3\nd,4\n"
    variants = changed_inputs("t.csv", data)
    assert variants[0] == b"id,n\na,1\nb,2\nc,3\n"
    assert len(variants) == 2 and variants[1].count(b"\n") == 4 and variants[1] != variants[0]
    assert changed_inputs("names.json", b'["a", "b"]') == [b'["a"]']


def test_a_page_is_mutated_on_a_line_with_content_not_on_its_closing_tags() -> None:
    page = b"<html>\n<body>\n<script>\ndraw();\n</script>\n</body>\n</html>\n"
    variants = dict(mutations("art/piece.html", page))
    assert variants["drop-line"] == b"<html>\n<body>\n<script>\n</script>\n</body>\n</html>\n"
    assert b";)(ward @@ altered" in variants["corrupt-line"]
    assert mutations("closing.html", b"</div>\n</html>\n") == []


def test_a_binary_answer_gets_no_textual_reformatting() -> None:
    png = b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\xff\xfe"
    assert reformattings("out/sheet.png", png) == []
    assert reformattings("out/notes.txt", b"done\n") == [("toggle-final-newline", b"done")]
