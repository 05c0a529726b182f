"""Office Open XML inputs for a skill's own script (Excel workbooks, Word documents, PowerPoint
decks), written as the packages Office saves, part by part: typed cells with a bold header and real
date cells, styled headings, lists and tables, slides with title and body placeholders and a
table. Written without an Office library, so the builder needs none; openpyxl, python-docx and
python-pptx read them as they read Office's own (the tests open every kind with them). Every
part's timestamp is fixed, so one instance always gives the same bytes."""

from __future__ import annotations

import datetime as dt
import io
import random
import zipfile
from collections.abc import Sequence
from xml.sax.saxutils import escape, quoteattr

from skillgym_builder.families import script_data
from skillgym_builder.families.script_columns import Column
from skillgym_builder.families.script_documents import NOUNS, TOPICS, VERBS, sentence

XML = '<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n'
NS_PKG_RELS = "http://schemas.openxmlformats.org/package/2006/relationships"
NS_REL = "http://schemas.openxmlformats.org/officeDocument/2006/relationships"
NS_SHEET = "http://schemas.openxmlformats.org/spreadsheetml/2006/main"
NS_WORD = "http://schemas.openxmlformats.org/wordprocessingml/2006/main"
NS_DRAW = "http://schemas.openxmlformats.org/drawingml/2006/main"
NS_SLIDE = "http://schemas.openxmlformats.org/presentationml/2006/main"
OFFICE_DOC = f"{NS_REL}/officeDocument"
CORE_REL = f"{NS_PKG_RELS}/metadata/core-properties"
CT = "application/vnd.openxmlformats-officedocument"
EPOCH = dt.date(1899, 12, 30)  # day 0 of Excel's 1900 date system, as serial numbers count it
FIXED_TIME = (2026, 1, 1, 0, 0, 0)
AUTHORS = ["Finance operations", "Platform team", "Programme office", "Data desk", "Field services"]


def _package(parts: dict[str, str], overrides: dict[str, str]) -> bytes:
    """A zip of ``parts`` with its content types, each member stamped with the same time."""
    types = "".join(f'<Override PartName="/{name}" ContentType="{kind}"/>' for name, kind in overrides.items())
    content_types = (f'{XML}<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types">'
                     f'<Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/>'
                     f'<Default Extension="xml" ContentType="application/xml"/>{types}</Types>')
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, text in {"[Content_Types].xml": content_types, **parts}.items():
            info = zipfile.ZipInfo(name, date_time=FIXED_TIME)
            info.compress_type = zipfile.ZIP_DEFLATED
            archive.writestr(info, text.encode("utf-8"))
    return buffer.getvalue()


def _relationships(targets: Sequence[tuple[str, str]]) -> str:
    """A relationships part: ``rId1``... for each (type, target)."""
    items = "".join(f'<Relationship Id="rId{n}" Type="{kind}" Target="{target}"/>'
                    for n, (kind, target) in enumerate(targets, start=1))
    return f'{XML}<Relationships xmlns="{NS_PKG_RELS}">{items}</Relationships>'


def _core(title: str, author: str, created: dt.datetime) -> str:
    stamp = created.strftime("%Y-%m-%dT%H:%M:%SZ")
    return (f'{XML}<cp:coreProperties xmlns:cp="http://schemas.openxmlformats.org/package/2006/metadata/core-properties" '
            'xmlns:dc="http://purl.org/dc/elements/1.1/" xmlns:dcterms="http://purl.org/dc/terms/" '
            'xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance">'
            f"<dc:title>{escape(title)}</dc:title><dc:creator>{escape(author)}</dc:creator>"
            f'<dcterms:created xsi:type="dcterms:W3CDTF">{stamp}</dcterms:created>'
            f'<dcterms:modified xsi:type="dcterms:W3CDTF">{stamp}</dcterms:modified></cp:coreProperties>')


def _created(rng: random.Random) -> dt.datetime:
    return dt.datetime(2026, 1, 5, 9) + dt.timedelta(days=rng.randrange(150), minutes=rng.randrange(600))


def _title(rng: random.Random) -> str:
    return f"{rng.choice(TOPICS).capitalize()} {rng.choice(['review', 'plan', 'update', 'summary', 'report'])}"


# --- Excel -----------------------------------------------------------------------------------------

def _column_letter(index: int) -> str:
    letters = ""
    index += 1
    while index:
        index, rest = divmod(index - 1, 26)
        letters = chr(65 + rest) + letters
    return letters


def _cell(ref: str, value: str | float | int | dt.date | None, bold: bool = False) -> str:
    if value is None or value == "":
        return ""
    if isinstance(value, dt.date):
        return f'<c r="{ref}" s="2"><v>{(value - EPOCH).days}</v></c>'
    if isinstance(value, (int, float)):
        return f'<c r="{ref}"><v>{value!r}</v></c>'
    style = ' s="1"' if bold else ""
    return f'<c r="{ref}"{style} t="inlineStr"><is><t xml:space="preserve">{escape(value)}</t></is></c>'


def _typed(column: Column, text: str) -> str | float | int | dt.date | None:
    """A cell as Excel holds it: numbers and dates typed, a value that does not parse kept as text
    (as an export with a stray entry has it)."""
    if text == "":
        return None
    try:
        if column.kind == "int":
            return int(text)
        if column.kind == "float":
            return float(text)
        if column.kind == "date":
            return dt.date.fromisoformat(text)
    except ValueError:
        pass
    return text


def _sheet(rows: Sequence[Sequence[str | float | int | dt.date | None]], header: bool) -> str:
    width = max((len(row) for row in rows), default=1)
    lines = []
    for r, row in enumerate(rows, start=1):
        cells = "".join(_cell(f"{_column_letter(c)}{r}", value, bold=header and r == 1) for c, value in enumerate(row))
        lines.append(f'<row r="{r}">{cells}</row>')
    dimension = f"A1:{_column_letter(width - 1)}{max(1, len(rows))}"
    return (f'{XML}<worksheet xmlns="{NS_SHEET}" xmlns:r="{NS_REL}"><dimension ref="{dimension}"/>'
            f'<sheetData>{"".join(lines)}</sheetData></worksheet>')


SHEET_STYLES = (
    f'{XML}<styleSheet xmlns="{NS_SHEET}">'
    '<fonts count="2"><font><sz val="11"/><name val="Calibri"/></font><font><b/><sz val="11"/><name val="Calibri"/></font></fonts>'
    '<fills count="2"><fill><patternFill patternType="none"/></fill><fill><patternFill patternType="gray125"/></fill></fills>'
    '<borders count="1"><border><left/><right/><top/><bottom/><diagonal/></border></borders>'
    '<cellStyleXfs count="1"><xf numFmtId="0" fontId="0" fillId="0" borderId="0"/></cellStyleXfs>'
    '<cellXfs count="3"><xf numFmtId="0" fontId="0" fillId="0" borderId="0" xfId="0"/>'
    '<xf numFmtId="0" fontId="1" fillId="0" borderId="0" xfId="0" applyFont="1"/>'
    '<xf numFmtId="14" fontId="0" fillId="0" borderId="0" xfId="0" applyNumberFormat="1"/></cellXfs>'
    '<cellStyles count="1"><cellStyle name="Normal" xfId="0" builtinId="0"/></cellStyles></styleSheet>')


def workbook(columns: tuple[Column, ...], rng: random.Random, count: int, noise: float, blanks: float = 0.0) -> bytes:
    """An .xlsx export: the records on the first sheet under a bold header, and, in some
    instances, a second sheet of notes (a workbook is more than one table)."""
    records = script_data.blanked(columns, script_data.rows(columns, rng, count, noise), rng, blanks)
    sheets: list[tuple[str, str]] = [(rng.choice(["Data", "Export", "Records", "Sheet1"]), _sheet(
        [[c.name for c in columns], *([_typed(c, v) for c, v in zip(columns, record, strict=True)] for record in records)],
        header=True))]
    if rng.random() < 0.5:
        notes = [["Note"], *([sentence(rng)] for _ in range(rng.randint(1, 4)))]
        sheets.append(("Notes", _sheet(notes, header=True)))
    listed = "".join(f'<sheet name={quoteattr(name)} sheetId="{n}" r:id="rId{n}"/>' for n, (name, _) in enumerate(sheets, start=1))
    parts = {
        "_rels/.rels": _relationships([(OFFICE_DOC, "xl/workbook.xml"), (CORE_REL, "docProps/core.xml")]),
        "docProps/core.xml": _core(_title(rng), rng.choice(AUTHORS), _created(rng)),
        "xl/workbook.xml": f'{XML}<workbook xmlns="{NS_SHEET}" xmlns:r="{NS_REL}"><sheets>{listed}</sheets></workbook>',
        "xl/_rels/workbook.xml.rels": _relationships(
            [*((f"{NS_REL}/worksheet", f"worksheets/sheet{n}.xml") for n in range(1, len(sheets) + 1)),
             (f"{NS_REL}/styles", "styles.xml")]),
        "xl/styles.xml": SHEET_STYLES,
        **{f"xl/worksheets/sheet{n}.xml": text for n, (_, text) in enumerate(sheets, start=1)},
    }
    overrides = {"xl/workbook.xml": f"{CT}.spreadsheetml.sheet.main+xml", "xl/styles.xml": f"{CT}.spreadsheetml.styles+xml",
                 "docProps/core.xml": "application/vnd.openxmlformats-package.core-properties+xml",
                 **{f"xl/worksheets/sheet{n}.xml": f"{CT}.spreadsheetml.worksheet+xml" for n in range(1, len(sheets) + 1)}}
    return _package(parts, overrides)


# --- Word ------------------------------------------------------------------------------------------

WORD_STYLES = (f'{XML}<w:styles xmlns:w="{NS_WORD}">' + "".join(
    f'<w:style w:type="{kind}" w:styleId="{sid}"{default}><w:name w:val="{name}"/>{extra}</w:style>'
    for kind, sid, name, default, extra in [
        ("paragraph", "Normal", "Normal", ' w:default="1"', ""),
        ("paragraph", "Title", "Title", "", '<w:basedOn w:val="Normal"/><w:rPr><w:sz w:val="56"/></w:rPr>'),
        ("paragraph", "Heading1", "heading 1", "", '<w:basedOn w:val="Normal"/><w:pPr><w:outlineLvl w:val="0"/></w:pPr><w:rPr><w:b/><w:sz w:val="32"/></w:rPr>'),
        ("paragraph", "Heading2", "heading 2", "", '<w:basedOn w:val="Normal"/><w:pPr><w:outlineLvl w:val="1"/></w:pPr><w:rPr><w:b/><w:sz w:val="26"/></w:rPr>'),
        ("paragraph", "ListBullet", "List Bullet", "", '<w:basedOn w:val="Normal"/>'),
        ("paragraph", "ListNumber", "List Number", "", '<w:basedOn w:val="Normal"/>'),
        ("character", "DefaultParagraphFont", "Default Paragraph Font", ' w:default="1"', ""),
        ("table", "TableGrid", "Table Grid", "", ""),
    ]) + "</w:styles>")


def _run(text: str, bold: bool = False) -> str:
    props = "<w:rPr><w:b/></w:rPr>" if bold else ""
    return f'<w:r>{props}<w:t xml:space="preserve">{escape(text)}</w:t></w:r>'


def _paragraph(runs: str, style: str = "") -> str:
    props = f'<w:pPr><w:pStyle w:val="{style}"/></w:pPr>' if style else ""
    return f"<w:p>{props}{runs}</w:p>"


def _word_table(rows: Sequence[Sequence[str]]) -> str:
    width = 9000 // max(1, len(rows[0]))
    grid = "".join(f'<w:gridCol w:w="{width}"/>' for _ in rows[0])
    body = "".join("<w:tr>" + "".join(
        f'<w:tc><w:tcPr><w:tcW w:w="{width}" w:type="dxa"/></w:tcPr>{_paragraph(_run(cell, bold=r == 0))}</w:tc>'
        for cell in row) + "</w:tr>" for r, row in enumerate(rows))
    return (f'<w:tbl><w:tblPr><w:tblStyle w:val="TableGrid"/><w:tblW w:w="0" w:type="auto"/></w:tblPr>'
            f"<w:tblGrid>{grid}</w:tblGrid>{body}</w:tbl>")


def _table_rows(rng: random.Random, count: int) -> list[list[str]]:
    header = ["Item", "Owner", "Status", "Estimate (days)"]
    return [header, *([f"{rng.choice(VERBS).capitalize()} {rng.choice(NOUNS)}", rng.choice(["Ana", "Bo", "Chen", "Dev", "Eli"]),
                       rng.choice(["open", "done", "blocked", "in review"]), str(rng.randint(1, 20))]
                      for _ in range(max(2, count)))]


def document(rng: random.Random, count: int, noise: float) -> bytes:
    """A .docx report: a title, sections and subsections under heading styles, paragraphs with bold
    phrases, bullet and numbered lists and a table, in amounts that vary with ``count``."""
    title = _title(rng)
    blocks = [_paragraph(_run(title), "Title"), _paragraph(_run(sentence(rng)))]
    for _ in range(max(2, min(40, count // 6))):
        blocks.append(_paragraph(_run(rng.choice(TOPICS).capitalize()), "Heading1"))
        for _ in range(rng.randint(1, 3)):
            blocks.append(_paragraph(_run(sentence(rng) + " ") + _run(rng.choice(NOUNS), bold=rng.random() < 0.4)
                                     + _run(f" is due in {rng.randint(2, 30)} days.")))
        if rng.random() < 0.6:
            blocks.append(_paragraph(_run(f"{rng.choice(VERBS).capitalize()} steps"), "Heading2"))
            style = rng.choice(["ListBullet", "ListNumber"])
            blocks += [_paragraph(_run(sentence(rng)), style) for _ in range(rng.randint(2, 5))]
        if rng.random() < 0.3 + noise / 2:
            blocks.append(_paragraph(""))  # the empty paragraphs real documents carry
    blocks.insert(rng.randrange(2, len(blocks) + 1), _word_table(_table_rows(rng, max(2, min(40, count // 5)))))
    body = "".join(blocks) + '<w:sectPr><w:pgSz w:w="11906" w:h="16838"/></w:sectPr>'
    parts = {
        "_rels/.rels": _relationships([(OFFICE_DOC, "word/document.xml"), (CORE_REL, "docProps/core.xml")]),
        "docProps/core.xml": _core(title, rng.choice(AUTHORS), _created(rng)),
        "word/document.xml": f'{XML}<w:document xmlns:w="{NS_WORD}" xmlns:r="{NS_REL}"><w:body>{body}</w:body></w:document>',
        "word/_rels/document.xml.rels": _relationships([(f"{NS_REL}/styles", "styles.xml")]),
        "word/styles.xml": WORD_STYLES,
    }
    return _package(parts, {"word/document.xml": f"{CT}.wordprocessingml.document.main+xml",
                            "word/styles.xml": f"{CT}.wordprocessingml.styles+xml",
                            "docProps/core.xml": "application/vnd.openxmlformats-package.core-properties+xml"})


# --- PowerPoint ------------------------------------------------------------------------------------

SLIDE_NS = f'xmlns:a="{NS_DRAW}" xmlns:r="{NS_REL}" xmlns:p="{NS_SLIDE}"'
GROUP = '<p:nvGrpSpPr><p:cNvPr id="1" name=""/><p:cNvGrpSpPr/><p:nvPr/></p:nvGrpSpPr><p:grpSpPr/>'
COLOURS = [("dk1", "000000"), ("lt1", "FFFFFF"), ("dk2", "1F2937"), ("lt2", "F3F4F6"), ("accent1", "2563EB"),
           ("accent2", "DC2626"), ("accent3", "16A34A"), ("accent4", "CA8A04"), ("accent5", "7C3AED"),
           ("accent6", "0891B2"), ("hlink", "1D4ED8"), ("folHlink", "6D28D9")]
FILL = '<a:solidFill><a:schemeClr val="phClr"/></a:solidFill>'
THEME = (f'{XML}<a:theme xmlns:a="{NS_DRAW}" name="Plain"><a:themeElements>'
         '<a:clrScheme name="Plain">' + "".join(f'<a:{n}><a:srgbClr val="{v}"/></a:{n}>' for n, v in COLOURS) + "</a:clrScheme>"
         '<a:fontScheme name="Plain"><a:majorFont><a:latin typeface="Calibri"/><a:ea typeface=""/><a:cs typeface=""/></a:majorFont>'
         '<a:minorFont><a:latin typeface="Calibri"/><a:ea typeface=""/><a:cs typeface=""/></a:minorFont></a:fontScheme>'
         f'<a:fmtScheme name="Plain"><a:fillStyleLst>{FILL * 3}</a:fillStyleLst>'
         '<a:lnStyleLst>' + '<a:ln w="9525"><a:solidFill><a:schemeClr val="phClr"/></a:solidFill></a:ln>' * 3 + '</a:lnStyleLst>'
         '<a:effectStyleLst>' + '<a:effectStyle><a:effectLst/></a:effectStyle>' * 3 + '</a:effectStyleLst>'
         f'<a:bgFillStyleLst>{FILL * 3}</a:bgFillStyleLst></a:fmtScheme></a:themeElements></a:theme>')
CLR_MAP = ('<p:clrMap bg1="lt1" tx1="dk1" bg2="lt2" tx2="dk2" accent1="accent1" accent2="accent2" accent3="accent3" '
           'accent4="accent4" accent5="accent5" accent6="accent6" hlink="hlink" folHlink="folHlink"/>')
MASTER = (f'{XML}<p:sldMaster {SLIDE_NS}><p:cSld><p:spTree>{GROUP}</p:spTree></p:cSld>{CLR_MAP}'
          '<p:sldLayoutIdLst><p:sldLayoutId id="2147483649" r:id="rId1"/></p:sldLayoutIdLst></p:sldMaster>')
LAYOUT = (f'{XML}<p:sldLayout {SLIDE_NS} type="obj"><p:cSld name="Title and Content"><p:spTree>{GROUP}</p:spTree>'
          '</p:cSld><p:clrMapOvr><a:masterClrMapping/></p:clrMapOvr></p:sldLayout>')


def _frame(x: int, y: int, cx: int, cy: int) -> str:
    return f'<a:xfrm><a:off x="{x}" y="{y}"/><a:ext cx="{cx}" cy="{cy}"/></a:xfrm>'


def _text_paragraph(text: str, level: int = 0) -> str:
    props = f'<a:pPr lvl="{level}"/>' if level else ""
    return f'<a:p>{props}<a:r><a:rPr lang="en-US" dirty="0"/><a:t>{escape(text)}</a:t></a:r></a:p>'


def _placeholder(shape_id: int, name: str, placeholder: str, frame: str, paragraphs: str) -> str:
    return (f'<p:sp><p:nvSpPr><p:cNvPr id="{shape_id}" name="{name}"/><p:cNvSpPr><a:spLocks noGrp="1"/></p:cNvSpPr>'
            f"<p:nvPr>{placeholder}</p:nvPr></p:nvSpPr><p:spPr>{frame}</p:spPr>"
            f"<p:txBody><a:bodyPr/><a:lstStyle/>{paragraphs}</p:txBody></p:sp>")


def _slide_table(rows: Sequence[Sequence[str]], shape_id: int) -> str:
    width = 8000000 // len(rows[0])
    grid = "".join(f'<a:gridCol w="{width}"/>' for _ in rows[0])
    body = "".join('<a:tr h="370840">' + "".join(
        f"<a:tc><a:txBody><a:bodyPr/><a:lstStyle/>{_text_paragraph(cell)}</a:txBody><a:tcPr/></a:tc>" for cell in row)
        + "</a:tr>" for row in rows)
    return (f'<p:graphicFrame><p:nvGraphicFramePr><p:cNvPr id="{shape_id}" name="Table {shape_id}"/>'
            '<p:cNvGraphicFramePr><a:graphicFrameLocks noGrp="1"/></p:cNvGraphicFramePr><p:nvPr/></p:nvGraphicFramePr>'
            '<p:xfrm><a:off x="571500" y="1600200"/><a:ext cx="8000000" cy="2000000"/></p:xfrm>'
            '<a:graphic><a:graphicData uri="http://schemas.openxmlformats.org/drawingml/2006/table">'
            f'<a:tbl><a:tblPr firstRow="1" bandRow="1"/><a:tblGrid>{grid}</a:tblGrid>{body}</a:tbl>'
            "</a:graphicData></a:graphic></p:graphicFrame>")


def _slide(title: str, content: str) -> str:
    heading = _placeholder(2, "Title 1", '<p:ph type="title"/>', _frame(457200, 274638, 8229600, 1143000), _text_paragraph(title))
    return (f"{XML}<p:sld {SLIDE_NS}><p:cSld><p:spTree>{GROUP}{heading}{content}</p:spTree></p:cSld>"
            "<p:clrMapOvr><a:masterClrMapping/></p:clrMapOvr></p:sld>")


def deck(rng: random.Random, count: int, noise: float) -> bytes:
    """A .pptx deck: a title slide, content slides with bullets (some indented) under a title, and
    a slide holding a table, in a number that varies with ``count``."""
    title = _title(rng)
    slides = [_slide(title, _placeholder(3, "Subtitle 2", '<p:ph type="subTitle" idx="1"/>',
                                         _frame(457200, 1600200, 8229600, 1500000), _text_paragraph(sentence(rng))))]
    for _ in range(max(2, min(12, count // 4))):
        bullets = []
        for _ in range(rng.randint(2, 5)):
            bullets.append(_text_paragraph(sentence(rng)))
            if rng.random() < 0.3 + noise / 2:
                bullets.append(_text_paragraph(f"{rng.choice(NOUNS).capitalize()}: {rng.randint(2, 40)} days", level=1))
        body = _placeholder(3, "Content Placeholder 2", '<p:ph idx="1"/>', _frame(457200, 1600200, 8229600, 4525963),
                            "".join(bullets))
        slides.append(_slide(f"{rng.choice(TOPICS).capitalize()}: {rng.choice(VERBS)} {rng.choice(NOUNS)}", body))
    slides.insert(rng.randrange(1, len(slides) + 1), _slide("Open items", _slide_table(_table_rows(rng, max(2, min(8, count // 6))), 3)))
    count_slides = len(slides)
    listed = "".join(f'<p:sldId id="{256 + n}" r:id="rId{n + 3}"/>' for n in range(count_slides))
    parts = {
        "_rels/.rels": _relationships([(OFFICE_DOC, "ppt/presentation.xml"), (CORE_REL, "docProps/core.xml")]),
        "docProps/core.xml": _core(title, rng.choice(AUTHORS), _created(rng)),
        "ppt/presentation.xml": (f'{XML}<p:presentation {SLIDE_NS}><p:sldMasterIdLst><p:sldMasterId id="2147483648" r:id="rId1"/>'
                                 f'</p:sldMasterIdLst><p:sldIdLst>{listed}</p:sldIdLst><p:sldSz cx="9144000" cy="6858000"/>'
                                 '<p:notesSz cx="6858000" cy="9144000"/></p:presentation>'),
        "ppt/_rels/presentation.xml.rels": _relationships(
            [(f"{NS_REL}/slideMaster", "slideMasters/slideMaster1.xml"), (f"{NS_REL}/theme", "theme/theme1.xml"),
             *((f"{NS_REL}/slide", f"slides/slide{n}.xml") for n in range(1, count_slides + 1))]),
        "ppt/slideMasters/slideMaster1.xml": MASTER,
        "ppt/slideMasters/_rels/slideMaster1.xml.rels": _relationships(
            [(f"{NS_REL}/slideLayout", "../slideLayouts/slideLayout1.xml"), (f"{NS_REL}/theme", "../theme/theme1.xml")]),
        "ppt/slideLayouts/slideLayout1.xml": LAYOUT,
        "ppt/slideLayouts/_rels/slideLayout1.xml.rels": _relationships(
            [(f"{NS_REL}/slideMaster", "../slideMasters/slideMaster1.xml")]),
        "ppt/theme/theme1.xml": THEME,
        **{f"ppt/slides/slide{n}.xml": text for n, text in enumerate(slides, start=1)},
        **{f"ppt/slides/_rels/slide{n}.xml.rels": _relationships([(f"{NS_REL}/slideLayout", "../slideLayouts/slideLayout1.xml")])
           for n in range(1, count_slides + 1)},
    }
    overrides = {"ppt/presentation.xml": f"{CT}.presentationml.presentation.main+xml",
                 "ppt/slideMasters/slideMaster1.xml": f"{CT}.presentationml.slideMaster+xml",
                 "ppt/slideLayouts/slideLayout1.xml": f"{CT}.presentationml.slideLayout+xml",
                 "ppt/theme/theme1.xml": f"{CT}.theme+xml",
                 "docProps/core.xml": "application/vnd.openxmlformats-package.core-properties+xml",
                 **{f"ppt/slides/slide{n}.xml": f"{CT}.presentationml.slide+xml" for n in range(1, count_slides + 1)}}
    return _package(parts, overrides)
