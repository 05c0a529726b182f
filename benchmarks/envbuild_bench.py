"""Task environment builds: the cached ``LocalVenvProvider`` against a naive peer on the same
machine and the same local wheels (no network).

- ``naive``: what a per-run setup would do: ``python -m venv`` (with pip bootstrapped through
  ensurepip) and the venv's own ``pip install``, every time;
- ``skillgym cold``: ``venv --without-pip`` plus the host's pip (``--python``), relocation and
  byte-compilation, then the atomic publish;
- ``skillgym hit``: a cache hit (what every later run of the task pays);
- ``skillgym 4x concurrent cold``: four threads asking for one new key at once (one builds).

Run: ``python -m benchmarks.envbuild_bench`` (writes benchmarks/results/envbuild_bench.json)."""

from __future__ import annotations

import json
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
for extra in ("shared", "."):
    if str(ROOT / extra) not in sys.path:
        sys.path.insert(0, str(ROOT / extra))

from skillgym_core.envbuild import LocalVenvProvider, PipSource, Requirements, parse_requirements  # noqa: E402

from tests.support.wheels import build_wheel  # noqa: E402

RESULTS = Path(__file__).parent / "results" / "envbuild_bench.json"
ROUNDS = 3


def wheelhouse(root: Path) -> Path:
    links = root / "links"
    for index in range(5):
        body = "".join(f"def f{i}(x):\n    return x + {i}\n" for i in range(200))
        build_wheel(links, f"benchpkg{index}", "1.0", {f"benchpkg{index}/__init__.py": body})
    return links


def naive(root: Path, links: Path, requirements: str) -> float:
    venv = Path(tempfile.mkdtemp(dir=root)) / "venv"
    started = time.perf_counter()
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, capture_output=True)
    (root / "req.txt").write_text(requirements)
    subprocess.run(
        [str(venv / "bin" / "python"), "-m", "pip", "install", "-q", "--no-index", "--find-links", str(links),
         "-r", str(root / "req.txt")],
        check=True, capture_output=True,
    )  # fmt: skip
    return time.perf_counter() - started


def concurrent(envs: LocalVenvProvider, requirements: Requirements, threads: int = 4) -> list[bool]:
    outcomes: list[bool] = []
    workers = [threading.Thread(target=lambda: outcomes.append(envs.ensure(requirements).cache_hit)) for _ in range(threads)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()
    return outcomes


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        links = wheelhouse(root)
        text = "".join(f"benchpkg{i}==1.0\n" for i in range(5))
        naive_s = [naive(root, links, text) for _ in range(ROUNDS)]
        cold_s, hit_s, concurrent_s = [], [], []
        for round_ in range(ROUNDS):
            envs = LocalVenvProvider(root / f"cache{round_}", source=PipSource(find_links=(str(links),), no_index=True))
            requirements = parse_requirements(text)
            started = time.perf_counter()
            envs.ensure(requirements)
            cold_s.append(time.perf_counter() - started)
            for _ in range(200):
                started = time.perf_counter()
                envs.ensure(requirements)
                hit_s.append(time.perf_counter() - started)
            shared = LocalVenvProvider(root / f"shared{round_}", source=PipSource(find_links=(str(links),), no_index=True))
            started = time.perf_counter()
            outcomes = concurrent(shared, requirements)
            concurrent_s.append(time.perf_counter() - started)
            assert sorted(outcomes) == [False, True, True, True], outcomes
    result = {
        "machine": "2 cores, shared with other work",
        "requirements": 5,
        "naive_venv_with_pip_s": {"median": round(statistics.median(naive_s), 3), "runs": [round(x, 3) for x in naive_s]},
        "skillgym_cold_build_s": {"median": round(statistics.median(cold_s), 3), "runs": [round(x, 3) for x in cold_s]},
        "skillgym_cache_hit_ms": {
            "median": round(statistics.median(hit_s) * 1000, 4),
            "p99": round(sorted(hit_s)[int(len(hit_s) * 0.99) - 1] * 1000, 4),
        },
        "skillgym_4_concurrent_cold_s": {"median": round(statistics.median(concurrent_s), 3)},
    }
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps(result, indent=2) + "\n")
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
