"""The NetworkPolicies that confine every sandbox pod of a namespace (see
:mod:`skillgym_operator.builders.network`): made before the namespace's first sandbox pod, put
back if deleted, restored if edited."""

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
        self._ready: set[tuple[str, str]] = set()

    def ensure(self, namespace: str) -> None:
        """Make sure the policies are in place before a sandbox pod is created in ``namespace``."""
        with self._lock:
            for name, wanted in builders.sandbox_network_policies(namespace, self.settings).items():
                if (namespace, name) not in self._ready:
                    self._apply(wanted, None)
                    self._ready.add((namespace, name))

    def on_event(self, event_type: str | None, policy: dict[str, Any]) -> None:
        """A watch event of a policy this operator manages: put the sandbox policies back as wanted."""
        meta = policy.get("metadata") or {}
        namespace = str(meta.get("namespace") or "default")
        wanted = builders.sandbox_network_policies(namespace, self.settings).get(str(meta.get("name")))
        if wanted is None:
            return
        name = wanted["metadata"]["name"]
        with self._lock:
            if event_type == "DELETED":
                self._ready.discard((namespace, name))
                log.warning("the sandbox network policy %s in %s was deleted: creating it again", name, namespace)
                current = None
            elif drifted(wanted, policy):
                log.warning("the sandbox network policy %s in %s was changed: restoring it", name, namespace)
                current = policy
            else:
                return
            try:
                self._apply(wanted, current)
                self._ready.add((namespace, name))
            except ApiException as exc:
                log.warning("could not restore the sandbox network policy %s in %s: %s %s", name, namespace,
                            exc.status, exc.reason)  # fmt: skip

    @staticmethod
    def _apply(wanted: dict[str, Any], current: dict[str, Any] | None) -> None:
        name, namespace = wanted["metadata"]["name"], wanted["metadata"]["namespace"]
        if current is None:
            if kube.create_if_absent(kube.networking().create_namespaced_network_policy, namespace, wanted):
                return
            current = kube.api_client().sanitize_for_serialization(
                kube.networking().read_namespaced_network_policy(name, namespace)
            )
        assert current is not None
        if drifted(wanted, current):
            # A JSON patch replaces the spec whole: a merge patch would keep keys added to it.
            restore: Any = [{"op": "replace", "path": "/spec", "value": wanted["spec"]}]
            kube.networking().patch_namespaced_network_policy(name, namespace, restore)
