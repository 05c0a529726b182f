"""Lays out the documents of one instance: PDFs with reportlab, Word files with python-docx
(run in the sandbox). Every value is already text; this script only places it."""

import io
import json
import os
import re
import sys
import zipfile

FIXED = (2025, 4, 1, 9, 0, 0)
STAMP_TIME = "2025-04-01T09:00:00Z"


def pdf(doc, path):
    from reportlab.lib import colors
    from reportlab.lib.pagesizes import A4
    from reportlab.lib.styles import getSampleStyleSheet
    from reportlab.platypus import PageBreak, Paragraph, SimpleDocTemplate, Spacer, Table, TableStyle

    styles = getSampleStyleSheet()
    running = doc["running"]

    def decorate(canvas, template):
        canvas.saveState()
        if running:
            canvas.setFont("Helvetica", 8)
            canvas.drawString(50, A4[1] - 30, running["header"])
            canvas.drawRightString(A4[0] - 50, 25, f"Page {template.page} of {running['pages']}")
        if doc["stamp"] and template.page == 1:
            canvas.setFillColor(colors.red)
            canvas.setFont("Helvetica-Bold", 30)
            canvas.drawRightString(A4[0] - 50, A4[1] - 75, doc["stamp"])
        canvas.restoreState()

    def table(rows):
        data = [doc["header"], *rows]
        grid = Table(data, rowHeights=16, repeatRows=1)
        style = [("GRID", (0, 0), (-1, -1), 0.5, colors.grey), ("FONT", (0, 0), (-1, -1), "Helvetica", 8.5),
                 ("FONT", (0, 0), (-1, 0), "Helvetica-Bold", 8.5), ("BACKGROUND", (0, 0), (-1, 0), colors.lightgrey)]
        style += [("ALIGN", (i, 1), (i, -1), "RIGHT") for i, money in enumerate(doc["money"]) if money]
        grid.setStyle(TableStyle(style))
        return grid

    story = [Paragraph(doc["heading"], styles["Title"]), Paragraph(doc["issuer"], styles["Normal"]), Spacer(1, 8)]
    story += [Paragraph(f"<b>{label}:</b> {value}", styles["Normal"]) for label, value in doc["fields"]]
    story.append(Spacer(1, 12))
    rows, first, later = doc["rows"], doc["first_page_rows"], doc["page_rows"]
    chunks = [rows[:first]] + [rows[i:i + later] for i in range(first, len(rows), later)]
    for index, chunk in enumerate(chunks):
        if index:
            story.append(PageBreak())
        story.append(table(chunk))
    story += [Spacer(1, 10), Paragraph(f"<b>{doc['total']}</b>", styles["Normal"])]
    template = SimpleDocTemplate(path, pagesize=A4, title=doc["title"], author=doc["author"], subject=doc["heading"],
                                 creator="billing-export", leftMargin=50, rightMargin=50, topMargin=50,
                                 bottomMargin=50, invariant=1)
    template.build(story, onFirstPage=decorate, onLaterPages=decorate)


def word(doc, path):
    import datetime

    from docx import Document
    from docx.shared import Pt, RGBColor

    document = Document()
    if doc["stamp"]:
        run = document.add_paragraph().add_run(doc["stamp"])
        run.bold, run.font.size, run.font.color.rgb = True, Pt(28), RGBColor(0xC0, 0, 0)
    if doc["running"]:
        document.sections[0].header.paragraphs[0].text = doc["running"]["header"]
    document.add_heading(doc["heading"], level=1)
    document.add_paragraph(doc["issuer"])
    for label, value in doc["fields"]:
        paragraph = document.add_paragraph()
        paragraph.add_run(f"{label}:").bold = True
        paragraph.add_run(f" {value}")
    grid = document.add_table(rows=1, cols=len(doc["header"]))
    grid.style = "Table Grid"
    for cell, title in zip(grid.rows[0].cells, doc["header"], strict=True):
        cell.text = title
    for row in doc["rows"]:
        for cell, value in zip(grid.add_row().cells, row, strict=True):
            cell.text = value
    document.add_paragraph().add_run(doc["total"]).bold = True
    props = document.core_properties
    props.title, props.author, props.subject = doc["title"], doc["author"], doc["heading"]
    props.created = props.modified = datetime.datetime(*FIXED)
    props.last_modified_by = doc["author"]
    props.revision = 1
    buffer = io.BytesIO()
    document.save(buffer)
    with open(path, "wb") as handle:
        handle.write(deterministic_zip(buffer.getvalue()))


def deterministic_zip(data):
    """The saved package with fixed entry times and core-property stamps."""
    source = zipfile.ZipFile(io.BytesIO(data))
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as target:
        for info in source.infolist():
            content = source.read(info.filename)
            if info.filename == "docProps/core.xml":
                content = re.sub(rb"(<dcterms:(?:created|modified)[^>]*>)[^<]*", rb"\g<1>" + STAMP_TIME.encode(), content)
            target.writestr(zipfile.ZipInfo(info.filename, date_time=FIXED), content, zipfile.ZIP_DEFLATED)
    return out.getvalue()


params_path, out_dir = sys.argv[1], sys.argv[2]
with open(params_path, encoding="utf-8") as handle:
    params = json.load(handle)
for doc in params["documents"]:
    target = os.path.join(out_dir, doc["file"])
    os.makedirs(os.path.dirname(target), exist_ok=True)
    (word if doc["format"] == "docx" else pdf)(doc, target)
