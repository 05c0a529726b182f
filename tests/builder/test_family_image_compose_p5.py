"""image-compose for a skill written for p5.js: the sketch is a p5.js page, the p5.js version the
skill loads ships among the inputs, and the verifier opens the page in headless Chromium with
hidden seeds."""

from __future__ import annotations

import os
import re
import shutil
from pathlib import Path
from typing import Any

import pytest
from skillgym_builder.families.image_compose import ImageComposeFamily
from skillgym_core.conformance import check_task
from skillgym_core.envbuild import LocalVenvProvider, lint_environment

from tests.builder.family_support import BuiltTask, assert_reviewer_approves, build, card_for
from tests.builder.skills import FIXTURES
from tests.builder.test_family_image_compose import GENERATIVE

# every test here opens the task's pages in Chromium: seconds each
pytestmark = [pytest.mark.slow,
              pytest.mark.skipif(shutil.which("chromium") is None, reason="needs Chromium (scripts/install-sandbox.sh)")]
KNOBS = GENERATIVE


@pytest.fixture(scope="module")
def art(tmp_path_factory: pytest.TempPathFactory, env_provider: LocalVenvProvider) -> BuiltTask:
    card = card_for("p5-tiles", "generative-art")
    return build(ImageComposeFamily(), card, KNOBS, tmp_path_factory.mktemp("p5"), env_provider)


@pytest.fixture(scope="module")
def solved(art: BuiltTask) -> Path:
    ok, workspace = art.solve()
    assert ok
    return workspace


def test_the_skills_p5_version_ships_and_chromium_is_installed(art: BuiltTask) -> None:
    library = (art.task.root / "environment/workspace/lib/p5.min.js").read_bytes()
    assert b"p5.js v1.9.0" in library[:200]
    assert "chromium" in (art.task.root / "environment/Dockerfile").read_text()
    assert art.extra("medium") == "p5"
    usage = art.extra("skill_usage")
    assert usage["kind"] == "library" and usage["libraries"] == ["js:p5"], usage
    instruction = (art.task.root / "instruction.md").read_text()
    assert "../lib/p5.min.js" in instruction and "640" not in instruction  # the canvas comes from the skill


def test_task_conforms_passes_both_ways_and_needs_the_skill(art: BuiltTask, solved: Path) -> None:
    assert check_task(art.task.root) == [] and lint_environment(art.task) == []
    assert not art.untouched().passed
    outcome = art.verify(solved)
    assert outcome.passed, outcome
    ok, alternative = art.solve("alternatives/instance-mode.sh")
    assert ok
    outcome = art.verify(alternative)
    assert outcome.passed, outcome
    dependence = art.extra("skill_dependence")
    assert dependence["claimed"] is True and dependence["holds"] is True


def _page(old: str, new: str) -> Any:
    def edit(workspace: Path) -> None:
        page = workspace / "art/piece.html"
        text = page.read_text()
        assert re.search(old, text), old
        page.write_text(re.sub(old, new, text, count=1))

    return edit


def _gallery_swapped(workspace: Path) -> None:
    first, second = sorted((workspace / "out/gallery").glob("seed-*.png"))[:2]
    data = first.read_bytes()
    first.write_bytes(second.read_bytes())
    second.write_bytes(data)


def _library_patched(workspace: Path) -> None:
    library = workspace / "lib/p5.min.js"
    library.chmod(0o644)
    library.write_text("window.p5 = function () {};\n")


@pytest.mark.parametrize(("name", "change"), [
    ("seeded from the clock", _page(r"randomSeed\(params\.seed\);", "randomSeed(Date.now());")),
    ("another seed than the address's", _page(r"randomSeed\(params\.seed\);\s*noiseSeed\(params\.seed\);",
                                              "randomSeed(params.seed + 1); noiseSeed(params.seed + 1);")),
    ("a different default seed", _page(r": 2024,", ": 7,")),
    ("the brief's canvas, not the skill's", _page(r"const CANVAS = \[640, 480\];", "const CANVAS = [480, 480];")),
    ("soft discs", _page(r"rect\(c \* unit, r \* unit, span \* unit, unit\);",
                         "circle(c * unit, r * unit, span * unit);")),
    ("density ignored", _page(r"constrain\(params\.density, 0, 1\)", "0.5")),
    ("p5.js from the CDN", _page(r'"\.\./lib/p5\.min\.js"', '"https://cdn.jsdelivr.net/npm/p5@1.9.0/lib/p5.min.js"')),
    ("a second script file", _page(r"</head>", '<script src="extra.js"></script></head>')),
    ("a drawing that never ends", _page(r"randomSeed\(params\.seed\);", "randomSeed(params.seed); for (;;) {}")),
    ("gallery files swapped", _gallery_swapped),
    ("p5.js replaced", _library_patched),
])
def test_wrong_pages_are_rejected(art: BuiltTask, solved: Path, name: str, change: Any) -> None:
    assert not art.verify_edited(solved, change).passed, name


@pytest.mark.skipif(os.environ.get("SKILLGYM_TEST_EXHAUSTIVE") != "1", reason="a long review: SKILLGYM_TEST_EXHAUSTIVE=1")
def test_the_reviewer_approves_the_task(tmp_path: Path, env_provider: LocalVenvProvider) -> None:
    """Every probe's verifier run opens its page in Chromium: minutes more than the Python
    medium's review, which every run includes (test_family_image_compose.py)."""
    assert_reviewer_approves(tmp_path, env_provider, "image-compose", FIXTURES / "p5-tiles")
