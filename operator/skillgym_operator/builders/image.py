"""Task images built from the task's Dockerfile with Kaniko, cached by the context's content hash:
the same build context always maps to the same image tag and the same build Job, so a second run
of a task reuses the image (and concurrent runs share one build)."""

from __future__ import annotations

import hashlib
from typing import Any

from skillgym_operator.builders.common import labels
from skillgym_operator.resources import LABEL_BUILD
from skillgym_operator.settings import OperatorSettings
from skillgym_operator.spec import BuildSpec


def context_digest(build: BuildSpec) -> str:
    """Content keys already embed a hash; hashing the key and Dockerfile path keeps tags stable."""
    return hashlib.sha256(f"{build.context_key}\0{build.dockerfile}".encode()).hexdigest()


def image_reference(build: BuildSpec, settings: OperatorSettings) -> str:
    return f"{settings.build_registry}/skillgym-task:{context_digest(build)[:40]}"


def build_job_name(build: BuildSpec) -> str:
    return f"skillgym-build-{context_digest(build)[:24]}"


def kaniko_build_job(build: BuildSpec, namespace: str, settings: OperatorSettings) -> dict[str, Any]:
    digest = context_digest(build)[:24]

    def secret_env(name: str, key: str) -> dict[str, Any]:
        return {"name": name, "valueFrom": {"secretKeyRef": {"name": settings.secret, "key": key}}}

    def config_env(name: str, key: str) -> dict[str, Any]:
        return {"name": name, "valueFrom": {"configMapKeyRef": {"name": settings.config_map, "key": key}}}

    return {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {
            "name": build_job_name(build),
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
                    "automountServiceAccountToken": False,
                    "containers": [
                        {
                            "name": "kaniko",
                            "image": settings.kaniko_image,
                            "args": [
                                f"--context=s3://$(SKILLGYM_S3_BUCKET)/{build.context_key}",
                                f"--dockerfile={build.dockerfile}",
                                f"--destination={image_reference(build, settings)}",
                                "--cache=true",
                                f"--cache-repo={settings.build_registry}/skillgym-cache",
                                "--snapshot-mode=redo",
                            ],
                            "env": [
                                config_env("SKILLGYM_S3_BUCKET", "SKILLGYM_S3_BUCKET"),
                                config_env("S3_ENDPOINT", "SKILLGYM_S3_ENDPOINT_URL"),
                                {"name": "S3_FORCE_PATH_STYLE", "value": "true"},
                                config_env("AWS_REGION", "SKILLGYM_S3_REGION"),
                                secret_env("AWS_ACCESS_KEY_ID", "SKILLGYM_S3_ACCESS_KEY"),
                                secret_env("AWS_SECRET_ACCESS_KEY", "SKILLGYM_S3_SECRET_KEY"),
                            ],
                            "resources": {
                                "requests": {"cpu": "500m", "memory": "1Gi"},
                                "limits": {"cpu": "2", "memory": "4Gi"},
                            },
                        }
                    ],
                },
            },
        },
    }
