"""A stand-in for the kubelet on the emulated API server: it runs each sandbox pod the operator
creates, for real. The fetch and push containers run the operator's transfer code against the
test store with the pod's volumes mapped to directories; the run container runs the pod's own
command (the wrapper script and the task command) in the local bubblewrap sandbox with the
pod's volumes bound at their mount paths; a session pod's relay runs beside it, as the sidecar
would. It then reports container states like a kubelet."""

from __future__ import annotations

import json
import math
import shutil
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

import kubernetes
import urllib3
from skillgym_core.sandbox.base import Limits, Mount
from skillgym_core.sandbox.local import LocalSandbox
from skillgym_core.store.base import Store
from skillgym_operator import transfer
from skillgym_operator.resources import IO_DIR, LABEL_RUN, PLAN_ENV, RELAY_CONTAINER
from skillgym_operator.session import Relay

from tests.operator.apiserver import ApiServer


def _container_status(name: str, image: str, exit_code: int, message: str = "") -> dict[str, Any]:
    terminated = {"exitCode": exit_code, "reason": "Completed" if exit_code == 0 else "Error", "message": message}
    return {
        "name": name, "image": image, "imageID": "", "ready": False, "restartCount": 0,
        "state": {"terminated": terminated},
    }  # fmt: skip


class SandboxNode:
    def __init__(self, api: ApiServer, namespace: str, store: Store, workdir: Path) -> None:
        self.api, self.namespace, self.store = api, namespace, store
        self.workdir = workdir
        self.sandbox = LocalSandbox()
        self.started: set[str] = set()
        self.errors: list[BaseException] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, name="sandbox-node", daemon=True)

    def __enter__(self) -> SandboxNode:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join(30)

    def _loop(self) -> None:
        while not self._stop.wait(0.05):
            for name, pod in self.api.objects("v1/pods", self.namespace).items():
                if name in self.started or LABEL_RUN not in pod["metadata"].get("labels", {}):
                    continue
                self.started.add(name)
                threading.Thread(target=self._run_pod, args=(pod,), daemon=True).start()

    def _run_pod(self, pod: dict[str, Any]) -> None:
        try:
            self._execute(pod)
        except BaseException as exc:
            self.errors.append(exc)

    def _execute(self, pod: dict[str, Any]) -> None:
        spec = pod["spec"]
        root = Path(tempfile.mkdtemp(prefix="pod-", dir=self.workdir))
        volumes = {v["name"]: root / v["name"] for v in spec["volumes"]}
        for path in volumes.values():
            path.mkdir()
        (fetch,) = spec["initContainers"]
        run, push, *sidecars = spec["containers"]
        plan = json.loads(next(e["value"] for e in fetch["env"] if e["name"] == PLAN_ENV))
        local_plan = self._remap(plan, fetch["volumeMounts"], volumes)
        transfer.fetch(local_plan, self.store, volumes["io"])
        relay = None
        if any(c["name"] == RELAY_CONTAINER for c in sidecars):
            relay = threading.Thread(target=self._relay, args=(plan, volumes["io"]), daemon=True)
            relay.start()

        env = {e["name"]: e["value"] for e in run["env"]}
        mounts = [
            Mount(volumes[m["name"]], m["mountPath"], writable=not m.get("readOnly", False))
            for m in run["volumeMounts"]
            if m["mountPath"] != "/tmp"
        ]
        wall = float(env["SKILLGYM_WALL_SECONDS"])
        result = self.sandbox.run(
            run["command"],
            mounts=mounts,
            workdir=run["workingDir"],
            env=env,
            limits=Limits(wall_s=wall + 10, memory_mb=2048),
        )
        exit_code = result.exit_code if result.exit_code is not None else 137
        if relay is not None:
            relay.join(10)
        outcome = (volumes["io"] / "outcome").read_text().strip() if (volumes["io"] / "outcome").exists() else ""
        transfer.push(local_plan, self.store, volumes["io"], grace_s=1)
        shutil.rmtree(root, ignore_errors=True)
        statuses = [
            _container_status(run["name"], run["image"], exit_code, outcome),
            _container_status(push["name"], push["image"], 0),
        ]
        status = {
            "phase": "Succeeded" if exit_code == 0 else "Failed",
            "initContainerStatuses": [_container_status(fetch["name"], fetch["image"], 0)],
            "containerStatuses": statuses,
        }
        self._report(pod["metadata"]["name"], status)

    def _relay(self, plan: dict[str, Any], io_dir: Path) -> None:
        try:
            Relay(plan, self.store, io_dir).serve()
        except BaseException as exc:
            self.errors.append(exc)

    def _report(self, pod: str, status: dict[str, Any], patience_s: float = 60.0) -> None:
        """Patch the pod's status, retrying while the API server cannot be reached, as a kubelet does."""
        deadline = time.monotonic() + patience_s
        while True:
            try:
                kubernetes.client.CoreV1Api(self.api.api_client).patch_namespaced_pod_status(
                    pod, self.namespace, {"status": status}
                )
                return
            except (urllib3.exceptions.HTTPError, kubernetes.client.ApiException) as exc:
                if isinstance(exc, kubernetes.client.ApiException) and exc.status not in (429, 500, 503, 504):
                    raise
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.5)

    @staticmethod
    def _remap(plan: dict[str, Any], mounts: list[dict[str, Any]], volumes: dict[str, Path]) -> dict[str, Any]:
        """The plan with in-pod paths replaced by the directories backing those volumes."""
        by_path = {m["mountPath"]: volumes[m["name"]] for m in mounts}
        local = dict(plan, mounts=[dict(m, path=str(by_path[m["path"]])) for m in plan["mounts"]])
        assert IO_DIR in by_path and math.isfinite(float(plan["wallSeconds"]))
        return local
