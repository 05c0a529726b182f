"""The skill card ``K_i``: a skill's record and files, with its SKILL.md split into the parts
templates draw task data from (sections, quotable lines, ordered steps, code blocks)."""

from __future__ import annotations

import re
import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from skillgym_core import keys
from skillgym_core.archive import unpack_dir
from skillgym_core.contracts.skill import SkillRecord
from skillgym_core.store.base import Store, get_json

_HEADING = re.compile(r"^(#{1,6})\s+(.+?)\s*#*\s*$")
_FENCE = re.compile(r"^\s*(```|~~~)")
_NUMBERED = re.compile(r"^\s{0,3}(\d+)[.)]\s+(.+)$")
_MARKUP = re.compile(r"[*_`]+")
_BULLET = re.compile(r"^\s*(?:[-*+]|\d+[.)])\s+(?:\[[ xX]\]\s+)?")


def clean_inline(text: str) -> str:
    """Markdown text without list markers, emphasis and code ticks."""
    return _MARKUP.sub("", _BULLET.sub("", text)).strip()


@dataclass(frozen=True)
class Line:
    number: int  # 1-based line in SKILL.md (body + front matter offset)
    text: str
    section: str


@dataclass(frozen=True)
class Section:
    title: str
    level: int
    start_line: int
    lines: tuple[Line, ...]
    steps: tuple[str, ...]


@dataclass
class SkillCard:
    record: SkillRecord
    root: Path
    skill_md: str
    sections: list[Section] = field(default_factory=list)

    @property
    def name(self) -> str:
        return self.record.name

    @property
    def dir_name(self) -> str:
        return re.sub(r"[^A-Za-z0-9._-]+", "-", self.record.name).strip("-.") or "skill"

    def quotable_lines(self, min_chars: int = 24) -> list[Line]:
        """Body lines unique in SKILL.md that sit under a heading and carry real prose."""
        counts: dict[str, int] = {}
        for section in self.sections:
            for line in section.lines:
                counts[line.text] = counts.get(line.text, 0) + 1
        return [
            line
            for section in self.sections
            for line in section.lines
            if len(line.text) >= min_chars and counts[line.text] == 1 and re.search(r"[A-Za-z]{3}", line.text)
        ]

    def step_lists(self, min_steps: int = 3) -> list[Section]:
        return [s for s in self.sections if len(s.steps) >= min_steps]


def parse_sections(skill_md: str) -> list[Section]:
    """Split SKILL.md into heading-led sections; text before the first heading and inside code
    fences is not quotable."""
    lines = skill_md.split("\n")
    start = 0
    if lines and lines[0].strip() == "---":
        for index in range(1, len(lines)):
            if lines[index].strip() in ("---", "..."):
                start = index + 1
                break
    sections: list[Section] = []
    title: str | None = None
    level = 0
    heading_line = 0
    body: list[Line] = []
    steps: list[str] = []
    in_fence = False

    def close() -> None:
        if title is not None:
            sections.append(Section(title, level, heading_line, tuple(body), tuple(steps)))

    for index in range(start, len(lines)):
        raw = lines[index]
        if _FENCE.match(raw):
            in_fence = not in_fence
            continue
        if in_fence:
            continue
        match = _HEADING.match(raw)
        if match:
            close()
            title, level, heading_line = clean_inline(match.group(2)), len(match.group(1)), index + 1
            body, steps = [], []
            continue
        if title is None:
            continue
        text = clean_inline(raw)
        if text:
            body.append(Line(index + 1, text, title))
        numbered = _NUMBERED.match(raw)
        if numbered:
            steps.append(clean_inline(numbered.group(2)))
    close()
    return [s for s in sections if s.title]


def skill_root(unpacked: Path) -> Path:
    """The folder holding SKILL.md: the archive root, or its single top-level folder."""
    if (unpacked / "SKILL.md").is_file():
        return unpacked
    children = [p for p in unpacked.iterdir() if p.is_dir()]
    if len(children) == 1 and (children[0] / "SKILL.md").is_file():
        return children[0]
    return unpacked


@contextmanager
def skill_card(store: Store, skill_id: str, scratch: Path) -> Iterator[SkillCard]:
    """The skill's card, its folder unpacked under ``scratch`` for the duration."""
    unpacked = Path(tempfile.mkdtemp(prefix="skill-", dir=scratch))
    try:
        record = SkillRecord.model_validate(get_json(store, keys.skill_record(skill_id)))
        unpack_dir(store.get_bytes(keys.skill_files(skill_id)), unpacked)
        yield card_from_folder(record, skill_root(unpacked))
    finally:
        shutil.rmtree(unpacked, ignore_errors=True)


def card_from_folder(record: SkillRecord, root: Path) -> SkillCard:
    skill_md_path = root / "SKILL.md"
    text = skill_md_path.read_text(encoding="utf-8", errors="replace") if skill_md_path.is_file() else ""
    text = text.lstrip("\ufeff").replace("\r\n", "\n").replace("\r", "\n")
    return SkillCard(record=record, root=root, skill_md=text, sections=parse_sections(text))
