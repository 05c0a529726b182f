"""skill-script on Office documents: a script that opens workbooks with openpyxl, Word documents
with python-docx or decks with python-pptx is given generated files of that kind, which those
libraries read as Office's own (typed cells and dates, heading styles, lists and tables,
placeholders and a table on a slide); its task's reference runs the skill's script and passes,
and the untouched workspace fails. A help text's "spreadsheet" does not make a CSV reader an
Excel one."""

from __future__ import annotations

import datetime as dt
import io
import json
import random
import zipfile
from pathlib import Path

import docx
import openpyxl
import pptx
import pytest
from skillgym_builder.families import office_files
from skillgym_builder.families.script_cli import analyse
from skillgym_builder.families.script_columns import GENERIC
from skillgym_builder.families.skill_script import SkillScriptFamily, material
from skillgym_core.envbuild import LocalVenvProvider

from tests.builder.family_support import build, card_for, write_skill

KNOBS = {"record_count": 24, "noise_level": 0.5, "distractor_files": 0, "long_horizon": 2}

WORKBOOK_MD = ("---\nname: workbook-totals\ndescription: Totals the numeric columns of an Excel export.\n---\n"
               "Summarise an export with `python3 scripts/totals.py report.xlsx`.\n")
WORKBOOK_PY = '''\
    """Totals of each numeric column of a workbook's first sheet, and the dates it spans."""
    import datetime, json, sys
    from openpyxl import load_workbook
    book = load_workbook(sys.argv[1], data_only=True)
    sheet = book.worksheets[0]
    rows = list(sheet.iter_rows(values_only=True))
    header, body = rows[0], rows[1:]
    totals, dates = {}, []
    for row in body:
        for name, value in zip(header, row):
            if isinstance(value, (int, float)) and not isinstance(value, bool):
                totals[name] = round(totals.get(name, 0) + value, 2)
            elif isinstance(value, datetime.datetime):
                dates.append(value.date().isoformat())
    print(json.dumps({"sheets": book.sheetnames, "rows": len(body), "totals": totals,
                      "first": min(dates, default=None), "last": max(dates, default=None)}, indent=2))
'''
OUTLINE_MD = ("---\nname: docx-outline\ndescription: Outlines Word documents.\n---\n"
              "Outline a document: `python3 scripts/outline.py <document.docx>`.\n")
OUTLINE_PY = '''\
    """The heading outline of a Word document, with its lists and tables counted."""
    import sys
    from docx import Document
    document = Document(sys.argv[1])
    print("title:", document.core_properties.title)
    bullets = 0
    for paragraph in document.paragraphs:
        style = paragraph.style.name
        if style.startswith("Heading"):
            print("  " * (int(style.split()[-1]) - 1) + "- " + paragraph.text)
        elif style.startswith("List"):
            bullets += 1
    print("list items:", bullets)
    for table in document.tables:
        print("table:", len(table.rows), "rows;", "; ".join(cell.text for cell in table.rows[0].cells))
'''
DECK_MD = "---\nname: deck-inventory\ndescription: Inventories slide decks.\n---\nUse the inventory script on a deck.\n"
DECK_PY = '''\
    """Inventory of a PowerPoint deck: each slide's title, its bullet levels and its tables."""
    import argparse, json
    from pptx import Presentation
    parser = argparse.ArgumentParser()
    parser.add_argument("deck", help="the PowerPoint file to inventory")
    parser.add_argument("output", help="where the JSON inventory goes")
    args = parser.parse_args()
    slides = []
    for number, slide in enumerate(Presentation(args.deck).slides, start=1):
        entry = {"slide": number, "title": slide.shapes.title.text if slide.shapes.title else None, "bullets": [], "tables": []}
        for shape in slide.shapes:
            if shape.has_text_frame and shape != slide.shapes.title:
                entry["bullets"] += [[p.level, p.text] for p in shape.text_frame.paragraphs]
            if shape.has_table:
                entry["tables"].append([[cell.text for cell in row.cells] for row in shape.table.rows])
        slides.append(entry)
    with open(args.output, "w") as handle:
        json.dump(slides, handle, indent=2)
'''
CSV_WORDS_PY = '''\
    """Total a column of a spreadsheet export."""
    import argparse, csv
    parser = argparse.ArgumentParser()
    parser.add_argument("sheet", help="the spreadsheet to total")
    args = parser.parse_args()
    print(sum(float(row["amount"]) for row in csv.DictReader(open(args.sheet))))
'''


def test_workbooks_open_in_openpyxl_with_typed_cells_dates_and_a_bold_header() -> None:
    data = office_files.workbook(GENERIC, random.Random(4), 12, 0.0, 0.2)
    book = openpyxl.load_workbook(io.BytesIO(data))
    sheet = book.worksheets[0]
    assert [cell.value for cell in sheet[1]] == [c.name for c in GENERIC] and sheet["A1"].font.b
    assert sheet.max_row == 13
    units, price, created = (sheet.cell(row=2, column=GENERIC.index(c) + 1).value for c in
                             (GENERIC[3], GENERIC[4], GENERIC[6]))
    assert isinstance(units, int) and isinstance(price, float) and isinstance(created, dt.datetime)
    assert any(cell.value is None for row in sheet.iter_rows(min_row=2) for cell in row)  # the gaps asked for
    streamed = openpyxl.load_workbook(io.BytesIO(data), read_only=True, data_only=True)  # as pandas opens it
    assert len(list(streamed.worksheets[0].iter_rows())) == 13


def test_documents_open_in_python_docx_with_styles_lists_and_a_table() -> None:
    document = docx.Document(io.BytesIO(office_files.document(random.Random(5), 30, 0.5)))
    styles = {paragraph.style.name for paragraph in document.paragraphs}
    assert {"Title", "Heading 1", "Normal"} <= styles and styles & {"List Bullet", "List Number"}
    assert len(document.tables) == 1 and document.tables[0].rows[0].cells[0].text == "Item"
    assert document.core_properties.title and document.core_properties.created.year == 2026
    assert any(run.bold for paragraph in document.paragraphs for run in paragraph.runs)


def test_decks_open_in_python_pptx_with_titles_levels_and_a_table() -> None:
    deck = pptx.Presentation(io.BytesIO(office_files.deck(random.Random(6), 30, 1.0)))
    slides = list(deck.slides)
    assert len(slides) >= 4 and all(slide.shapes.title is not None and slide.shapes.title.text for slide in slides)
    assert sum(shape.has_table for slide in slides for shape in slide.shapes) == 1
    levels = {p.level for slide in slides for shape in slide.shapes if shape.has_text_frame for p in shape.text_frame.paragraphs}
    assert levels == {0, 1}
    saved = io.BytesIO()
    deck.save(saved)  # python-pptx writes it back as a deck it reads again
    assert len(pptx.Presentation(io.BytesIO(saved.getvalue())).slides) == len(slides)


@pytest.mark.parametrize("write", [lambda rng: office_files.workbook(GENERIC, rng, 10, 0.5),
                                   lambda rng: office_files.document(rng, 20, 0.5), lambda rng: office_files.deck(rng, 20, 0.5)],
                         ids=["xlsx", "docx", "pptx"])
def test_an_instance_always_gives_the_same_bytes_and_instances_differ(write) -> None:  # type: ignore[no-untyped-def]
    first, again, other = write(random.Random(1)), write(random.Random(1)), write(random.Random(2))
    assert first == again and first != other
    with zipfile.ZipFile(io.BytesIO(first)) as archive:
        assert archive.testzip() is None and "[Content_Types].xml" in archive.namelist()


@pytest.mark.parametrize(("md", "rel", "script", "kind"), [
    (WORKBOOK_MD, "scripts/totals.py", WORKBOOK_PY, "xlsx"),
    (OUTLINE_MD, "scripts/outline.py", OUTLINE_PY, "docx"),
    (DECK_MD, "scripts/inventory.py", DECK_PY, "pptx"),
], ids=["xlsx", "docx", "pptx"])
def test_office_scripts_read_their_kind_and_install_their_library(tmp_path: Path, md: str, rel: str, script: str,
                                                                  kind: str) -> None:
    call = analyse(card_for("office", None, folder=write_skill(tmp_path / "s", md, {rel: script})))
    assert call.input_kind == kind
    assert set(call.packages) & {"openpyxl", "python-docx", "python-pptx"}
    files = material(call, f"data/x.{kind}", random.Random(3), 20, 0.0)
    assert zipfile.is_zipfile(io.BytesIO(files[f"data/x.{kind}"]))  # type: ignore[arg-type]


def test_a_spreadsheet_in_the_help_read_with_csv_is_a_csv_input(tmp_path: Path) -> None:
    card = card_for("sheet-total", None, folder=write_skill(
        tmp_path / "s", "---\nname: sheet-total\ndescription: Totals a sheet.\n---\nTotal the sheet.\n",
        {"scripts/total.py": CSV_WORDS_PY}))
    assert analyse(card).input_kind == "csv"


@pytest.mark.slow  # a task build each, in the sandbox
@pytest.mark.parametrize(("md", "rel", "script"), [
    (WORKBOOK_MD, "scripts/totals.py", WORKBOOK_PY),
    (OUTLINE_MD, "scripts/outline.py", OUTLINE_PY),
    (DECK_MD, "scripts/inventory.py", DECK_PY),
], ids=["xlsx", "docx", "pptx"])
def test_an_office_script_gets_a_task_whose_reference_runs_it_and_passes(
        tmp_path: Path, env_provider: LocalVenvProvider, md: str, rel: str, script: str) -> None:
    card = card_for("office", None, folder=write_skill(tmp_path / "s", md, {rel: script}))
    built = build(SkillScriptFamily(), card, KNOBS, tmp_path / "b", env_provider, seed=3)
    meta = built.extra("skill_script")
    kind = meta["input_kind"]
    inputs = [built.task.root / "environment/workspace" / item["input"] for item in meta["inputs"]]
    assert all(path.suffix == f".{kind}" and zipfile.is_zipfile(path) for path in inputs)
    assert len({path.read_bytes() for path in inputs}) == len(inputs)
    instruction = built.task.instruction()
    assert {"xlsx": "Excel workbooks", "docx": "Word documents", "pptx": "PowerPoint decks"}[kind] in instruction
    assert Path(rel).name not in instruction
    assert Path(rel).name in (built.task.solution / "solve.sh").read_text()
    ok, solved = built.solve()
    assert ok and built.verify(solved).passed
    assert not built.untouched().passed
    if kind == "pptx":  # the inventory holds the table the deck carries
        produced = json.loads((solved / meta["outputs"][0]).read_text())
        assert any(slide["tables"] for slide in produced)
