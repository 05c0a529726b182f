"""The NetworkPolicies that confine sandbox pods.

Every sandbox pod is selected by :func:`sandbox_network_policy`: no ingress, egress only to the
store (and DNS to find it). Pods of a run whose task allows the network (Harbor's ``public``)
carry :data:`LABEL_NETWORK` and are also selected by :func:`public_network_policy`, which adds
egress to the internet. Policies add up, so such a pod may reach what either allows: the store,
and any address outside the blocked ranges (by default the private, shared, loopback and
link-local ranges, which hold the cluster's own pods and services and the cloud metadata
endpoint)."""

from __future__ import annotations

import ipaddress
from typing import Any

from skillgym_operator.builders.common import labels
from skillgym_operator.resources import LABEL_NETWORK, LABEL_RUN, MANAGED_BY, NETWORK_PUBLIC
from skillgym_operator.settings import OperatorSettings

SANDBOX_POLICY = "skillgym-sandbox"
PUBLIC_POLICY = "skillgym-sandbox-public"
EVERYWHERE = {4: "0.0.0.0/0", 6: "::/0"}


def _dns_rule() -> dict[str, Any]:
    return {
        "to": [{"namespaceSelector": {}, "podSelector": {"matchLabels": {"k8s-app": "kube-dns"}}}],
        "ports": [{"protocol": "UDP", "port": 53}, {"protocol": "TCP", "port": 53}],
    }


def _policy(name: str, namespace: str, selector: dict[str, Any], egress: list[dict[str, Any]],
            policy_types: list[str]) -> dict[str, Any]:  # fmt: skip
    return {
        "apiVersion": "networking.k8s.io/v1",
        "kind": "NetworkPolicy",
        "metadata": {"name": name, "namespace": namespace, "labels": labels("sandbox")},
        "spec": {
            "podSelector": selector,
            "policyTypes": policy_types,
            **({"ingress": []} if "Ingress" in policy_types else {}),
            "egress": egress,
        },
    }


def _sandbox_pods(*extra: dict[str, Any]) -> dict[str, Any]:
    return {
        "matchLabels": {"app.kubernetes.io/managed-by": MANAGED_BY},
        "matchExpressions": [{"key": LABEL_RUN, "operator": "Exists"}, *extra],
    }


def sandbox_network_policy(namespace: str, settings: OperatorSettings) -> dict[str, Any]:
    """One policy for every sandbox pod of a namespace (selected by the run label the operator
    sets on each): deny all ingress; allow egress only to the store (and DNS to find it)."""
    egress: list[dict[str, Any]] = []
    if settings.store_egress_pod_labels:
        peer: dict[str, Any] = {"podSelector": {"matchLabels": dict(settings.store_egress_pod_labels)}}
        if settings.store_egress_namespace_labels:
            peer["namespaceSelector"] = {"matchLabels": dict(settings.store_egress_namespace_labels)}
        egress.append({"to": [peer], "ports": [{"protocol": "TCP", "port": settings.store_egress_port}]})
        if settings.allow_dns:
            egress.append(_dns_rule())
    return _policy(SANDBOX_POLICY, namespace, _sandbox_pods(), egress, ["Ingress", "Egress"])


def public_egress_blocks(blocked: list[str]) -> list[dict[str, Any]]:
    """An ipBlock per address family: everywhere, except the ``blocked`` ranges of that family."""
    networks = [ipaddress.ip_network(cidr, strict=False) for cidr in blocked]
    blocks = []
    for version, everywhere in EVERYWHERE.items():
        excepted = [str(n) for n in networks if n.version == version and n.prefixlen > 0]
        if any(n.version == version and n.prefixlen == 0 for n in networks):
            continue
        blocks.append({"ipBlock": {"cidr": everywhere, **({"except": excepted} if excepted else {})}})
    return blocks


def public_network_policy(namespace: str, settings: OperatorSettings) -> dict[str, Any]:
    """Egress to the internet (never to the blocked ranges) for the pods of public-network runs."""
    selector = _sandbox_pods({"key": LABEL_NETWORK, "operator": "In", "values": [NETWORK_PUBLIC]})
    egress: list[dict[str, Any]] = []
    blocks = public_egress_blocks(list(settings.public_egress_blocked))
    if blocks:
        egress.append({"to": blocks})
    if settings.allow_dns:
        egress.append(_dns_rule())
    return _policy(PUBLIC_POLICY, namespace, selector, egress, ["Egress"])


def sandbox_network_policies(namespace: str, settings: OperatorSettings) -> dict[str, dict[str, Any]]:
    """Every policy the namespace's sandbox pods need, by name (the public one only where
    public-network runs are allowed)."""
    policies = {SANDBOX_POLICY: sandbox_network_policy(namespace, settings)}
    if settings.public_network:
        policies[PUBLIC_POLICY] = public_network_policy(namespace, settings)
    return policies
