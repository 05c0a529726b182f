"""A TrainingJob becomes an Indexed Job (one pod per node) behind a headless Service, each pod
running ``torchrun`` with c10d rendezvous at index 0; configs ride in a ConfigMap. Checkpoints go
to the store under the job's output prefix and the trainer resumes from the newest one, so a
restarted pod (or a resubmitted job) continues instead of starting over.

The trainer runs the caller's image and module, so its pods follow the sandbox rules too
(:mod:`skillgym_operator.builders.policy`): the only writable paths are /tmp (also HOME and the
Hugging Face cache, capped at the job's ``resources.scratch``) and /dev/shm."""

from __future__ import annotations

import json
from typing import Any

from skillgym_core import keys

from skillgym_operator.builders.common import (
    isolated_pod_fields,
    labels,
    owner_reference,
    restricted_pod_security_context,
    restricted_security_context,
    store_env_from,
)
from skillgym_operator.resources import LABEL_TRAINING
from skillgym_operator.settings import OperatorSettings
from skillgym_operator.spec import TrainingJobSpec

CONFIG_DIR = "/etc/skillgym/training"


def service_name(job_name: str) -> str:
    return f"{job_name[:52]}-workers"


def config_map_name(job_name: str) -> str:
    return f"{job_name[:53]}-config"


def output_prefix(job_name: str, spec: TrainingJobSpec) -> str:
    return (spec.output_prefix or keys.training_run(job_name, "")).rstrip("/")


def training_config_map(job: dict[str, Any], spec: TrainingJobSpec) -> dict[str, Any]:
    meta = job["metadata"]
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {
            "name": config_map_name(meta["name"]),
            "namespace": meta["namespace"],
            "labels": labels("training", **{LABEL_TRAINING: meta["name"]}),
            "ownerReferences": [owner_reference(job)],
        },
        "data": {
            "trainer.json": json.dumps(spec.trainer_config, indent=2, sort_keys=True),
            "deepspeed.json": json.dumps(spec.deepspeed_config, indent=2, sort_keys=True),
        },
    }


def training_service(job: dict[str, Any]) -> dict[str, Any]:
    meta = job["metadata"]
    return {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": {
            "name": service_name(meta["name"]),
            "namespace": meta["namespace"],
            "labels": labels("training", **{LABEL_TRAINING: meta["name"]}),
            "ownerReferences": [owner_reference(job)],
        },
        "spec": {
            "clusterIP": "None",
            "publishNotReadyAddresses": True,
            "selector": {LABEL_TRAINING: meta["name"]},
            "ports": [{"name": "rendezvous", "port": 29500, "targetPort": 29500}],
        },
    }


def torchrun_command(job_name: str, spec: TrainingJobSpec, settings: OperatorSettings) -> list[str]:
    rendezvous_host = f"{job_name}-0.{service_name(job_name)}"
    return [
        "torchrun",
        f"--nnodes={spec.nodes}",
        f"--nproc-per-node={max(spec.gpus, 1)}",
        "--rdzv-backend=c10d",
        f"--rdzv-endpoint={rendezvous_host}:{settings.training_master_port}",
        f"--rdzv-id={job_name}",
        f"--max-restarts={settings.training_max_restarts}",
        "-m",
        spec.module or settings.trainer_module,
        "--dataset-key",
        spec.dataset_key,
        "--base-model",
        spec.base_model,
        "--trainer-config",
        f"{CONFIG_DIR}/trainer.json",
        "--deepspeed-config",
        f"{CONFIG_DIR}/deepspeed.json",
        "--output-prefix",
        output_prefix(job_name, spec),
        "--resume",
    ]


def training_job(job: dict[str, Any], spec: TrainingJobSpec, settings: OperatorSettings) -> dict[str, Any]:
    meta = job["metadata"]
    name = meta["name"]
    pod_labels = labels("training", **{LABEL_TRAINING: name})
    limits: dict[str, Any] = {"cpu": spec.resources.cpu, "memory": spec.resources.memory}
    if spec.gpus:
        limits["nvidia.com/gpu"] = str(spec.gpus)
    pod_spec: dict[str, Any] = {
        "restartPolicy": "Never",
        "subdomain": service_name(name),
        **isolated_pod_fields(),
        "securityContext": restricted_pod_security_context(settings),
        "containers": [
            {
                "name": "trainer",
                "image": spec.image or settings.trainer_image,
                "imagePullPolicy": settings.image_pull_policy,
                "command": torchrun_command(name, spec, settings),
                "env": [
                    {"name": "SKILLGYM_TRAINING_JOB", "value": name},
                    {"name": "NNODES", "value": str(spec.nodes)},
                    {"name": "HF_HOME", "value": "/tmp/hf"},
                    {"name": "HOME", "value": "/tmp"},
                ],
                "envFrom": store_env_from(settings),
                "ports": [{"name": "rendezvous", "containerPort": settings.training_master_port}],
                "resources": {"requests": dict(limits), "limits": dict(limits)},
                "volumeMounts": [
                    {"name": "config", "mountPath": CONFIG_DIR, "readOnly": True},
                    {"name": "shm", "mountPath": "/dev/shm"},
                    {"name": "scratch", "mountPath": "/tmp"},
                ],
                "securityContext": restricted_security_context(settings),
            }
        ],
        "volumes": [
            {"name": "config", "configMap": {"name": config_map_name(name)}},
            {"name": "shm", "emptyDir": {"medium": "Memory", "sizeLimit": "16Gi"}},
            {"name": "scratch", "emptyDir": {"sizeLimit": spec.resources.scratch}},
        ],
    }
    if spec.gpus:
        pod_spec["tolerations"] = [{"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}]
    return {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {
            "name": name,
            "namespace": meta["namespace"],
            "labels": pod_labels,
            "ownerReferences": [owner_reference(job)],
        },
        "spec": {
            "completionMode": "Indexed",
            "completions": spec.nodes,
            "parallelism": spec.nodes,
            "backoffLimit": spec.backoff_limit * spec.nodes,
            "template": {"metadata": {"labels": pod_labels}, "spec": pod_spec},
        },
    }
