"""The container sandbox against plain ``podman run`` and the local bubblewrap sandbox, side by side
on the same machine (methods interleaved round-robin, medians reported):

- start latency: one run of ``true`` with a writable workspace, through ``ContainerSandbox``
  (every protection and limit on), through a plain ``podman run --rm --network none`` of the same
  image with the same mount, and through the local sandbox;
- per-task validation: the nop run, the reference solution and the verifier of one SkillGym task
  (the task's Dockerfile is its environment on containers), on containers, on bubblewrap, and as
  the same three runs by plain ``podman run`` command lines on host copies of the workspace.

Needs root, podman and the base images (``scripts/install-containers.sh``). Starts its own
``podman system service`` on a private socket. Run: ``python -m benchmarks.container_bench
[--runs 60]``; writes ``benchmarks/results/container_bench.json``."""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import statistics
import subprocess
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from skillgym_core.envbuild import LocalVenvProvider
from skillgym_core.envbuild.image import ImageProvider
from skillgym_core.reward import read_verdict
from skillgym_core.sandbox.base import Limits, Mount
from skillgym_core.sandbox.container.backend import ContainerSandbox
from skillgym_core.sandbox.container.images import PYTHON_BASE
from skillgym_core.sandbox.janitor import discard_tree
from skillgym_core.sandbox.local import LocalSandbox
from skillgym_core.taskrun import TaskRunner

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "benchmarks" / "results" / "container_bench.json"
CONF = (Path(os.environ.get("SKILLGYM_SERVICES_DIR")
             or Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "skillgym" / "services")
        / "containers" / "containers.conf")
LIMITS = Limits(wall_s=60, memory_mb=512, pids=128)
TARGET = 1.2


def _engine_env() -> dict[str, str]:
    return {**os.environ, "CONTAINERS_CONF": str(CONF)}


@contextmanager
def podman_service(folder: Path) -> Iterator[str]:
    socket = folder / "podman.sock"
    process = subprocess.Popen(["podman", "system", "service", "--time=0", f"unix://{socket}"], env=_engine_env(),
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 30
        while not socket.exists() and time.monotonic() < deadline:
            time.sleep(0.1)
        yield f"unix://{socket}"
    finally:
        process.terminate()
        process.wait(20)


def _checked(name: str, call: Callable[[], bool]) -> Callable[[], None]:
    def run() -> None:
        if not call():
            raise RuntimeError(f"{name}: the run failed")

    return run


def _interleaved(methods: dict[str, Callable[[], None]], runs: int) -> dict[str, list[float]]:
    samples: dict[str, list[float]] = {name: [] for name in methods}
    for method in methods.values():
        method()  # warm
    for _ in range(runs):
        for name, method in methods.items():
            started = time.perf_counter()
            method()
            samples[name].append(time.perf_counter() - started)
    return samples


def start_latency(sandbox: ContainerSandbox, workspace: Path, runs: int) -> dict[str, Any]:
    local = LocalSandbox()
    mounts = [Mount(workspace, "/app", writable=True)]
    plain = ["podman", "run", "--rm", "--network", "none", "--user", f"{sandbox.uid}:{sandbox.uid}", "--read-only",
             "--cap-drop", "ALL", "--memory", "512m", "--pids-limit", "128", "-v", f"{workspace}:/app:rw", "-w", "/app",
             PYTHON_BASE, "true"]
    methods = {
        "container_sandbox": _checked("container", lambda: sandbox.run(["true"], mounts=mounts, limits=LIMITS).ok),
        "plain_podman_run": _checked("podman", lambda: subprocess.run(plain, env=_engine_env(),
                                                                      capture_output=True).returncode == 0),
        "local_bwrap_sandbox": _checked("local", lambda: local.run(["true"], mounts=mounts, limits=LIMITS).ok),
    }
    samples = _interleaved(methods, runs)
    return {name: round(statistics.median(values) * 1000, 1) for name, values in samples.items()}


def validation_time(url: str, scratch: Path, runs: int) -> dict[str, Any]:
    from skillgym_builder.families.layered_config import LayeredConfigFamily
    from skillgym_builder.family_build import FamilyMaterialiser, FamilyPlan
    from skillgym_builder.package import BuildInfo

    from tests.builder.family_support import card_for

    family, card = LayeredConfigFamily(), card_for("config-layers", "version-control")
    venvs = LocalVenvProvider(scratch / "venvs")
    materialiser = FamilyMaterialiser(LocalSandbox(), venvs, scratch)
    output = materialiser.instance(family, card, FamilyPlan(seed=0, knobs={"record_count": 6}, fit=family.suitability(card)))
    _, task = materialiser.write(scratch / "task", card, family.spec, output, BuildInfo(builder="family"))
    container = ContainerSandbox(engine_url=url)
    runners = {"container_sandbox": TaskRunner(container, environment=ImageProvider(container.client), judge=None),
               "local_bwrap_sandbox": TaskRunner(LocalSandbox(), environment=venvs, judge=None)}
    cold = time.perf_counter()
    prepared = runners["container_sandbox"].prepare_environment(task)
    image_build_s = time.perf_counter() - cold
    image = prepared.key if prepared is not None else PYTHON_BASE

    def validate(runner: TaskRunner) -> bool:
        untouched, workspace = runner.fresh_workspace(task, scratch), runner.fresh_workspace(task, scratch)
        try:
            nop = runner.verify(task, untouched)
            solved = runner.run_solution(task, workspace).ok
            return nop.reward == 0.0 and solved and runner.verify(task, workspace).passed
        finally:
            discard_tree(untouched)
            discard_tree(workspace)

    def plain_podman() -> bool:
        """The same three runs as plain ``podman run`` command lines, on host copies of the workspace."""
        base = ["podman", "run", "--rm", "--network", "none", "--user", f"{container.uid}:{container.uid}",
                "--read-only", "--cap-drop", "ALL", "-w", "/app"]
        results = []
        for phase in ("nop", "solve"):
            work = Path(tempfile.mkdtemp(dir=scratch))
            shutil.copytree(task.workspace, work / "app")
            (work / "logs" / "verifier").mkdir(parents=True)
            for path in (work, work / "app", work / "logs", work / "logs" / "verifier"):
                os.chown(path, container.uid, container.uid)
            for path in (work / "app").rglob("*"):
                os.chown(path, container.uid, container.uid)
            app = ["-v", f"{work / 'app'}:/app:rw"]
            if phase == "solve":
                subprocess.run([*base, *app, "-v", f"{task.solution}:/solution:ro", image, "bash", "/solution/solve.sh"],
                               env=_engine_env(), capture_output=True, check=True)
            subprocess.run([*base, *app, "-v", f"{task.tests}:/tests:ro", "-v", f"{work / 'logs'}:/logs:rw", image,
                            "bash", "/tests/test.sh"], env=_engine_env(), capture_output=True)
            results.append(read_verdict(work / "logs" / "verifier").reward)
            shutil.rmtree(work)
        return results == [0.0, 1.0]

    methods = {name: _checked(name, lambda r=runner: validate(r)) for name, runner in runners.items()}
    methods["plain_podman_run"] = _checked("plain podman", plain_podman)
    samples = _interleaved(methods, runs)
    return {"task": family.spec.id, "image_prepare_s": round(image_build_s, 2),
            "image_cache_hit": bool(prepared is not None and prepared.cache_hit),
            "median_s": {name: round(statistics.median(values), 3) for name, values in samples.items()}}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=60)
    parser.add_argument("--task-runs", type=int, default=10)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="container-bench-") as tmp, podman_service(Path(tmp)) as url:
        workspace = Path(tmp) / "app"
        workspace.mkdir()
        sandbox = ContainerSandbox(engine_url=url)
        os.chown(workspace, *sandbox.workspace_owner)
        latency = start_latency(sandbox, workspace, args.runs)
        task = validation_time(url, Path(tmp), args.task_runs)
        ratio = latency["container_sandbox"] / latency["plain_podman_run"]
        medians = task["median_s"]
        result = {
            "benchmark": "container_bench",
            "machine": {"cpus": os.cpu_count(), "platform": platform.platform()},
            "engine": sandbox.describe(),
            "start_latency_median_ms": latency,
            "ratio_container_sandbox_to_plain_podman_run": round(ratio, 3),
            "validation": task,
            "validation_ratio_to_plain_podman_run": round(medians["container_sandbox"] / medians["plain_podman_run"], 3),
            "targets": {"ratio_to_plain_podman_max": TARGET},
            "meets_targets": {"ratio_to_plain_podman": ratio <= TARGET},
        }
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps(result, indent=2) + "\n")
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
