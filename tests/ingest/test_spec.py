from __future__ import annotations

from typing import Any

import pytest
from skillgym_ingest.spec import allowed_tools, check_front_matter

VALID = {"name": "pdf-tools", "description": "Extract text from PDF files."}


def codes(front: dict[str, Any], folder: str = "pdf-tools") -> set[str]:
    return {d.code for d in check_front_matter(front, folder)}


def test_valid_front_matter_has_no_diagnostics() -> None:
    full = {**VALID, "license": "MIT", "compatibility": "Python 3.11", "metadata": {"a": "b"},
            "allowed-tools": "Bash Read"}
    assert check_front_matter(full, "pdf-tools") == []


@pytest.mark.parametrize(
    ("front", "folder", "code"),
    [
        ({"description": "d"}, "x", "name_missing"),
        ({"name": 5, "description": "d"}, "x", "name_not_string"),
        ({"name": "", "description": "d"}, "x", "name_empty"),
        ({"name": "a" * 65, "description": "d"}, "a" * 65, "name_too_long"),
        ({"name": "PDF-tools", "description": "d"}, "PDF-tools", "name_uppercase"),
        ({"name": "pdf--tools", "description": "d"}, "pdf--tools", "name_consecutive_hyphens"),
        ({"name": "-pdf", "description": "d"}, "-pdf", "name_edge_hyphen"),
        ({"name": "pdf-", "description": "d"}, "pdf-", "name_edge_hyphen"),
        ({"name": "pdf_tools", "description": "d"}, "pdf_tools", "name_invalid_chars"),
        ({"name": "pdf-tools", "description": "d"}, "other", "name_folder_mismatch"),
        ({"name": "pdf-tools"}, "pdf-tools", "description_missing"),
        ({"name": "pdf-tools", "description": ["a"]}, "pdf-tools", "description_not_string"),
        ({"name": "pdf-tools", "description": "   "}, "pdf-tools", "description_empty"),
        ({"name": "pdf-tools", "description": "d" * 1025}, "pdf-tools", "description_too_long"),
        ({**VALID, "license": ["MIT"]}, "pdf-tools", "license_not_string"),
        ({**VALID, "compatibility": 3}, "pdf-tools", "compatibility_not_string"),
        ({**VALID, "compatibility": "c" * 501}, "pdf-tools", "compatibility_length"),
        ({**VALID, "metadata": "x"}, "pdf-tools", "metadata_not_mapping"),
        ({**VALID, "metadata": {"v": 1}}, "pdf-tools", "metadata_values_not_strings"),
        ({**VALID, "allowed-tools": ["Bash"]}, "pdf-tools", "allowed_tools_list"),
        ({**VALID, "allowed-tools": 7}, "pdf-tools", "allowed_tools_invalid"),
        ({**VALID, "version": "1"}, "pdf-tools", "unknown_field"),
    ],
)
def test_each_spec_rule_fires(front: dict[str, Any], folder: str, code: str) -> None:
    assert code in codes(front, folder)


def test_limits_are_inclusive() -> None:
    assert codes({"name": "a" * 64, "description": "d" * 1024}, "a" * 64) == set()


def test_allowed_tools_accepts_string_or_list() -> None:
    assert allowed_tools({"allowed-tools": "Bash(git:*) Read"}) == ["Bash(git:*)", "Read"]
    assert allowed_tools({"allowed-tools": ["Read"]}) == ["Read"]
    assert allowed_tools({}) == []
