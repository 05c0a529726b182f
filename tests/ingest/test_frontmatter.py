from __future__ import annotations

import pytest
from skillgym_ingest.frontmatter import parse_skill_md


def codes(raw: bytes) -> set[str]:
    return {d.code for d in parse_skill_md(raw).diagnostics}


def test_clean_front_matter_parses_without_diagnostics() -> None:
    parsed = parse_skill_md(b"---\nname: a\ndescription: Does a thing.\n---\n# Body\ntext\n")
    assert parsed.front_matter == {"name": "a", "description": "Does a thing."}
    assert parsed.body == "# Body\ntext\n"
    assert parsed.body_line == 5
    assert parsed.diagnostics == []


def test_bom_and_crlf_are_reported_and_removed() -> None:
    parsed = parse_skill_md(b"\xef\xbb\xbf---\r\nname: a\r\ndescription: d\r\n---\r\nbody\r\n")
    assert parsed.front_matter == {"name": "a", "description": "d"}
    assert parsed.body == "body\n"
    assert {"bom", "crlf"} <= {d.code for d in parsed.diagnostics}


def test_unquoted_colon_in_description_is_read_as_raw_text() -> None:
    raw = b"---\nname: a\ndescription: Use when: the user asks: for X\nlicense: MIT\n---\nbody"
    parsed = parse_skill_md(raw)
    assert parsed.front_matter["description"] == "Use when: the user asks: for X"
    assert parsed.front_matter["license"] == "MIT"
    found = {d.code for d in parsed.diagnostics}
    assert "front_matter_yaml_invalid" in found and "front_matter_value_raw" in found


def test_nested_metadata_survives_lenient_parse() -> None:
    raw = b"---\nname: a\ndescription: bad: colon\nmetadata:\n  author: me\n  version: '1'\n---\nbody"
    parsed = parse_skill_md(raw)
    assert parsed.front_matter["metadata"] == {"author": "me", "version": "1"}


@pytest.mark.parametrize(
    ("raw", "code"),
    [
        (b"# Just markdown\n", "front_matter_missing"),
        (b"---\nname: a\ndescription: b\nbody without closing", "front_matter_unterminated"),
        (b"---\n---\nbody", "front_matter_empty"),
        (b"---\n- a\n- b\n---\nbody", "front_matter_not_mapping"),
        (b"---\nname: a\nname: b\ndescription: x: y\n---\n", "front_matter_duplicate_key"),
        (b"\n\n---\nname: a\n---\nbody", "front_matter_late"),
        (b"---\nname: \xff\xfe\n---\nbody", "not_utf8"),
        (b"---\nname: a\x00\n---\nbody", "nul_bytes"),
        (b"---\n:::: ][\n---\nbody", "front_matter_unreadable"),
    ],
)
def test_messy_inputs_are_diagnosed(raw: bytes, code: str) -> None:
    assert code in codes(raw)


def test_dates_and_odd_values_become_json_safe() -> None:
    parsed = parse_skill_md(b"---\nname: a\ndescription: d\ncreated: 2024-01-02\n1: one\n---\nx")
    assert parsed.front_matter["created"] == "2024-01-02"
    assert parsed.front_matter["1"] == "one"
