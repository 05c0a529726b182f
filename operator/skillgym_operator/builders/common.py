"""Pieces every manifest shares: labels, owner references, store wiring."""

from __future__ import annotations

from typing import Any

from skillgym_operator.resources import MANAGED_BY
from skillgym_operator.settings import OperatorSettings


def labels(component: str, **extra: str) -> dict[str, str]:
    return {
        "app.kubernetes.io/name": f"skillgym-{component}",
        "app.kubernetes.io/part-of": "skillgym",
        "app.kubernetes.io/managed-by": MANAGED_BY,
        **extra,
    }


def owner_reference(owner: dict[str, Any]) -> dict[str, Any]:
    meta = owner["metadata"]
    return {
        "apiVersion": owner["apiVersion"],
        "kind": owner["kind"],
        "name": meta["name"],
        "uid": meta.get("uid", ""),
        "controller": True,
        "blockOwnerDeletion": True,
    }


def store_env_from(settings: OperatorSettings) -> list[dict[str, Any]]:
    """The chart's ConfigMap and Secret carry SKILLGYM_STORE / SKILLGYM_S3_* for in-pod store access."""
    return [
        {"configMapRef": {"name": settings.config_map, "optional": True}},
        {"secretRef": {"name": settings.secret, "optional": True}},
    ]


def restricted_security_context(settings: OperatorSettings) -> dict[str, Any]:
    """Every container the operator starts: non-root, no privileges, nothing writable but volumes."""
    return {
        "runAsNonRoot": True,
        "runAsUser": settings.run_as_user,
        "runAsGroup": settings.run_as_group,
        "allowPrivilegeEscalation": False,
        "privileged": False,
        "readOnlyRootFilesystem": True,
        "capabilities": {"drop": ["ALL"]},
        "seccompProfile": settings.seccomp_profile(),
    }


def restricted_pod_security_context(settings: OperatorSettings) -> dict[str, Any]:
    return {
        "runAsNonRoot": True,
        "runAsUser": settings.run_as_user,
        "runAsGroup": settings.run_as_group,
        "fsGroup": settings.run_as_group,
        "seccompProfile": settings.seccomp_profile(),
    }


def isolated_pod_fields() -> dict[str, Any]:
    """Pod fields that keep cluster credentials and service addresses out of the pod."""
    return {"automountServiceAccountToken": False, "enableServiceLinks": False}


def size_limited_empty_dir(name: str, size_mb: int) -> dict[str, Any]:
    return {"name": name, "emptyDir": {"sizeLimit": f"{size_mb}Mi"}}


def dns_name(text: str, limit: int = 63) -> str:
    """Lowercase RFC 1123 label from arbitrary text."""
    cleaned = "".join(ch if ch.isalnum() else "-" for ch in text.lower()).strip("-")
    return cleaned[:limit].rstrip("-") or "x"
