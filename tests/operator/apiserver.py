"""A Kubernetes API served over real HTTP on 127.0.0.1 by kmock's emulator, run in its own thread,
plus a kubeconfig pointing at it, so the real operator and real API clients can talk to it.

The emulator stores objects as sent; like a real API server, this one also fills in the
server-side metadata on creation (namespace from the URL, generated names, uid,
creationTimestamp, resourceVersion)."""

from __future__ import annotations

import asyncio
import json
import threading
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import attrs
import kmock
import kubernetes
from kmock._internal import apps, enums, rendering

CRD_DIR = Path(__file__).resolve().parents[2] / "charts" / "skillgym" / "crds"


@attrs.define(kw_only=True)
class ApiServerEmulator(kmock.KubernetesEmulator):
    _version: int = attrs.field(default=0, init=False)

    async def _handle(self, request: rendering.Request) -> Any:
        self._version += 1
        data = request.data
        if request.resource is not None and isinstance(data, dict):
            meta = data.setdefault("metadata", {})
            if request.action == enums.action.CREATE:
                if request.namespace:
                    meta.setdefault("namespace", request.namespace)
                if not meta.get("name") and meta.get("generateName"):
                    meta["name"] = meta["generateName"] + uuid.uuid4().hex[:5]
                meta.setdefault("uid", str(uuid.uuid4()))
                meta.setdefault("creationTimestamp", datetime.now(UTC).isoformat(timespec="seconds"))
                meta.setdefault("generation", 1)
                # Set once: the emulator cannot answer a stale optimistic-lock test with a 409.
                meta["resourceVersion"] = str(self._version)
        return await super()._handle(request)


def _register_crds(server: kmock.KubernetesEmulator) -> None:
    import yaml

    for path in sorted(CRD_DIR.glob("*.yaml")):
        crd = yaml.safe_load(path.read_text())
        names = crd["spec"]["names"]
        for version in crd["spec"]["versions"]:
            server.resources[f"{crd['spec']['group']}/{version['name']}/{names['plural']}"] = kmock.ResourceInfo(
                kind=names["kind"],
                singular=names["singular"],
                namespaced=crd["spec"]["scope"] == "Namespaced",
                shortnames=set(names.get("shortNames", [])),
                subresources=set(version.get("subresources", {})),
                verbs={"create", "delete", "get", "list", "patch", "update", "watch"},
            )


@dataclass
class ApiServer:
    url: str
    kubeconfig: Path
    emulator: ApiServerEmulator
    api_client: kubernetes.client.ApiClient

    def objects(self, resource: str, namespace: str) -> dict[str, dict[str, Any]]:
        """Live objects of ``resource`` (e.g. ``v1/pods``) in ``namespace`` by name."""
        wanted = kmock.resource(resource)
        found = {}
        for (res, ns, name), obj in list(self.emulator.objects.items()):
            if res == wanted and ns == namespace and not obj.deleted:
                found[name] = json.loads(json.dumps(obj.raw))
        return found


def _kubeconfig(url: str, namespace: str) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [{"name": "emulated", "cluster": {"server": url}}],
        "users": [{"name": "tester", "user": {"token": "test-token"}}],
        "contexts": [
            {"name": "emulated", "context": {"cluster": "emulated", "user": "tester", "namespace": namespace}}
        ],
        "current-context": "emulated",
    }


@contextmanager
def run_apiserver(workdir: Path, namespace: str) -> Iterator[ApiServer]:
    ready = threading.Event()
    stop = threading.Event()
    box: dict[str, Any] = {}

    async def serve() -> None:
        try:
            async with ApiServerEmulator() as emulator, apps.Server(emulator) as server:
                emulator.resources.load_bundled()
                _register_crds(emulator)
                box.update(emulator=emulator, url=str(server.url).rstrip("/"))
                ready.set()
                while not stop.is_set():
                    await asyncio.sleep(0.05)
        except BaseException as exc:
            box["error"] = exc
            ready.set()
            raise

    thread = threading.Thread(target=asyncio.run, args=(serve(),), name="apiserver", daemon=True)
    thread.start()
    if not ready.wait(30) or "error" in box:
        raise RuntimeError(f"the API server did not start: {box.get('error')}")
    kubeconfig = workdir / "kubeconfig.json"
    kubeconfig.write_text(json.dumps(_kubeconfig(box["url"], namespace)))
    configuration = kubernetes.client.Configuration()
    kubernetes.config.load_kube_config(config_file=str(kubeconfig), client_configuration=configuration)
    api_client = kubernetes.client.ApiClient(configuration)
    try:
        yield ApiServer(box["url"], kubeconfig, box["emulator"], api_client)
    finally:
        api_client.close()
        stop.set()
        thread.join(10)
