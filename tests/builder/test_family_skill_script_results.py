"""skill-script on results as real scripts give them: a workspace checker that stamps the moment
it ran and the absolute folder it checked, and exits 1 when it finds something, still gets a task
whose expectation is what the same command gives in the task, and whose verifier masks the
agent's own clock the same way; a folder argument is told by the script's guard on it, and the
files a script globs for are among those generated."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest
from skillgym_builder.errors import UnsuitableSkillError
from skillgym_builder.families.script_cli import analyse
from skillgym_builder.families.skill_script import SkillScriptFamily, material
from skillgym_core.envbuild import LocalVenvProvider

from tests.builder.family_support import build, card_for, write_skill

KNOBS = {"record_count": 30, "noise_level": 0.0, "distractor_files": 0, "long_horizon": 2}
CHECK_MD = "---\nname: notes-check\ndescription: Checks a folder of notes.\n---\nCheck the notes folder with the script in scripts/.\n"
# Loads a settings file if the folder has one, but what it is given is the folder (its guard says so).
CHECK_PY = '''\
    """Check a folder of Markdown notes: lines and words per note, with the folder checked."""
    import datetime, json, sys
    from pathlib import Path
    root = Path(sys.argv[1]).resolve()
    if not root.is_dir():
        print(f"ERROR: not a directory: {root}", file=sys.stderr)
        sys.exit(2)
    settings, config = root / "settings.json", {}
    if settings.exists():
        config = json.loads(settings.read_text())
    limit, title = config.get("limit", 60), config.get("title", "notes")
    print(f"TITLE={title}")
    print(f"Report generated: {datetime.datetime.now():%Y-%m-%d %H:%M:%S}")
    print(f"ROOT={root}")
    long_lines = 0
    for path in sorted(root.glob("**/*.md")):
        lines = path.read_text().splitlines()
        long_lines += sum(len(line) > limit for line in lines)
        print(path.relative_to(root), len(lines), sum(len(line.split()) for line in lines))
    print(f"LONG_LINES={long_lines}")
    sys.exit(1)
'''


def test_a_folder_guard_makes_the_input_a_folder_and_globbed_files_are_generated(tmp_path: Path) -> None:
    call = analyse(card_for("notes-check", None, folder=write_skill(tmp_path / "s", CHECK_MD, {"scripts/check.py": CHECK_PY})))
    assert call.input_kind == "tree" and call.origin == "sys.argv"
    assert ".md" in call.mentions and "settings.json" in call.mentions
    assert dict(call.document) == {"limit": "number", "title": "text"}
    files = material(call, "data/notes", random.Random(2), 30, 0.0)
    settings = json.loads(files["data/notes/settings.json"])  # the settings file it reads, with the keys it reads
    assert isinstance(settings["limit"], int) and isinstance(settings["title"], str)


def test_a_stamped_verdict_on_a_folder_becomes_a_task_whose_reference_passes(
        tmp_path: Path, env_provider: LocalVenvProvider) -> None:
    card = card_for("notes-check", None, folder=write_skill(tmp_path / "s", CHECK_MD, {"scripts/check.py": CHECK_PY}))
    built = build(SkillScriptFamily(), card, KNOBS, tmp_path / "b", env_provider, seed=3)
    meta = built.extra("skill_script")
    assert meta["verdict_exit"] and meta["output_kind"] == "text"
    expected = json.loads((built.task.tests / "expected.json").read_text())
    lines = [line for result in expected["results"] for line in result["value"]]
    assert "Report generated: <clock>" in lines
    assert any(line.startswith("ROOT=/app/data/") for line in lines)  # as the command gives it in the task
    assert "clock.py" in {p.name for p in built.task.tests.iterdir()}
    ok, solved = built.solve()
    assert ok and built.verify(solved).passed
    assert not built.untouched().passed
    # a result stamped with another day is not the one the script gives now: only the present moment is masked
    for output in meta["outputs"]:
        path = solved / output
        stamped = path.read_text().replace("Report generated", "Report generated: 2020-01-01 00:00:00 #", 1)
        path.write_text(stamped)
    assert not built.verify(solved).passed


@pytest.mark.parametrize(("change", "reason"), [
    # a packed file is not a result a text or JSON comparison can judge
    (("print(f\"LONG_LINES={long_lines}\")", "sys.stdout.buffer.write(gzip.compress(b'x' * long_lines, mtime=0))"),
     "binary file"),
    # one report folder for every input: the second input, run after the first as in the task, is refused
    (("long_lines = 0", "(Path.cwd() / 'report').mkdir()\n    long_lines = 0"), "FileExistsError"),
])
def test_a_result_the_task_cannot_ask_for_makes_the_skill_unusable(
        tmp_path: Path, env_provider: LocalVenvProvider, change: tuple[str, str], reason: str) -> None:
    script = CHECK_PY.replace("import datetime, json, sys", "import datetime, gzip, json, sys").replace(*change)
    folder = write_skill(tmp_path / "s", CHECK_MD, {"scripts/check.py": script})
    with pytest.raises(UnsuitableSkillError) as caught:
        build(SkillScriptFamily(), card_for("notes-check", None, folder=folder), KNOBS, tmp_path / "b", env_provider)
    assert caught.value.details["skip_reason"] == "skill_script_unusable"
    assert reason in str(caught.value)


def test_the_files_a_script_globs_for_by_name_and_suffix_are_generated_as_projects_write_them(tmp_path: Path) -> None:
    script = ("import sys\nfrom pathlib import Path\nroot = Path(sys.argv[1])\n"
              "for path in sorted(root.rglob('route.ts')) + sorted(root.rglob('**/*.tsx')):\n"
              "    print(path.name, path.read_text().count('data-cy'))\n")
    call = analyse(card_for("ui-check", None, folder=write_skill(tmp_path / "s", CHECK_MD, {"scripts/ui.py": script})))
    assert {".tsx", "route.ts"} <= set(call.mentions)
    files = material(call, "data/app", random.Random(5), 30, 0.0)
    assert "data/app/route.ts" in files
    components = [text for rel, text in files.items() if rel.endswith(".tsx")]
    assert components and all("export default function" in text and "</section>" in text for text in components)


def test_the_packages_a_skills_scripts_sit_in_are_its_own_modules(tmp_path: Path) -> None:
    scripts = {"scripts/office/validate.py": ("import sys\nimport defusedxml.ElementTree as tree\nfrom validators import base\n"
                                              "print(base.check(tree.parse(sys.argv[1]).getroot()))\n"),
               "scripts/office/validators/__init__.py": "",
               "scripts/office/validators/base.py": "def check(root):\n    return len(list(root.iter()))\n"}
    skill_md = "---\nname: office\ndescription: d\n---\nValidate a document with `python3 scripts/office/validate.py doc.md`.\n"
    call = analyse(card_for("office", None, folder=write_skill(tmp_path / "s", skill_md, scripts)))
    assert call.script == "scripts/office/validate.py" and call.packages == ("defusedxml",)


DECK_MD = ("---\nname: slide-decks\ndescription: Builds slide decks from the template.\n---\n"
           "Copy `assets/template.html`, then check the deck with `python3 scripts/check_deck.py deck/index.html`.\n")
DECK_HTML = "<!DOCTYPE html>\n<html><head><title>Deck</title></head><body class=\"deck\">\n" + "".join(
    f"<section class=\"slide\"><h2>Slide {n}</h2><p>Point {n} of the story, told plainly.</p></section>\n"
    for n in range(1, 6)) + "</body></html>\n"
DECK_PY = '''\
    """Check a deck: every slide has a heading and at most forty words."""
    import re, sys
    html = open(sys.argv[1], encoding="utf-8").read()
    slides = re.findall(r'<section class="slide">(.*?)</section>', html, re.S)
    problems = [f"- slide {i}: {len(re.sub('<[^>]+>', ' ', s).split())} words" for i, s in enumerate(slides, 1)
                if len(re.sub('<[^>]+>', ' ', s).split()) > 9]
    if problems:
        print("Deck check failed:", *problems, sep="\\n", file=sys.stderr)
        sys.exit(1)
    print(f"Deck OK: {len(slides)} slides")
'''


def test_a_checker_reporting_on_standard_error_gets_decks_varied_from_the_skills_own_template(
        tmp_path: Path, env_provider: LocalVenvProvider) -> None:
    folder = write_skill(tmp_path / "s", DECK_MD, {"scripts/check_deck.py": DECK_PY, "assets/template.html": DECK_HTML})
    card = card_for("slide-decks", None, folder=folder)
    assert analyse(card).input_kind == "html" and analyse(card).exemplars == (DECK_HTML,)
    built = build(SkillScriptFamily(), card, KNOBS, tmp_path / "b", env_provider, seed=5)
    meta = built.extra("skill_script")
    assert meta["report_on_stderr"] and meta["verdict_exit"]
    decks = [(built.task.root / "environment/workspace" / item["input"]).read_text() for item in meta["inputs"]]
    assert all('<body class="deck">' in deck and deck != DECK_HTML for deck in decks)
    ok, solved = built.solve()
    assert ok and built.verify(solved).passed
    assert not built.untouched().passed


ICON_MD = ("---\nname: app-icons\ndescription: Prepares app store icons.\n---\n"
           "Validate the final icon with `python3 scripts/check_icon.py /path/to/icon.png`.\n")
ICON_PY = '''\
    """Check an app icon: a square PNG of 1200 pixels a side."""
    import struct, sys
    data = open(sys.argv[1], "rb").read()
    if not data.startswith(b"\\x89PNG\\r\\n\\x1a\\n"):
        print("status=fail\\nerror=not a PNG")
        sys.exit(1)
    width, height = struct.unpack(">II", data[16:24])
    alpha = data[25] in (4, 6)
    problems = [f"expected 1200x1200, got {width}x{height}"] if (width, height) != (1200, 1200) else []
    print(f"size={width}x{height}", f"alpha={alpha}", f"status={'fail' if problems else 'pass'}", *problems, sep="\\n")
    sys.exit(1 if problems else 0)
'''


def test_an_image_checker_gets_generated_images(tmp_path: Path, env_provider: LocalVenvProvider) -> None:
    card = card_for("app-icons", None, folder=write_skill(tmp_path / "s", ICON_MD, {"scripts/check_icon.py": ICON_PY}))
    assert analyse(card).input_kind == "image"
    built = build(SkillScriptFamily(), card, KNOBS, tmp_path / "b", env_provider, seed=2)
    meta = built.extra("skill_script")
    images = [(built.task.root / "environment/workspace" / item["input"]).read_bytes() for item in meta["inputs"]]
    assert all(image.startswith(b"\x89PNG\r\n\x1a\n") for image in images) and len(set(images)) == len(images)
    assert "images" in built.task.instruction() and "check_icon" not in built.task.instruction()
    ok, solved = built.solve()
    assert ok and built.verify(solved).passed
    assert not built.untouched().passed


SUMMARY_MD = "---\nname: csv-summary\ndescription: Summarises CSV exports.\n---\nRun `python3 scripts/summary.py data.csv`.\n"
# Prints the same progress lines whatever it is given; its result is the report it writes beside the input.
SUMMARY_PY = '''\
    """Summarise a CSV export into a report next to it."""
    import csv, sys
    from pathlib import Path
    source = Path(sys.argv[1])
    print(f"Analysing {source.suffix} file ...")
    rows = list(csv.DictReader(source.open()))
    total = sum(float(r["amount"]) for r in rows)
    report = source.parent / f"{source.stem}_summary.md"
    report.write_text(f"# {source.name}\\n\\nrows: {len(rows)}\\namount: {total:.2f}\\n")
    print("done")
'''


def test_a_report_written_beside_the_input_is_the_result_when_what_it_prints_is_not(
        tmp_path: Path, env_provider: LocalVenvProvider) -> None:
    card = card_for("csv-summary", None, folder=write_skill(tmp_path / "s", SUMMARY_MD, {"scripts/summary.py": SUMMARY_PY}))
    built = build(SkillScriptFamily(), card, KNOBS, tmp_path / "b", env_provider, seed=2)
    meta = built.extra("skill_script")
    assert all(item["beside"].endswith("_summary.md") and item["output"] == f"out/{Path(item['beside']).name}"
               for item in meta["inputs"])
    expected = json.loads((built.task.tests / "expected.json").read_text())
    assert all(any(line.startswith("amount: ") for line in result["value"]) for result in expected["results"])
    assert "Do not modify the files under `/app/data`" in (built.task.root / "instruction.md").read_text()
    ok, solved = built.solve()
    assert ok and built.verify(solved).passed
    assert not built.untouched().passed
    # what it prints is not the result: a copy of the progress lines fails
    for item in meta["inputs"]:
        (solved / item["output"]).write_text("Analysing .csv file ...\ndone\n")
    assert not built.verify(solved).passed
