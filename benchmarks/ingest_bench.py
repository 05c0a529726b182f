"""Ingest throughput, memory and duplicate detection on a synthetic crawl, side by side with peers.

Generates N synthetic skill folders (SKILL.md + a script, some with references) of which about
10% are planted duplicates of earlier skills: exact copies, formatting-only copies (CRLF,
spacing, case) and reworded copies (about 8% of words swapped, a sentence dropped, renamed).
Then, each in a fresh process so peak RSS is clean:

- SkillGym ingest end to end (discover, read, parse, annotate, screen, dedup, classify, write
  ``skills.jsonl``) at two corpus sizes, reporting skills/s and peak RSS of the main process
  and of the largest worker;
- duplicate recall and precision against the planted ground truth;
- a naive peer: exact pairwise shingle Jaccard over a sample, extrapolated to the corpus;
- datasketch (MinHash + MinHashLSH) on the same sample, as a library peer for the dedup step.

The largest size is ingested ``--repeat`` times (default 2) since the machine is shared; every
run records the 1-minute load average before and after it. The summary gives skills/s per
size, the peak-RSS ratio between the largest and smallest corpus (1.0 is flat memory) and the
end-to-end speedup over the naive pairwise baseline extrapolated to the largest corpus.

Run: ``python benchmarks/ingest_bench.py [--sizes 10000 50000] [--sample 1500] [--repeat 2]``;
writes ``benchmarks/results/ingest_bench.json`` (``ingest_bench_before.json`` holds the numbers
from before the throughput work, for comparison).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
for extra in ("shared", "services/ingest", "."):
    if str(ROOT / extra) not in sys.path:
        sys.path.insert(0, str(ROOT / extra))

RESULTS = ROOT / "benchmarks" / "results" / "ingest_bench.json"
FUNCTION = ["the", "a", "to", "of", "and", "for", "with", "when", "use", "this", "that", "into", "from", "each", "then", "your", "it", "is", "in", "on", "by"]
VERBS = ["read", "parse", "write", "check", "convert", "merge", "split", "validate", "render", "export", "collect", "filter", "sort", "count"]


def _vocabulary(rng: random.Random, size: int = 6000) -> list[str]:
    syllables = ["ka", "lo", "mi", "ner", "sto", "va", "quin", "tra", "pel", "dor", "fi", "gra", "zu", "ben", "shi"]
    words = set()
    while len(words) < size:
        words.add("".join(rng.choice(syllables) for _ in range(rng.randint(2, 4))))
    return sorted(words)


def _sentence(rng: random.Random, vocab: list[str]) -> str:
    nouns = [rng.choice(vocab) for _ in range(4)]
    return (f"{rng.choice(VERBS).capitalize()} the {nouns[0]} {nouns[1]} with the {nouns[2]} tool and "
            f"write each {nouns[3]} to the output file when it is ready.")


def _skill(rng: random.Random, vocab: list[str], index: int) -> dict[str, Any]:
    topic = [rng.choice(vocab) for _ in range(3)]
    sentences = [_sentence(rng, vocab) for _ in range(rng.randint(18, 40))]
    description = (f"{rng.choice(VERBS).capitalize()} {topic[0]} {topic[1]} records into a {topic[2]} report. "
                   f"Use when the user asks to {rng.choice(VERBS)} {topic[0]} data.")
    body_lines = [f"# {topic[0].capitalize()} {topic[1]}", "", f"Use this skill to work with {topic[0]} {topic[2]}.",
                  "", "## Steps"]
    body_lines += [f"{n}. {s}" for n, s in enumerate(sentences[:6], start=1)]
    body_lines += ["", "## Notes", "", *sentences[6:]]
    body_lines += ["", "```bash", f"python scripts/{topic[0]}.py input.csv output.md", "```"]
    script = "\n".join(
        ["import csv", "import json", "import sys", "", ""]
        + [f"def {rng.choice(vocab)}_{n}(rows):\n    return [r for r in rows if r.get('{rng.choice(vocab)}')]\n"
           for n in range(rng.randint(3, 8))]
        + ["if __name__ == '__main__':", "    print(json.dumps(sys.argv))", ""]
    )
    files = {f"scripts/{topic[0]}.py": script}
    if rng.random() < 0.3:
        files["references/REFERENCE.md"] = "\n".join(_sentence(rng, vocab) for _ in range(15))
    return {"name": f"skill-{index:06d}", "description": description, "body": "\n".join(body_lines), "files": files}


def _reword(rng: random.Random, vocab: list[str], skill: dict[str, Any], index: int) -> dict[str, Any]:
    lines = skill["body"].split("\n")
    words = [w if rng.random() > 0.08 else rng.choice(vocab) for w in " ".join(lines).split(" ")]
    body = " ".join(words).replace(" ## ", "\n\n## ").replace(" ```", "\n```")
    sentences = body.split(". ")
    if len(sentences) > 4:
        del sentences[rng.randrange(1, len(sentences) - 1)]
    return {**skill, "name": f"skill-{index:06d}", "body": ". ".join(sentences),
            "description": skill["description"].replace("Use when", "Use it when")}


def _write(root: Path, skill: dict[str, Any], crlf: bool = False) -> None:
    folder = root / skill["name"][-3:] / skill["name"]
    (folder / "scripts").mkdir(parents=True, exist_ok=True)
    text = f"---\nname: {skill['name']}\ndescription: {skill['description']}\n---\n{skill['body']}\n"
    if crlf:
        text = text.replace("\n", "  \r\n")
    (folder / "SKILL.md").write_bytes(text.encode())
    for rel, data in skill["files"].items():
        target = folder / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(data)


def generate(root: Path, count: int, seed: int = 7, dup_rate: float = 0.1) -> dict[str, str]:
    """Write ``count`` folders under ``root``; return {duplicate name: original name}."""
    rng = random.Random(seed)
    vocab = _vocabulary(rng)
    originals: list[dict[str, Any]] = []
    truth: dict[str, str] = {}
    for index in range(count):
        if originals and rng.random() < dup_rate:
            source = rng.choice(originals[-5000:])
            kind = rng.choice(["exact", "format", "reword"])
            skill = _reword(rng, vocab, source, index) if kind == "reword" else {**source, "name": f"skill-{index:06d}"}
            _write(root, skill, crlf=kind == "format")
            truth[skill["name"]] = source["name"]
        else:
            skill = _skill(rng, vocab, index)
            originals.append(skill)
            _write(root, skill)
    return truth


def _peak_rss_mb() -> dict[str, float]:
    """Peak RSS of this process and of its largest worker.

    The main process's figure is VmHWM, the high-water mark of its own address space: after
    ``exec`` Linux folds the parent's peak into ``ru_maxrss`` (the parent here holds the
    generated corpus), which would make the number depend on the generator, not on ingest."""
    return {"main_mb": round(_vm_hwm_kb() / 1024, 1),
            "largest_worker_mb": round(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024, 1),
            "main_ru_maxrss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)}


def _vm_hwm_kb() -> int:
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith("VmHWM:"):
                return int(line.split()[1])
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss


def run_one(corpus: Path, out: Path, workers: int) -> dict[str, Any]:
    """Runs inside a fresh process: ingest ``corpus`` and report time, RSS and dedup decisions."""
    from skillgym_ingest.cli import ingest_command
    from skillgym_ingest.settings import IngestSettings

    settings = IngestSettings(workers=workers)
    load_before = os.getloadavg()[0]
    started = time.perf_counter()
    result = ingest_command([corpus], out, settings=settings, keep_records=False, progress=False)
    elapsed = time.perf_counter() - started
    usage = [resource.getrusage(who) for who in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN)]
    cpu = sum(u.ru_utime + u.ru_stime for u in usage)
    found = result.funnel.get("found", 0)
    return {"seconds": round(elapsed, 2), "skills": found, "cpu_seconds": round(cpu, 1),
            "skills_per_cpu_s": round(found / cpu, 1), "load_average_1m_before": round(load_before, 2),
            "load_average_1m": round(os.getloadavg()[0], 2),
            "skills_per_s": round(result.funnel.get("found", 0) / elapsed, 1), "funnel": result.funnel,
            "peak_rss": _peak_rss_mb()}


def _clusters(truth: dict[str, str]) -> dict[str, str]:
    """Planted clusters: each folder name mapped to its cluster root (the first original)."""
    root: dict[str, str] = {}
    for duplicate, original in truth.items():
        root[duplicate] = root.get(original, original)
    return root


def _dedup_quality(out: Path, truth: dict[str, str]) -> dict[str, Any]:
    """Precision/recall over planted clusters: a flagged skill is right when its representative
    is in its planted cluster (whichever member discovery order made the representative)."""
    cluster = _clusters(truth)
    folder_of: dict[str, str] = {}
    flagged: dict[str, str] = {}
    with (out / "skills.jsonl").open() as handle:
        for line in handle:
            record = json.loads(line)
            folder = record["source"].rsplit("/", 1)[-1]
            folder_of.setdefault(record["skill_id"], folder)
            if record["duplicate_of"]:
                flagged[folder] = record["duplicate_of"]
    correct = sum(
        1 for name, rep in flagged.items()
        if cluster.get(name, name) == cluster.get(folder_of.get(rep, rep), folder_of.get(rep, rep))
    )
    return {"planted_duplicates": len(truth), "flagged": len(flagged), "correct": correct,
            "recall": round(correct / max(len(truth), 1), 4), "precision": round(correct / max(len(flagged), 1), 4)}


def peers(corpus: Path, sample: int, truth: dict[str, str], corpus_size: int) -> dict[str, Any]:
    """Naive pairwise Jaccard and datasketch on a sample, against SkillGym's MinHash on the same sample."""
    import numpy as np
    from skillgym_ingest.dedup import NearDuplicateIndex, shingle_hashes, signature
    from skillgym_ingest.settings import IngestSettings

    settings = IngestSettings()
    folders = sorted(p for p in corpus.glob("*/*") if p.is_dir())[:sample]
    texts = []
    for folder in folders:
        scripts = "\n".join(p.read_text() for p in sorted((folder / "scripts").glob("*.py")))
        texts.append((folder.name, (folder / "SKILL.md").read_text().split("---", 2)[-1] + "\n" + scripts))

    started = time.perf_counter()
    shingles = [shingle_hashes(text, settings.shingle_size) for _, text in texts]
    pairs = 0
    naive_dups: set[tuple[str, str]] = set()
    for i in range(len(shingles)):
        for j in range(i):
            inter = np.intersect1d(shingles[i], shingles[j], assume_unique=True).size
            union = shingles[i].size + shingles[j].size - inter
            pairs += 1
            if union and inter / union >= settings.near_dup_threshold:
                naive_dups.add((texts[i][0], texts[j][0]))
    naive_s = time.perf_counter() - started

    started = time.perf_counter()
    index = NearDuplicateIndex(settings)
    ours: set[tuple[str, str]] = set()
    for name, text in texts:
        found = index.query_or_add(name, signature(text, settings))
        if found:
            ours.add((name, found[0]))
    ours_s = time.perf_counter() - started

    from datasketch import MinHash, MinHashLSH

    started = time.perf_counter()
    lsh = MinHashLSH(threshold=settings.near_dup_threshold, num_perm=settings.minhash_perms)
    theirs: set[tuple[str, str]] = set()
    for name, text in texts:
        words = text.lower().split()
        minhash = MinHash(num_perm=settings.minhash_perms)
        minhash.update_batch([" ".join(words[k : k + settings.shingle_size]).encode()
                              for k in range(max(len(words) - settings.shingle_size + 1, 1))])
        candidates = lsh.query(minhash)
        if candidates:
            theirs.add((name, sorted(candidates)[0]))
        else:
            lsh.insert(name, minhash)
    datasketch_s = time.perf_counter() - started

    naive_dup_names = {a for a, _ in naive_dups}
    sample_truth = {n for n, _ in texts if n in truth and truth[n] in {m for m, _ in texts}}
    full_pairs = corpus_size * (corpus_size - 1) / 2
    return {
        "sample": len(texts),
        "naive_pairwise": {"pairs": pairs, "seconds": round(naive_s, 2),
                           "skills_per_s": round(len(texts) / naive_s, 1),
                           "extrapolated_seconds_for_corpus": round(naive_s / max(pairs, 1) * full_pairs),
                           "duplicates_found": len(naive_dup_names)},
        "skillgym_minhash_lsh": {"seconds": round(ours_s, 3), "skills_per_s": round(len(texts) / ours_s, 1),
                                 "duplicates_found": len(ours),
                                 "agreement_with_naive": round(
                                     len({a for a, _ in ours} & naive_dup_names) / max(len(naive_dup_names), 1), 4)},
        "datasketch_minhash_lsh": {"seconds": round(datasketch_s, 3),
                                   "skills_per_s": round(len(texts) / datasketch_s, 1),
                                   "duplicates_found": len(theirs),
                                   "agreement_with_naive": round(
                                       len({a for a, _ in theirs} & naive_dup_names) / max(len(naive_dup_names), 1),
                                       4)},
        "planted_in_sample": len(sample_truth),
        "speedup_vs_naive_on_sample": round(naive_s / ours_s, 1),
        "speedup_vs_datasketch": round(datasketch_s / ours_s, 2),
    }


def summarize(report: dict[str, Any]) -> dict[str, Any]:
    """Per-size throughput and the two ratios the targets are about."""
    runs = report["runs"]
    sizes = sorted({run["corpus_size"] for run in runs})
    per_size = {
        str(size): {
            "skills_per_s": [run["skills_per_s"] for run in runs if run["corpus_size"] == size],
            "load_average_1m": [run["load_average_1m"] for run in runs if run["corpus_size"] == size],
            "peak_rss_main_mb": max(run["peak_rss"]["main_mb"] for run in runs if run["corpus_size"] == size),
            "peak_rss_worker_mb": max(run["peak_rss"]["largest_worker_mb"] for run in runs if run["corpus_size"] == size),
        }
        for size in sizes
    }
    summary: dict[str, Any] = {"per_size": per_size}
    if len(sizes) > 1:
        small, large = per_size[str(sizes[0])], per_size[str(sizes[-1])]
        summary["rss_ratio_main"] = round(large["peak_rss_main_mb"] / small["peak_rss_main_mb"], 3)
        summary["rss_ratio_worker"] = round(large["peak_rss_worker_mb"] / small["peak_rss_worker_mb"], 3)
    peers_report = report.get("peers")
    if peers_report:
        largest = [run for run in runs if run["corpus_size"] == sizes[-1]]
        best = min(run["seconds"] for run in largest)
        summary["end_to_end_speedup_vs_naive"] = round(
            peers_report["naive_pairwise"]["extrapolated_seconds_for_corpus"] / best, 1)
    return summary


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[10000, 50000])
    parser.add_argument("--sample", type=int, default=1500)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--repeat", type=int, default=2, help="ingest runs of the largest corpus")
    parser.add_argument("--workdir", type=Path, default=None)
    parser.add_argument("--run-one", nargs=2, metavar=("CORPUS", "OUT"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.run_one:
        print(json.dumps(run_one(Path(args.run_one[0]), Path(args.run_one[1]), args.workers)))
        return
    workdir = Path(args.workdir or tempfile.mkdtemp(prefix="skillgym-ingest-bench-"))
    report: dict[str, Any] = {"machine": {"cpus": os.cpu_count(), "python": platform.python_version()},
                              "workers": args.workers, "runs": []}
    try:
        for size in args.sizes:
            corpus = workdir / f"corpus-{size}"
            started = time.perf_counter()
            truth = generate(corpus, size)
            generated_s = time.perf_counter() - started
            for attempt in range(args.repeat if size == max(args.sizes) else 1):
                out = workdir / f"out-{size}-{attempt}"
                child = subprocess.run(
                    [sys.executable, __file__, "--workers", str(args.workers), "--run-one", str(corpus), str(out)],
                    check=True, capture_output=True, text=True,
                )
                run = json.loads(child.stdout.strip().splitlines()[-1])
                run.update({"corpus_size": size, "attempt": attempt + 1, "generate_seconds": round(generated_s, 1),
                            "duplicates": _dedup_quality(out, truth)})
                report["runs"].append(run)
                print(json.dumps({k: run[k] for k in ("corpus_size", "attempt", "skills_per_s", "load_average_1m",
                                                      "peak_rss", "duplicates")}))
                shutil.rmtree(out, ignore_errors=True)
            if size == max(args.sizes):
                report["peers"] = peers(corpus, args.sample, truth, size)
                print(json.dumps(report["peers"]))
            shutil.rmtree(corpus, ignore_errors=True)
    finally:
        if args.workdir is None:
            shutil.rmtree(workdir, ignore_errors=True)
    report["summary"] = summarize(report)
    print(json.dumps(report["summary"]))
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps(report, indent=2) + "\n")


if __name__ == "__main__":
    main()
