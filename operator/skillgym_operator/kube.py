"""Thin, idempotent wrappers over the Kubernetes API client used by the handlers."""

from __future__ import annotations

import json
import os
import socket
import threading
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

import kubernetes
from kubernetes.client.exceptions import ApiException

from skillgym_operator.resources import GROUP, MANAGED_BY, VERSION

_CLIENT: kubernetes.client.ApiClient | None = None
_CLIENT_LOCK = threading.Lock()


def configure_client() -> None:
    """In-cluster credentials first, else the kubeconfig named by ``KUBECONFIG`` (read now)."""
    global _CLIENT
    try:
        kubernetes.config.load_incluster_config()
    except kubernetes.config.ConfigException:
        kubernetes.config.load_kube_config(config_file=os.environ.get("KUBECONFIG"))
    with _CLIENT_LOCK:
        _CLIENT = None


def api_client() -> kubernetes.client.ApiClient:
    """One client for the process: its connection pool keeps TLS connections open across calls
    (an API object made without one opens a new connection, and handshake, per request)."""
    global _CLIENT
    with _CLIENT_LOCK:
        if _CLIENT is None:
            configuration = kubernetes.client.Configuration.get_default_copy()
            configuration.connection_pool_maxsize = 32
            _CLIENT = kubernetes.client.ApiClient(configuration)
        return _CLIENT


def core() -> kubernetes.client.CoreV1Api:
    return kubernetes.client.CoreV1Api(api_client())


def batch() -> kubernetes.client.BatchV1Api:
    return kubernetes.client.BatchV1Api(api_client())


def networking() -> kubernetes.client.NetworkingV1Api:
    return kubernetes.client.NetworkingV1Api(api_client())


def custom() -> kubernetes.client.CustomObjectsApi:
    return kubernetes.client.CustomObjectsApi(api_client())


def create_if_absent(create: Callable[..., Any], namespace: str, body: dict[str, Any]) -> bool:
    """Create ``body``; an existing object of that name counts as done. True if this call created it."""
    try:
        # The created object is not needed: skip decoding it into models (most of a call's CPU).
        response = create(namespace, body, _preload_content=False)
        response.drain_conn()
        response.release_conn()
    except ApiException as exc:
        if exc.status == 409:
            return False
        raise
    return True


def ignore_missing(call: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
    try:
        return call(*args, **kwargs)
    except ApiException as exc:
        if exc.status == 404:
            return None
        raise


def read_job(namespace: str, name: str) -> dict[str, Any] | None:
    job = ignore_missing(batch().read_namespaced_job, name, namespace)
    return None if job is None else api_client().sanitize_for_serialization(job)


def get_custom(plural: str, namespace: str, name: str) -> dict[str, Any] | None:
    result: dict[str, Any] | None = ignore_missing(
        custom().get_namespaced_custom_object, GROUP, VERSION, namespace, plural, name
    )
    return result


def patch_custom_status(plural: str, namespace: str, name: str, status: dict[str, Any]) -> None:
    ignore_missing(
        custom().patch_namespaced_custom_object_status,
        GROUP,
        VERSION,
        namespace,
        plural,
        name,
        {"status": status},
    )


def pod_exists(namespace: str, name: str) -> bool:
    if not name:
        return False
    try:
        response: Any = core().read_namespaced_pod(name, namespace, _preload_content=False)
    except ApiException as exc:
        if exc.status == 404:
            return False
        raise
    response.release_conn()
    return True


class Conflict(Exception):
    """The object changed since the version a conditional write was based on."""


def patch_status_if_unchanged(
    plural: str, namespace: str, name: str, status: dict[str, Any], resource_version: str | None
) -> dict[str, Any] | None:
    """Merge ``status`` into the object's status subresource, on the condition (when
    ``resource_version`` is given) that the object is still at that version: :class:`Conflict`
    when it is not, None when it is gone; else the object as stored afterwards."""
    body: dict[str, Any] = {"status": status}
    if resource_version:
        body["metadata"] = {"resourceVersion": resource_version}
    try:
        response: Any = custom().patch_namespaced_custom_object_status(
            GROUP, VERSION, namespace, plural, name, body, _preload_content=False
        )
    except ApiException as exc:
        if exc.status == 404:
            return None
        if exc.status == 409:
            raise Conflict(f"{plural}/{name} changed since resourceVersion {resource_version}") from exc
        raise
    stored: dict[str, Any] = json.loads(response.data)
    return stored


def post_event(owner: dict[str, Any], warning: bool, reason: str, message: str) -> None:
    """A core v1 Event about ``owner``, as ``kubectl describe`` shows it."""
    meta = owner["metadata"]
    now = datetime.now(UTC).isoformat(timespec="seconds").replace("+00:00", "Z")
    event = {
        "metadata": {"generateName": f"{meta['name']}."},
        "involvedObject": {
            "apiVersion": owner.get("apiVersion", f"{GROUP}/{VERSION}"),
            "kind": owner.get("kind", ""),
            "name": meta["name"],
            "namespace": meta.get("namespace"),
            "uid": meta.get("uid", ""),
        },
        "type": "Warning" if warning else "Normal",
        "reason": reason[:128],
        "message": message[:1024],
        "source": {"component": MANAGED_BY},
        "reportingComponent": MANAGED_BY,
        "reportingInstance": socket.gethostname()[:128],
        "firstTimestamp": now,
        "lastTimestamp": now,
        "count": 1,
    }
    create_if_absent(core().create_namespaced_event, str(meta.get("namespace") or "default"), event)


def delete_pods(namespace: str, match_labels: dict[str, str]) -> list[str]:
    """Delete every pod carrying all of ``match_labels``; return their names."""
    selector = ",".join(f"{key}={value}" for key, value in sorted(match_labels.items()))
    pods = api_client().sanitize_for_serialization(
        core().list_namespaced_pod(namespace, label_selector=selector).items
    )
    names = [
        str(pod["metadata"]["name"])
        for pod in pods
        # Re-checked here so a server that ignores the selector cannot widen the deletion.
        if all((pod["metadata"].get("labels") or {}).get(k) == v for k, v in match_labels.items())
    ]
    for name in names:
        ignore_missing(core().delete_namespaced_pod, name, namespace)
    return names
