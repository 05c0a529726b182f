"""Operator settings (env prefix ``SKILLGYM_OPERATOR_``). Store access for the pods it creates is
wired by name (the chart's ConfigMap and Secret), so the operator never holds store credentials
for them; its own store access (training progress) uses the common ``SKILLGYM_`` settings."""

from __future__ import annotations

import ipaddress
from typing import Literal

from pydantic import Field, field_validator, model_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

# Private (RFC 1918, unique-local), carrier-grade NAT, loopback and link-local (cloud metadata) ranges.
BLOCKED_RANGES = (
    "10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16", "100.64.0.0/10", "127.0.0.0/8", "169.254.0.0/16",
    "fc00::/7", "fe80::/10", "::1/128",
)


class OperatorSettings(BaseSettings):
    model_config = SettingsConfigDict(env_prefix="SKILLGYM_OPERATOR_", extra="ignore")

    runner_image: str = Field("ghcr.io/skillgym/skillgym:0.1.0", description="image with the skillgym package")
    default_task_image: str = "python:3.11-slim"
    image_pull_policy: str = "IfNotPresent"
    config_map: str = Field("skillgym-config", description="ConfigMap with SKILLGYM_* store/bus settings")
    secret: str = Field("skillgym-secrets", description="Secret with SKILLGYM_S3_ACCESS_KEY/SECRET_KEY")
    sandbox_service_account: str = ""
    runtime_class_name: str = Field("", description="e.g. gvisor; empty uses the cluster default")
    sandbox_node_selector: dict[str, str] = Field(
        default_factory=dict, description="labels of the nodes sandbox pods run on (a dedicated pool)")
    sandbox_tolerations: list[dict[str, str]] = Field(
        default_factory=list, description="taints of that pool the sandbox pods tolerate")
    run_as_user: int = Field(65534, ge=1, description="uid of every container in sandbox and training pods")
    run_as_group: int = Field(65534, ge=1, description="gid (and fsGroup) of those pods")
    seccomp_profile_type: Literal["RuntimeDefault", "Localhost"] = "RuntimeDefault"
    seccomp_localhost_profile: str = Field(
        "", description="profile path relative to the kubelet's seccomp dir; required with Localhost"
    )
    push_grace_s: int = Field(60, description="seconds the pod may run past the wall timeout to upload")

    store_egress_pod_labels: dict[str, str] = Field(
        default_factory=lambda: {"app.kubernetes.io/name": "minio"},
        description="pods sandbox pods may reach (the store); empty denies all egress",
    )
    store_egress_namespace_labels: dict[str, str] = Field(default_factory=dict)
    store_egress_port: int = 9000
    allow_dns: bool = True
    public_network: bool = Field(
        True, description="runs of tasks whose network is public may reach the internet; off: they run offline")
    public_egress_blocked: list[str] = Field(
        default_factory=lambda: list(BLOCKED_RANGES),
        description="address ranges (CIDR) public-network runs may still not reach: the cluster's own networks, "
        "cloud metadata")

    max_active_runs_per_namespace: int = Field(20, ge=1)
    max_attempts: int = Field(3, ge=1, description="pod attempts per SandboxRun on infrastructure failures")
    retry_backoff_s: float = 2.0
    retry_backoff_max_s: float = 60.0
    finished_pod_ttl_s: float = Field(300.0, ge=0, description="keep finished pods this long for debugging")
    housekeeping_interval_s: float = Field(
        5.0, gt=0, description="how often queued runs, retries and finished pods are looked at")
    sandbox_normal_events: bool = Field(
        False, description="also post Normal events for SandboxRuns (pod created, succeeded, retrying); each costs "
        "an API request per run. Warnings (failures, retries due, refusals) are always posted")

    build_registry: str = Field("registry.skillgym.svc:5000",
                                description="where task images are pushed and pulled from (host[:port][/path])")
    build_registry_insecure: bool = Field(False, description="the registry speaks plain HTTP (Kaniko's --insecure-registry for it alone)")
    kaniko_image: str = "gcr.io/kaniko-project/executor:v1.23.2"
    build_poll_s: float = 10.0
    build_timeout_s: int = 1800
    build_context_mb: int = Field(2048, ge=16, description="room for the unpacked build context")

    trainer_image: str = "ghcr.io/skillgym/skillgym-trainer:0.1.0"
    trainer_module: str = "skillgym_trainer.distributed"
    training_master_port: int = 29500
    training_max_restarts: int = 3
    training_progress_interval_s: float = 30.0

    leader_election: bool = Field(False, description="of several replicas, only the holder of a Lease acts")
    lease_name: str = "skillgym-operator"
    lease_namespace: str = Field("", description="default: the pod's own namespace, else 'default'")
    lease_duration_s: int = Field(15, ge=2)
    lease_renew_s: float = Field(5.0, gt=0)
    identity: str = Field("", description="this replica's name in the Lease; default: host name and a random suffix")
    standby_health_port: int = Field(0, ge=0, description="answer liveness probes here while standing by (0: off)")

    handler_threads: int = Field(32, ge=1, description="sync handlers run at once (each mostly waits on the API)")

    scanning_disabled: bool = Field(False, description="skip cluster-wide namespace/CRD scans (restricted RBAC)")
    posting_level: str = "INFO"

    @model_validator(mode="after")
    def _localhost_profile_named(self) -> OperatorSettings:
        if self.seccomp_profile_type == "Localhost" and not self.seccomp_localhost_profile:
            raise ValueError("seccomp_localhost_profile is required when seccomp_profile_type is Localhost")
        return self

    @field_validator("public_egress_blocked")
    @classmethod
    def _cidrs(cls, ranges: list[str]) -> list[str]:
        for cidr in ranges:
            try:
                ipaddress.ip_network(cidr, strict=False)
            except ValueError as exc:
                raise ValueError(f"public_egress_blocked: {cidr!r} is not an address range: {exc}") from exc
        return ranges

    def seccomp_profile(self) -> dict[str, str]:
        if self.seccomp_profile_type == "Localhost":
            return {"type": "Localhost", "localhostProfile": self.seccomp_localhost_profile}
        return {"type": "RuntimeDefault"}
