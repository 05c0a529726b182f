"""Read and write the XML parts of an Office Open XML package (.docx) without extra libraries."""

from __future__ import annotations

import shutil
import tempfile
import zipfile
from collections.abc import Iterator
from pathlib import Path
from xml.etree import ElementTree as ET

NS = {
    "w": "http://schemas.openxmlformats.org/wordprocessingml/2006/main",
    "r": "http://schemas.openxmlformats.org/officeDocument/2006/relationships",
    "cp": "http://schemas.openxmlformats.org/package/2006/metadata/core-properties",
    "dc": "http://purl.org/dc/elements/1.1/",
}
for prefix, uri in NS.items():
    ET.register_namespace(prefix, uri)

W = "{" + NS["w"] + "}"
BODY_PARTS = ("word/document.xml",)
EXTRA_PARTS_PREFIXES = ("word/header", "word/footer", "word/footnotes", "word/endnotes", "word/comments")


class Package:
    """An unpacked .docx: parts are parsed lazily and written back on save."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._zip = zipfile.ZipFile(path)
        self._parts: dict[str, ET.ElementTree] = {}

    def names(self) -> list[str]:
        return self._zip.namelist()

    def text_parts(self) -> list[str]:
        names = self.names()
        extra = sorted(n for n in names if n.startswith(EXTRA_PARTS_PREFIXES) and n.endswith(".xml"))
        return [n for n in BODY_PARTS if n in names] + extra

    def part(self, name: str) -> ET.ElementTree:
        if name not in self._parts:
            with self._zip.open(name) as handle:
                self._parts[name] = ET.parse(handle)
        return self._parts[name]

    def paragraphs(self, name: str) -> Iterator[ET.Element]:
        yield from self.part(name).getroot().iter(W + "p")

    def core_properties(self) -> dict[str, str]:
        if "docProps/core.xml" not in self.names():
            return {}
        root = self.part("docProps/core.xml").getroot()
        return {child.tag.split("}")[-1]: (child.text or "") for child in root}

    def save(self, target: Path) -> None:
        with tempfile.NamedTemporaryFile(delete=False, suffix=".docx", dir=target.parent) as tmp:
            temp_path = Path(tmp.name)
        with zipfile.ZipFile(temp_path, "w", zipfile.ZIP_DEFLATED) as out:
            for info in self._zip.infolist():
                if info.filename in self._parts:
                    data = ET.tostring(self._parts[info.filename].getroot(), xml_declaration=True,
                                       encoding="UTF-8", standalone=True)
                    out.writestr(info, data)
                else:
                    out.writestr(info, self._zip.read(info.filename))
        shutil.move(temp_path, target)

    def close(self) -> None:
        self._zip.close()


def runs(paragraph: ET.Element) -> list[ET.Element]:
    return [r for r in paragraph.iter(W + "r") if r.find(W + "t") is not None]


def paragraph_text(paragraph: ET.Element) -> str:
    return "".join(t.text or "" for t in paragraph.iter(W + "t"))


def set_run_text(run: ET.Element, text: str) -> None:
    node = run.find(W + "t")
    if node is None:
        node = ET.SubElement(run, W + "t")
    node.text = text
    node.set("{http://www.w3.org/XML/1998/namespace}space", "preserve")


def merge_runs(paragraph: ET.Element) -> ET.Element | None:
    """Put the paragraph's whole text into its first run so matches cannot straddle run borders."""
    parts = runs(paragraph)
    if not parts:
        return None
    text = paragraph_text(paragraph)
    for extra in parts[1:]:
        for parent in paragraph.iter():
            if extra in list(parent):
                parent.remove(extra)
                break
    set_run_text(parts[0], text)
    return parts[0]
