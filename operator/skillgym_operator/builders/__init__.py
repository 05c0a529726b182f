"""Pure functions from custom resources to the Kubernetes manifests that run them."""

from skillgym_operator.builders.image import build_job_name, image_reference, kaniko_build_job
from skillgym_operator.builders.network import (
    PUBLIC_POLICY,
    SANDBOX_POLICY,
    public_network_policy,
    sandbox_network_policies,
    sandbox_network_policy,
)
from skillgym_operator.builders.sandbox import pod_name, sandbox_pod, transfer_plan
from skillgym_operator.builders.training import (
    training_config_map,
    training_job,
    training_service,
)

__all__ = [
    "PUBLIC_POLICY",
    "SANDBOX_POLICY",
    "build_job_name",
    "image_reference",
    "kaniko_build_job",
    "pod_name",
    "public_network_policy",
    "sandbox_network_policies",
    "sandbox_network_policy",
    "sandbox_pod",
    "training_config_map",
    "training_job",
    "training_service",
    "transfer_plan",
]
