"""How a need is worded: denied, optional, under a reference heading, introduced as optional."""

from __future__ import annotations

from pathlib import Path

import pytest
from skillgym_ingest.annotate.qualifiers import Stance, outline, says_optional, stance
from skillgym_ingest.annotate.rules import Hit
from skillgym_ingest.content import build_content
from skillgym_ingest.loader import load_folder

from tests.ingest.skillkit import write_skill

BODY = """# Tool

Uploads the report to S3.

## Optional extras

If you want, export a token first:

```bash
export SERVICE_TOKEN=abc
if not ok; then exit 1; fi
```

## Further reading

- The S3 docs.
"""


def _hit(shape_line: int, excerpt: str, word: str, file: str = "SKILL.md") -> Hit:
    column = excerpt.index(word)
    return Hit("runtime.test", file, shape_line, excerpt, column, column + len(word))


@pytest.fixture()
def shape(tmp_path: Path):  # type: ignore[no-untyped-def]
    root = write_skill(tmp_path, "tool", body=BODY, files={})
    folder = load_folder(root, str(root), max_files=10, max_bytes=1 << 20, max_file_bytes=1 << 20)
    return outline(build_content(folder, 1 << 20))


def line_of(word: str) -> int:
    return 5 + BODY.split("\n").index(word)  # SKILL.md body starts on line 5 after the front matter


@pytest.mark.parametrize(
    ("excerpt", "word", "expected"),
    [
        ("Uploads the report to S3.", "Uploads", Stance.STATED),
        ("It does not upload anything.", "upload", Stance.NEGATED),
        ("Use self.device instead of .cuda().", ".cuda()", Stance.NEGATED),
        ("Uses CUDA if available.", "CUDA", Stance.OPTIONAL),
        ("Needs a GPU, so there is no fallback.", "GPU", Stance.STATED),
        ("Run it; later, if you like, upload the result.", "upload", Stance.OPTIONAL),
    ],
)
def test_stance_of_a_prose_line(shape, excerpt: str, word: str, expected: Stance) -> None:  # type: ignore[no-untyped-def]
    assert stance(_hit(line_of("Uploads the report to S3."), excerpt, word), shape) is expected


def test_scripts_are_taken_as_written(shape) -> None:  # type: ignore[no-untyped-def]
    assert stance(_hit(1, "if not requests.get(url).ok:", "requests.get", "scripts/a.py"), shape) is Stance.STATED


def test_code_blocks_take_the_wording_of_their_lead_in(shape) -> None:  # type: ignore[no-untyped-def]
    export = _hit(line_of("export SERVICE_TOKEN=abc"), "export SERVICE_TOKEN=abc", "SERVICE_TOKEN")
    assert stance(export, shape) is Stance.OPTIONAL
    code = _hit(line_of("if not ok; then exit 1; fi"), "if not ok; then exit 1; fi", "exit")
    assert stance(code, shape, negatable=True) is Stance.OPTIONAL  # "not" in code is not a denial


def test_reference_sections(shape) -> None:  # type: ignore[no-untyped-def]
    assert stance(_hit(line_of("- The S3 docs."), "- The S3 docs.", "S3"), shape) is Stance.REFERENCE


def test_denied_optional_markers_do_not_make_a_need_optional() -> None:
    assert says_optional("It falls back to the CPU.")
    assert not says_optional("There is no fallback.")
    assert not says_optional("GPU acceleration is not optional here.")
