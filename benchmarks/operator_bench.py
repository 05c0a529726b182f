"""The operator's throughput on a real API server (etcd, kube-apiserver, controller-manager,
scheduler built from source; kwok nodes ending pods), against a plain Kubernetes client loop
creating the same pods, side by side on this machine:

- operator: N SandboxRuns created as fast as the client can (4 threads); measured until every
  run's pod exists, is bound to a node, and every run reports ``Succeeded``;
- peer: the same N pods (the operator's own pod spec, renamed) created by a plain client loop
  with the same threads; measured until every pod exists, is bound, and has ``Succeeded``.

The headline is the ratio of the two pod creation rates (target: at least 0.7); the end-to-end
ratio (runs Succeeded against pods Succeeded) is reported beside it. The API requests
the operator makes per SandboxRun are counted from the API server's audit log, by verb and
resource. Rounds alternate (peer, operator, peer, operator, ...) in fresh namespaces.

Run: ``python -m benchmarks.operator_bench [--runs 500] [--rounds 2]``; writes
``benchmarks/results/operator_bench.json``."""

from __future__ import annotations

import argparse
import collections
import json
import os
import statistics
import sys
import tempfile
import threading
import time
import urllib.parse
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
for extra in ("shared", "."):
    if str(ROOT / extra) not in sys.path:
        sys.path.insert(0, str(ROOT / extra))

import kubernetes  # noqa: E402
import urllib3  # noqa: E402
from kubernetes.watch.watch import iter_resp_lines  # noqa: E402
from tqdm import tqdm  # noqa: E402

from tests.operator.cluster import (  # noqa: E402
    Cluster,
    OperatorProcess,
    apply_operator_rbac,
    install_crds,
    sandbox_run,
)
from tests.support.kube_cluster import KubeCluster, kube_cluster  # noqa: E402

RESULTS = ROOT / "benchmarks" / "results" / "operator_bench.json"
THREADS = 4
RUN_LABEL = "skillgym.io/sandbox-run"


def _cpu_seconds(pid: int) -> float:
    """User plus system CPU time of a process and its waited-for children so far."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return sum(int(fields[i]) for i in (11, 12, 13, 14)) / os.sysconf("SC_CLK_TCK")


class CpuMeter:
    """CPU seconds each process spent between ``start`` and ``stop``: where a round's work went."""

    def __init__(self, processes: dict[str, int]) -> None:
        self.processes = processes
        self.before = {name: _cpu_seconds(pid) for name, pid in processes.items()}

    def stop(self) -> dict[str, float]:
        return {name: round(_cpu_seconds(pid) - self.before[name], 1) for name, pid in self.processes.items()}


def _processes(kube: KubeCluster, **extra: int) -> dict[str, int]:
    return {**{name: process.pid for name, process in kube.processes.items()}, "client": os.getpid(), **extra}


def _namespace(kube: KubeCluster, name: str) -> Cluster:
    with kube.api_client() as client:
        kubernetes.client.CoreV1Api(client).create_namespace({"metadata": {"name": name}})
    return Cluster(kube, name)


class Milestones:
    """When the last of N objects reached each stage (seconds after the start), followed through
    watch streams: no polling, so measuring costs both rounds little and the same."""

    def __init__(self, total: int, stages: tuple[str, ...]) -> None:
        self.total, self.start = total, time.monotonic()
        self.stages = stages
        self.done: dict[str, float] = {}
        self.reached: dict[str, set[str]] = {stage: set() for stage in stages}
        self.lock = threading.Lock()
        self.finished = threading.Event()

    def observe(self, name: str, stages: set[str]) -> None:
        with self.lock:
            for stage in stages & set(self.stages):
                self.reached[stage].add(name)
                if stage not in self.done and len(self.reached[stage]) >= self.total:
                    self.done[stage] = time.monotonic() - self.start
            if len(self.done) == len(self.stages):
                self.finished.set()

    def counts(self) -> dict[str, int]:
        with self.lock:
            return {stage: len(names) for stage, names in self.reached.items()}


def pod_stages(pod: dict[str, Any]) -> set[str]:
    stages = {"created"}
    if (pod.get("spec") or {}).get("nodeName"):
        stages.add("bound")
    if (pod.get("status") or {}).get("phase") == "Succeeded":
        stages.add("pod-succeeded")
    return stages


def run_stages(run: dict[str, Any]) -> set[str]:
    return {"succeeded"} if (run.get("status") or {}).get("phase") == "Succeeded" else set()


class Follower(threading.Thread):
    """One raw watch stream (JSON lines, no model decoding) feeding ``milestones``."""

    def __init__(self, kube: KubeCluster, path: str, selector: str, stages: Any, milestones: Milestones) -> None:
        super().__init__(daemon=True)
        self.client = kube.api_client()
        self.path, self.selector, self.stages, self.milestones = path, selector, stages, milestones
        self.opened = threading.Event()

    def run(self) -> None:
        """Follow until the milestones are met; a stream the API server ends (it drops watchers
        that fall behind) is resumed from the last version seen, or relisted if that is too old."""
        version = ""
        while not self.milestones.finished.is_set():
            try:
                version = self._stream(version)
            except (urllib3.exceptions.HTTPError, OSError):
                pass
            except Gone:
                version = self._relist()

    def _get(self, query: dict[str, str]) -> Any:
        configuration = self.client.configuration
        headers = {auth["key"]: auth["value"] for auth in configuration.auth_settings().values() if auth.get("value")}
        query = {**query, **({"labelSelector": self.selector} if self.selector else {})}
        return self.client.rest_client.pool_manager.request(
            "GET", f"{configuration.host}{self.path}?{urllib.parse.urlencode(query)}", headers=headers,
            preload_content=False)  # fmt: skip

    def _stream(self, version: str) -> str:
        response = self._get({"watch": "true", "timeoutSeconds": "900", "allowWatchBookmarks": "true",
                              **({"resourceVersion": version} if version else {})})  # fmt: skip
        self.opened.set()
        try:
            for line in iter_resp_lines(response):
                if self.milestones.finished.is_set():
                    break
                event = json.loads(line)
                if event.get("type") == "ERROR":
                    if (event.get("object") or {}).get("code") == 410:
                        raise Gone
                    break
                obj = event["object"]
                version = obj["metadata"].get("resourceVersion") or version
                if event.get("type") in ("ADDED", "MODIFIED"):
                    self.milestones.observe(obj["metadata"]["name"], self.stages(obj))
        finally:
            response.release_conn()
        return version

    def _relist(self) -> str:
        listing = json.loads(self._get({}).data)
        for obj in listing.get("items") or []:
            self.milestones.observe(obj["metadata"]["name"], self.stages(obj))
        return str(listing["metadata"]["resourceVersion"])


class Gone(Exception):
    """The version a watch would resume from is no longer kept: list again."""


def _follow(kube: KubeCluster, milestones: Milestones, streams: list[tuple[str, str, Any]]) -> list[Follower]:
    followers = [Follower(kube, path, selector, stages, milestones) for path, selector, stages in streams]
    for follower in followers:
        follower.start()
        follower.opened.wait(30)
    milestones.start = time.monotonic()
    return followers


def _wait(milestones: Milestones, what: str, timeout: float) -> dict[str, float]:
    bar = tqdm(total=milestones.total, desc=what, leave=False, unit="run")
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and not milestones.finished.wait(0.5):
        bar.n = milestones.counts().get(milestones.stages[-1], 0)
        bar.refresh()
    bar.close()
    missing = [s for s in milestones.stages if s not in milestones.done]
    if missing:
        raise RuntimeError(f"{what}: {missing} not reached by all {milestones.total} within {timeout:.0f} s "
                           f"(counts: {milestones.counts()})")
    return {"created": milestones.done["created"], "bound": milestones.done["bound"],
            "succeeded": milestones.done["succeeded"]}


def operator_round(kube: KubeCluster, runs: int, workdir: Path, index: int) -> dict[str, Any]:
    view = _namespace(kube, f"bench-operator-{index}")
    account = apply_operator_rbac(kube, view.namespace)
    # The operator's own defaults, but for a quota that lets every run start at once.
    settings = {"SKILLGYM_OPERATOR_MAX_ACTIVE_RUNS_PER_NAMESPACE": str(runs * 2)}
    operator = OperatorProcess(kube, view.namespace, account, workdir, settings=settings, name=f"operator-{index}",
                               verbose=False, quick=False)
    operator.start()
    try:
        operator.wait_watching()
        audit_start = kube.audit_log.stat().st_size if kube.audit_log.exists() else 0
        assert operator.process is not None
        cpu = CpuMeter(_processes(kube, operator=operator.process.pid))
        milestones = Milestones(runs, ("created", "bound", "succeeded"))
        _follow(kube, milestones, [(f"/api/v1/namespaces/{view.namespace}/pods", RUN_LABEL, pod_stages),
                                   (f"/apis/skillgym.io/v1alpha1/namespaces/{view.namespace}/sandboxruns", "",
                                    run_stages)])  # fmt: skip
        with ThreadPoolExecutor(THREADS) as pool:
            list(pool.map(lambda i: view.create("sandboxruns", sandbox_run(f"run-{i:04d}")), range(runs)))
        done = _wait(milestones, f"operator round {index}", timeout=max(300.0, runs * 2.0))
        cpu_seconds = cpu.stop()
        time.sleep(2)  # the audit log is written in batches
        requests = _operator_requests(kube, audit_start, f"system:serviceaccount:{view.namespace}:{account}")
        template = next(iter(view.core.list_namespaced_pod(view.namespace, label_selector=RUN_LABEL).items))
        return {"seconds": done, "cpu_seconds": cpu_seconds, "requests": requests,
                "pod": kube.api_client().sanitize_for_serialization(template)}
    finally:
        operator.stop()
        view.close()


def _operator_requests(kube: KubeCluster, offset: int, user: str) -> dict[str, int]:
    counts: collections.Counter[str] = collections.Counter()
    with kube.audit_log.open("rb") as log:
        log.seek(offset)
        for line in log:
            event = json.loads(line)
            if event.get("user", {}).get("username") != user:
                continue
            ref = event.get("objectRef") or {}
            resource = ref.get("resource", "?") + (f"/{ref['subresource']}" if ref.get("subresource") else "")
            counts[f"{event.get('verb')} {resource}"] += 1
    return dict(counts.most_common())


def _plain_pod(template: dict[str, Any], name: str) -> dict[str, Any]:
    metadata = template["metadata"]
    spec = {k: v for k, v in template["spec"].items() if k not in ("nodeName",)}
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": name, "labels": {"bench": "plain", **{k: v for k, v in metadata.get("labels", {}).items()
                                                                      if k != RUN_LABEL}}},
            "spec": spec}  # fmt: skip


def plain_round(kube: KubeCluster, runs: int, template: dict[str, Any], index: int) -> dict[str, Any]:
    view = _namespace(kube, f"bench-plain-{index}")
    try:
        milestones = Milestones(runs, ("created", "bound", "succeeded"))
        _follow(kube, milestones, [(f"/api/v1/namespaces/{view.namespace}/pods", "bench=plain",
                                    lambda pod: {s.replace("pod-", "") for s in pod_stages(pod)})])  # fmt: skip
        cpu = CpuMeter(_processes(kube))
        with ThreadPoolExecutor(THREADS) as pool:
            list(pool.map(lambda i: view.core.create_namespaced_pod(view.namespace, _plain_pod(template, f"pod-{i:04d}")),
                          range(runs)))
        done = _wait(milestones, f"plain round {index}", timeout=max(300.0, runs * 2.0))
        return {"seconds": done, "cpu_seconds": cpu.stop()}
    finally:
        view.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=500)
    parser.add_argument("--rounds", type=int, default=2)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="operator-bench-") as tmp, kube_cluster(Path(tmp), audit=True) as kube:
        install_crds(kube)
        operator_rounds, plain_rounds = [], []
        # A first operator round gives the peer the operator's own pod spec.
        operator_rounds.append(operator_round(kube, args.runs, Path(tmp), 0))
        template = operator_rounds[0].pop("pod")
        for index in range(args.rounds):
            plain_rounds.append(plain_round(kube, args.runs, template, index))
            if index + 1 < args.rounds:
                result = operator_round(kube, args.runs, Path(tmp), index + 1)
                result.pop("pod")
                operator_rounds.append(result)
    report = summarise(args.runs, operator_rounds, plain_rounds)
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps(report, indent=2) + "\n")
    print(json.dumps({k: v for k, v in report.items() if k != "rounds"}, indent=2))


def summarise(runs: int, operator_rounds: list[dict[str, Any]], plain_rounds: list[dict[str, Any]]) -> dict[str, Any]:
    def rate(rounds: list[dict[str, Any]], stage: str) -> float:
        return round(runs / statistics.median(r["seconds"][stage] for r in rounds), 1)

    per_run = collections.Counter[str]()
    for result in operator_rounds:
        per_run.update(result["requests"])
    per_run_mean = {k: round(v / (runs * len(operator_rounds)), 2) for k, v in per_run.most_common()}
    operator_rate, plain_rate = rate(operator_rounds, "succeeded"), rate(plain_rounds, "succeeded")
    return {
        "runs": runs,
        "threads": THREADS,
        "operator_per_s": {stage: rate(operator_rounds, stage) for stage in ("created", "bound", "succeeded")},
        "plain_client_per_s": {stage: rate(plain_rounds, stage) for stage in ("created", "bound", "succeeded")},
        "ratio_end_to_end": round(operator_rate / plain_rate, 2),
        "ratio_pod_creation": round(rate(operator_rounds, "created") / rate(plain_rounds, "created"), 2),
        "target_ratio": 0.7,
        "operator_requests_per_run": round(sum(per_run.values()) / (runs * len(operator_rounds)), 2),
        "operator_requests_per_run_by_kind": per_run_mean,
        "cpu_seconds_operator_round": _median_cpu(operator_rounds),
        "cpu_seconds_plain_round": _median_cpu(plain_rounds),
        "rounds": {"operator": operator_rounds, "plain": plain_rounds},
    }


def _median_cpu(rounds: list[dict[str, Any]]) -> dict[str, float]:
    names = rounds[0]["cpu_seconds"]
    return {name: round(statistics.median(r["cpu_seconds"][name] for r in rounds), 1) for name in names}


if __name__ == "__main__":
    main()
