"""Report length, structure and readability statistics for a .docx document."""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections import Counter
from pathlib import Path

from ooxml_io import Package, W, paragraph_text

WORD = re.compile(r"[A-Za-z\u00C0-\u024F']+")
SENTENCE_END = re.compile(r"[.!?]+(?:\s|$)")


def syllables(word: str) -> int:
    groups = re.findall(r"[aeiouy]+", word.lower())
    count = len(groups) - (1 if word.lower().endswith("e") and len(groups) > 1 else 0)
    return max(count, 1)


def style_of(paragraph) -> str:  # type: ignore[no-untyped-def]
    props = paragraph.find(W + "pPr")
    style = props.find(W + "pStyle") if props is not None else None
    return style.get(W + "val", "Normal") if style is not None else "Normal"


def statistics(path: Path) -> dict[str, object]:
    package = Package(path)
    try:
        styles: Counter[str] = Counter()
        words: list[str] = []
        sentences = 0
        paragraphs = 0
        for paragraph in package.paragraphs("word/document.xml"):
            text = paragraph_text(paragraph).strip()
            if not text:
                continue
            paragraphs += 1
            styles[style_of(paragraph)] += 1
            words.extend(WORD.findall(text))
            sentences += max(len(SENTENCE_END.findall(text)), 1)
        properties = package.core_properties()
    finally:
        package.close()
    syllable_total = sum(syllables(w) for w in words)
    word_count = max(len(words), 1)
    flesch = 206.835 - 1.015 * (word_count / max(sentences, 1)) - 84.6 * (syllable_total / word_count)
    return {
        "title": properties.get("title", ""),
        "author": properties.get("creator", ""),
        "paragraphs": paragraphs,
        "words": len(words),
        "sentences": sentences,
        "headings": sum(n for s, n in styles.items() if s.lower().startswith("heading")),
        "styles": dict(styles.most_common()),
        "reading_minutes": round(len(words) / 230, 1),
        "flesch_reading_ease": round(flesch, 1),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("docx", nargs="+", type=Path)
    args = parser.parse_args()
    report = {str(path): statistics(path) for path in args.docx}
    print(json.dumps(report, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
