"""The one NetworkPolicy that confines every sandbox pod of a namespace: made before the
namespace's first sandbox pod, put back if deleted, restored if edited."""

from __future__ import annotations

import logging
import threading
from typing import Any

from kubernetes.client.exceptions import ApiException

from skillgym_operator import builders, kube
from skillgym_operator.settings import OperatorSettings

log = logging.getLogger(__name__)


def normalised(value: Any) -> Any:
    """``value`` without empty or null members, the way an API server may return what was sent."""
    if isinstance(value, dict):
        items = {key: normalised(item) for key, item in value.items()}
        return {key: item for key, item in items.items() if item not in (None, {}, [])}
    if isinstance(value, list):
        return [normalised(item) for item in value]
    return value


def drifted(wanted: dict[str, Any], actual: dict[str, Any]) -> bool:
    return bool(normalised(wanted.get("spec")) != normalised(actual.get("spec")))


class SandboxPolicy:
    def __init__(self, settings: OperatorSettings) -> None:
        self.settings = settings
        self._lock = threading.Lock()
        self._ready: set[str] = set()

    def ensure(self, namespace: str) -> None:
        """Make sure the policy is in place before a sandbox pod is created in ``namespace``."""
        with self._lock:
            if namespace in self._ready:
                return
            self._apply(namespace, None)
            self._ready.add(namespace)

    def on_event(self, event_type: str | None, policy: dict[str, Any]) -> None:
        """A watch event of a policy this operator manages: put the sandbox policy back as wanted."""
        meta = policy.get("metadata") or {}
        if meta.get("name") != builders.SANDBOX_POLICY:
            return
        namespace = str(meta.get("namespace") or "default")
        with self._lock:
            if event_type == "DELETED":
                self._ready.discard(namespace)
                log.warning("the sandbox network policy in %s was deleted: creating it again", namespace)
                current = None
            elif drifted(builders.sandbox_network_policy(namespace, self.settings), policy):
                log.warning("the sandbox network policy in %s was changed: restoring it", namespace)
                current = policy
            else:
                return
            try:
                self._apply(namespace, current)
                self._ready.add(namespace)
            except ApiException as exc:
                log.warning("could not restore the sandbox network policy in %s: %s %s", namespace, exc.status, exc.reason)

    def _apply(self, namespace: str, current: dict[str, Any] | None) -> None:
        wanted = builders.sandbox_network_policy(namespace, self.settings)
        if current is None:
            if kube.create_if_absent(kube.networking().create_namespaced_network_policy, namespace, wanted):
                return
            current = kube.api_client().sanitize_for_serialization(
                kube.networking().read_namespaced_network_policy(builders.SANDBOX_POLICY, namespace)
            )
        assert current is not None
        if drifted(wanted, current):
            # A JSON patch replaces the spec whole: a merge patch would keep keys added to it.
            restore: Any = [{"op": "replace", "path": "/spec", "value": wanted["spec"]}]
            kube.networking().patch_namespaced_network_policy(builders.SANDBOX_POLICY, namespace, restore)
