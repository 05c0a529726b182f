"""Draws the off-brand slide deck of one instance with python-pptx (run in the sandbox)."""

import io
import json
import os
import re
import sys
import zipfile

from pptx import Presentation
from pptx.dml.color import RGBColor
from pptx.enum.shapes import MSO_SHAPE
from pptx.util import Pt

KINDS = {"rect": MSO_SHAPE.RECTANGLE, "oval": MSO_SHAPE.OVAL, "rounded": MSO_SHAPE.ROUNDED_RECTANGLE}
FIXED = (2025, 4, 1, 9, 0, 0)


def rgb(value):
    return RGBColor.from_string(value.lstrip("#").upper())


def build(spec):
    deck = Presentation()
    blank = deck.slide_layouts[6]
    for slide_spec in spec["slides"]:
        slide = deck.slides.add_slide(blank)
        slide.background.fill.solid()
        slide.background.fill.fore_color.rgb = rgb(slide_spec["background"])
        for item in slide_spec["shapes"]:
            left, top, width, height = (Pt(v) for v in item["box"])
            if item["kind"] == "text":
                shape = slide.shapes.add_textbox(left, top, width, height)
                paragraph = shape.text_frame.paragraphs[0]
                for run_spec in item["runs"]:
                    run = paragraph.add_run()
                    run.text = run_spec["text"]
                    run.font.size = Pt(run_spec["size"])
                    run.font.name = run_spec["font"]
                    run.font.color.rgb = rgb(run_spec["color"])
            else:
                shape = slide.shapes.add_shape(KINDS[item["kind"]], left, top, width, height)
                shape.fill.solid()
                shape.fill.fore_color.rgb = rgb(item["fill"])
                shape.line.fill.background()
            shape.name = item["name"]
    return deck


def deterministic(data):
    """The saved deck with fixed timestamps."""
    stamp = b"2025-04-01T09:00:00Z"
    source = zipfile.ZipFile(io.BytesIO(data))
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as target:
        for info in source.infolist():
            content = source.read(info.filename)
            if info.filename == "docProps/core.xml":
                content = re.sub(rb"(<dcterms:(?:created|modified)[^>]*>)[^<]*", rb"\g<1>" + stamp, content)
            target.writestr(zipfile.ZipInfo(info.filename, date_time=FIXED), content, zipfile.ZIP_DEFLATED)
    return out.getvalue()


params_path, out_dir = sys.argv[1], sys.argv[2]
with open(params_path, encoding="utf-8") as handle:
    params = json.load(handle)
buffer = io.BytesIO()
build(params).save(buffer)
path = os.path.join(out_dir, params["file"])
os.makedirs(os.path.dirname(path), exist_ok=True)
with open(path, "wb") as handle:
    handle.write(deterministic(buffer.getvalue()))
