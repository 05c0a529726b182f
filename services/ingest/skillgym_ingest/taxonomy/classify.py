"""Offline keyword/TF-IDF classification into the taxonomy.

Each subcategory is a bag of keywords; a keyword's weight is its inverse document frequency
across subcategories, so words that name one subcategory count more than shared ones.
Name and description count three times as much as the body."""

from __future__ import annotations

import functools
import json
import math
import re
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from skillgym_ingest.errors import IngestError

DEFAULT_TAXONOMY = Path(__file__).with_name("taxonomy.json")
_TOKEN = re.compile(r"[a-z0-9][a-z0-9.+#-]*[a-z0-9+#]|[a-z0-9]")
HEADER_WEIGHT = 3.0


class TaxonomyError(IngestError):
    reason = "taxonomy_invalid"


@dataclass(frozen=True)
class Subcategory:
    id: str
    category: str
    keywords: tuple[str, ...]


@dataclass(frozen=True)
class Taxonomy:
    version: str
    subcategories: tuple[Subcategory, ...]

    @property
    def categories(self) -> list[str]:
        return list(dict.fromkeys(s.category for s in self.subcategories))


@dataclass(frozen=True)
class Classification:
    category: str | None
    subcategory: str | None
    confidence: float
    matched: tuple[str, ...]


@functools.lru_cache(maxsize=8)
def load_taxonomy(path: Path | None = None) -> Taxonomy:
    source = path or DEFAULT_TAXONOMY
    try:
        data: Any = json.loads(Path(source).read_text())
        subs = tuple(
            Subcategory(str(sub["id"]), str(cat["id"]), tuple(str(k).lower() for k in sub["keywords"]))
            for cat in data["categories"] for sub in cat["subcategories"]
        )
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise TaxonomyError(f"taxonomy cannot be loaded: {exc}", path=str(source)) from exc
    if not subs:
        raise TaxonomyError("taxonomy has no subcategories", path=str(source))
    return Taxonomy(str(data.get("version", "1")), subs)


def tokens(text: str) -> list[str]:
    return _TOKEN.findall(text.lower())


def _variants(keyword: str) -> tuple[str, ...]:
    # "pull-request" also matches "pull request" written as two words (joined below as bigrams).
    return (keyword, keyword.replace("-", " ")) if "-" in keyword else (keyword,)


class KeywordClassifier:
    def __init__(self, taxonomy: Taxonomy) -> None:
        self.taxonomy = taxonomy
        df: dict[str, int] = {}
        for sub in taxonomy.subcategories:
            for keyword in set(sub.keywords):
                df[keyword] = df.get(keyword, 0) + 1
        total = len(taxonomy.subcategories)
        self._index: dict[str, list[tuple[int, str, float]]] = {}
        for position, sub in enumerate(taxonomy.subcategories):
            for keyword in sub.keywords:
                weight = math.log(1 + total / df[keyword])
                for variant in _variants(keyword):
                    self._index.setdefault(variant, []).append((position, keyword, weight))
        self._phrases = [term for term in self._index if " " in term]

    def _counts(self, text: str) -> dict[str, int]:
        lowered = text.lower()
        counts: dict[str, int] = Counter(filter(self._index.__contains__, _TOKEN.findall(lowered)))
        for phrase in self._phrases:
            found = lowered.count(phrase)
            if found:
                counts[phrase] = found
        return counts

    def classify(self, name: str, description: str, body: str) -> Classification:
        scores = [0.0] * len(self.taxonomy.subcategories)
        matched: list[set[str]] = [set() for _ in scores]
        for text, weight in ((f"{name.replace('-', ' ')} {description}", HEADER_WEIGHT), (body[:20000], 1.0)):
            # Sorted, so that float sums (and so ties) do not depend on the interpreter's hash seed.
            for term, count in sorted(self._counts(text).items()):
                for position, keyword, idf in self._index.get(term, ()):
                    scores[position] += weight * idf * (1 + math.log(count))
                    matched[position].add(keyword)
        best = max(range(len(scores)), key=scores.__getitem__)
        if scores[best] <= 0:
            return Classification(None, None, 0.0, ())
        ranked = sorted(scores, reverse=True)
        margin = ranked[0] / (ranked[0] + ranked[1]) if len(ranked) > 1 else 1.0
        strength = 1 - math.exp(-ranked[0] / 10)
        sub = self.taxonomy.subcategories[best]
        return Classification(sub.category, sub.id, round(margin * strength, 3), tuple(sorted(matched[best])))
