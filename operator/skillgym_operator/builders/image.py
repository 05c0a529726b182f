"""Task images built from the task's Dockerfile with Kaniko, cached by the context's content hash:
the same build context always maps to the same image tag and the same build Job, so a second run
of a task reuses the image (and concurrent runs share one build).

A non-root init container fetches the context from the store; Kaniko then builds from that
directory without store credentials. A build from a prebuilt image alone gets a one-line Dockerfile; a
build for a task's user gets one more layer that gives that user the pods' uid. Kaniko unpacks the base image into its own root filesystem
and sets file ownership while building, so it is the one container that runs as root with a
writable root and a few file-ownership capabilities; every other rule of
:mod:`skillgym_operator.builders.policy` holds."""

from __future__ import annotations

import hashlib
import json
from typing import Any

from skillgym_core.sandbox.container.users import REMAP_SCRIPT, REMAP_SCRIPT_NAME, remap_layer

from skillgym_operator.builders.common import (
    isolated_pod_fields,
    labels,
    restricted_pod_security_context,
    restricted_security_context,
    size_limited_empty_dir,
    store_env_from,
)
from skillgym_operator.resources import LABEL_BUILD, PLAN_ENV
from skillgym_operator.settings import OperatorSettings
from skillgym_operator.spec import BuildSpec

CONTEXT_DIR = "/workspace"
FETCH_CONTEXT_CONTAINER = "fetch-context"
KANIKO_CAPABILITIES = ["CHOWN", "DAC_OVERRIDE", "FOWNER", "FSETID", "KILL", "SETGID", "SETUID", "SETFCAP"]


def context_digest(build: BuildSpec, settings: OperatorSettings) -> str:
    """Content keys already embed a hash; hashing the key (or base image), the Dockerfile path and
    the user remapped to the pods' uid keeps tags stable."""
    source = build.context_key or f"image:{build.base_image}"
    remap = f"\0{build.user}\0{settings.run_as_user}\0{REMAP_SCRIPT}" if build.user else ""
    return hashlib.sha256(f"{source}\0{build.dockerfile}{remap}".encode()).hexdigest()


def image_reference(build: BuildSpec, settings: OperatorSettings) -> str:
    return f"{settings.build_registry}/skillgym-task:{context_digest(build, settings)[:40]}"


def registry_host(registry: str) -> str:
    """``registry.ns.svc:5000/skillgym`` -> ``registry.ns.svc:5000``."""
    return registry.split("/", 1)[0]


def build_job_name(build: BuildSpec, settings: OperatorSettings) -> str:
    return f"skillgym-build-{context_digest(build, settings)[:24]}"


def kaniko_security_context(settings: OperatorSettings) -> dict[str, Any]:
    return {
        "runAsNonRoot": False,
        "runAsUser": 0,
        "runAsGroup": 0,
        "allowPrivilegeEscalation": False,
        "privileged": False,
        "readOnlyRootFilesystem": False,
        "capabilities": {"drop": ["ALL"], "add": list(KANIKO_CAPABILITIES)},
        "seccompProfile": settings.seccomp_profile(),
    }


def context_writes(build: BuildSpec, settings: OperatorSettings) -> list[dict[str, Any]]:
    """Files the fetch step writes into the unpacked context: the Dockerfile of a prebuilt base,
    and for a user the remap script and the layer that runs it (last, so it acts on the final
    stage; see :mod:`skillgym_core.sandbox.container.users`)."""
    dockerfile = f"{CONTEXT_DIR}/{build.dockerfile}"
    writes: list[dict[str, Any]] = []
    if build.base_image:
        writes.append({"path": dockerfile, "text": f"FROM {build.base_image}\n"})
    if build.user:
        writes.append({"path": f"{CONTEXT_DIR}/{REMAP_SCRIPT_NAME}", "text": REMAP_SCRIPT})
        writes.append({"path": dockerfile, "text": remap_layer(build.user, settings.run_as_user), "append": True})
    return writes


def _fetch_context_container(build: BuildSpec, settings: OperatorSettings) -> dict[str, Any]:
    plan = {"mounts": [{"path": CONTEXT_DIR, "key": build.context_key}], "stdinKey": None,
            "writes": context_writes(build, settings)}  # fmt: skip
    return {
        "name": FETCH_CONTEXT_CONTAINER,
        "image": settings.runner_image,
        "imagePullPolicy": settings.image_pull_policy,
        "command": ["python", "-m", "skillgym_operator.transfer", "fetch"],
        "env": [{"name": PLAN_ENV, "value": json.dumps(plan, sort_keys=True)}],
        "envFrom": store_env_from(settings),
        "volumeMounts": [{"name": "context", "mountPath": CONTEXT_DIR}, {"name": "tmp", "mountPath": "/tmp"}],
        "terminationMessagePolicy": "FallbackToLogsOnError",
        "securityContext": restricted_security_context(settings),
        "resources": {
            "requests": {"cpu": "50m", "memory": "128Mi"},
            "limits": {"cpu": "500m", "memory": "512Mi"},
        },
    }


def kaniko_build_job(build: BuildSpec, namespace: str, settings: OperatorSettings) -> dict[str, Any]:
    digest = context_digest(build, settings)[:24]
    return {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {
            "name": build_job_name(build, settings),
            "namespace": namespace,
            "labels": labels("image-build", **{LABEL_BUILD: digest}),
        },
        "spec": {
            "backoffLimit": 2,
            "activeDeadlineSeconds": settings.build_timeout_s,
            "ttlSecondsAfterFinished": 86400,
            "template": {
                "metadata": {"labels": labels("image-build", **{LABEL_BUILD: digest})},
                "spec": {
                    "restartPolicy": "Never",
                    **isolated_pod_fields(),
                    "securityContext": restricted_pod_security_context(settings),
                    "initContainers": [_fetch_context_container(build, settings)],
                    "containers": [
                        {
                            "name": "kaniko",
                            "image": settings.kaniko_image,
                            "args": [
                                f"--context=dir://{CONTEXT_DIR}",
                                f"--dockerfile={build.dockerfile}",
                                f"--destination={image_reference(build, settings)}",
                                "--cache=true",
                                f"--cache-repo={settings.build_registry}/skillgym-cache",
                                "--snapshot-mode=redo",
                                # plain HTTP to the build registry only; base images still come over TLS
                                *([f"--insecure-registry={registry_host(settings.build_registry)}"]
                                  if settings.build_registry_insecure else []),
                            ],
                            "volumeMounts": [{"name": "context", "mountPath": CONTEXT_DIR, "readOnly": True}],
                            "securityContext": kaniko_security_context(settings),
                            "resources": {
                                "requests": {"cpu": "500m", "memory": "1Gi"},
                                "limits": {"cpu": "2", "memory": "4Gi"},
                            },
                        }
                    ],
                    "volumes": [
                        size_limited_empty_dir("context", settings.build_context_mb),
                        size_limited_empty_dir("tmp", 256),
                    ],
                },
            },
        },
    }
