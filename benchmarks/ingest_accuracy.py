"""Ingest accuracy on a hand-labelled corpus: precision and recall per need flag and for duplicate clusters.

Runs the whole ingest pipeline (no LLM) over ``tests/ingest/corpus`` and scores the runtime
annotations (network, GPU, credentials, external binaries) and the duplicate clusters
(pairwise precision/recall) against ``tests/ingest/corpus/labels.json``. Every number comes
with the skills behind its errors.

When the folder of real public skills next to the checkout (``../shared/corpus/skills``)
exists, it is scored too, against ``tests/ingest/corpus/real_skills_labels.json``; tests never
read it.

Run: ``python benchmarks/ingest_accuracy.py``; writes ``benchmarks/results/ingest_accuracy.json``.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
for extra in ("shared", "services/ingest", "."):
    if str(ROOT / extra) not in sys.path:
        sys.path.insert(0, str(ROOT / extra))

CORPUS = ROOT / "tests" / "ingest" / "corpus"
REAL_CORPUS = ROOT.parent / "shared" / "corpus" / "skills"
RESULTS = ROOT / "benchmarks" / "results" / "ingest_accuracy.json"


def evaluate(corpus: Path, labels_path: Path) -> dict[str, Any]:
    from skillgym_ingest.evaluation import load_labels, score
    from skillgym_ingest.pipeline import ingest
    from skillgym_ingest.settings import IngestSettings

    labels = load_labels(labels_path)
    started = time.perf_counter()
    result = ingest([corpus], settings=IngestSettings(workers=1))
    elapsed = time.perf_counter() - started
    report = score(result.records, labels)
    folder = {record.skill_id: record.source.rsplit("/", 1)[-1] for record in result.records}
    report["duplicates"]["found"] = [
        {"skill": folder[record.skill_id], "of": folder.get(record.duplicate_of, record.duplicate_of),
         "kind": record.duplicate_kind, "similarity": record.duplicate_similarity,
         "shared_scripts": _shared_scripts(corpus / folder[record.skill_id],
                                           corpus / folder.get(record.duplicate_of, ""))}
        for record in result.records if record.duplicate_of
    ]
    report["funnel"] = result.funnel
    report["seconds"] = round(elapsed, 3)
    return report


def _shared_scripts(a: Path, b: Path) -> list[list[str]]:
    """Script files the two skills share once comments and formatting are gone, for the reviewer."""
    from skillgym_ingest.content import build_content
    from skillgym_ingest.loader import load_folder
    from skillgym_ingest.script_signature import fingerprint, shared_files
    from skillgym_ingest.settings import IngestSettings

    settings = IngestSettings()
    prints = []
    for root in (a, b):
        loaded = load_folder(root, str(root), max_files=settings.max_walk_files, max_bytes=settings.max_skill_bytes,
                             max_file_bytes=settings.max_file_bytes)
        prints.append(fingerprint(build_content(loaded, settings.max_scan_bytes), settings))
    return [list(pair) for pair in shared_files(prints[0], prints[1])]


def summary(report: dict[str, Any]) -> dict[str, Any]:
    line = {flag: {k: v[k] for k in ("precision", "recall")} for flag, v in report["flags"].items()}
    line["duplicates"] = {k: report["duplicates"][k] for k in ("precision", "recall")}
    return line


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--corpus", type=Path, default=CORPUS)
    parser.add_argument("--labels", type=Path, default=CORPUS / "labels.json")
    parser.add_argument("--real-corpus", type=Path, default=REAL_CORPUS)
    parser.add_argument("--real-labels", type=Path, default=CORPUS / "real_skills_labels.json")
    parser.add_argument("--out", type=Path, default=RESULTS)
    args = parser.parse_args()
    report: dict[str, Any] = {"fixture_corpus": evaluate(args.corpus, args.labels)}
    print(json.dumps({"fixture_corpus": summary(report["fixture_corpus"])}))
    if args.real_corpus.is_dir():
        report["real_corpus"] = evaluate(args.real_corpus, args.real_labels)
        print(json.dumps({"real_corpus": summary(report["real_corpus"])}))
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(report, indent=2) + "\n")


if __name__ == "__main__":
    main()
