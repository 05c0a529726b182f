"""The rules a pod running untrusted code follows, checked over a pod spec.

They mirror the local sandbox: a non-root uid and gid, no privilege escalation, no capabilities,
a read-only root filesystem whose writable paths are size-capped emptyDirs, a seccomp profile,
no service account token, no service links, nothing shared with the node (host namespaces,
hostPath, hostPort), no privileged containers and the default /proc mask."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from skillgym_core.errors import SandboxError

HOST_NAMESPACES = ("hostNetwork", "hostPID", "hostIPC")
CONTAINER_KINDS = ("initContainers", "containers", "ephemeralContainers")
SECCOMP_TYPES = frozenset({"RuntimeDefault", "Localhost"})
# Fields a container inherits from the pod's securityContext when it does not set them itself.
INHERITED_FIELDS = ("runAsNonRoot", "runAsUser", "runAsGroup", "seccompProfile")


class UnsafePodError(SandboxError):
    """A pod spec that breaks the rules above; the operator refuses to create it."""

    reason = "unsafe_pod"


def pod_violations(pod_spec: dict[str, Any]) -> list[str]:
    """Every rule ``pod_spec`` breaks, one readable line each; empty when it follows them all."""
    pod_security = pod_spec.get("securityContext") or {}
    found = [*_pod_violations(pod_spec, pod_security), *_volume_violations(pod_spec)]
    for container in _containers(pod_spec):
        found += [f"container {container.get('name')}: {v}" for v in _container_violations(container, pod_security)]
    return found


def require_safe_pod(pod_spec: dict[str, Any]) -> None:
    violations = pod_violations(pod_spec)
    if violations:
        raise UnsafePodError(f"refusing to create an unsafe pod: {'; '.join(violations)}", violations=violations)


def _containers(pod_spec: dict[str, Any]) -> Iterator[dict[str, Any]]:
    for kind in CONTAINER_KINDS:
        yield from pod_spec.get(kind) or []


def _pod_violations(pod_spec: dict[str, Any], pod_security: dict[str, Any]) -> Iterator[str]:
    for field in (*HOST_NAMESPACES, "shareProcessNamespace"):
        if pod_spec.get(field):
            yield f"{field} is true"
    if pod_spec.get("automountServiceAccountToken") is not False:
        yield "automountServiceAccountToken is not false"
    if pod_spec.get("enableServiceLinks") is not False:
        yield "enableServiceLinks is not false"
    if pod_security.get("fsGroup") == 0:
        yield "fsGroup is 0 (root)"
    if 0 in (pod_security.get("supplementalGroups") or []):
        yield "supplementalGroups include 0 (root)"


def _volume_violations(pod_spec: dict[str, Any]) -> Iterator[str]:
    for volume in pod_spec.get("volumes") or []:
        name = volume.get("name")
        if "hostPath" in volume:
            yield f"volume {name}: hostPath"
        if "emptyDir" in volume and not (volume["emptyDir"] or {}).get("sizeLimit"):
            yield f"volume {name}: emptyDir without sizeLimit"


def _container_violations(container: dict[str, Any], pod_security: dict[str, Any]) -> Iterator[str]:
    security = container.get("securityContext") or {}
    effective = {field: security.get(field, pod_security.get(field)) for field in INHERITED_FIELDS}
    if effective["runAsNonRoot"] is not True:
        yield "runAsNonRoot is not true"
    for field in ("runAsUser", "runAsGroup"):
        if effective[field] is None:
            yield f"{field} is unset"
        elif effective[field] == 0:
            yield f"{field} is 0 (root)"
    if security.get("allowPrivilegeEscalation") is not False:
        yield "allowPrivilegeEscalation is not false"
    if security.get("privileged"):
        yield "privileged is true"
    capabilities = security.get("capabilities") or {}
    if "ALL" not in (capabilities.get("drop") or []):
        yield "capabilities are not all dropped"
    if capabilities.get("add"):
        yield f"capabilities added: {', '.join(capabilities['add'])}"
    if security.get("readOnlyRootFilesystem") is not True:
        yield "readOnlyRootFilesystem is not true"
    yield from _seccomp_violations(effective["seccompProfile"])
    if security.get("procMount", "Default") != "Default":
        yield f"procMount is {security['procMount']}"
    for port in container.get("ports") or []:
        if port.get("hostPort"):
            yield f"hostPort {port['hostPort']}"


def _seccomp_violations(profile: dict[str, Any] | None) -> Iterator[str]:
    kind = (profile or {}).get("type")
    if kind is None:
        yield "no seccompProfile"
    elif kind not in SECCOMP_TYPES:
        yield f"seccompProfile is {kind}"
    elif kind == "Localhost" and not (profile or {}).get("localhostProfile"):
        yield "Localhost seccompProfile names no localhostProfile"
