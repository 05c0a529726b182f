"""Where training runs once enough data arrived: in this process, or as a ``TrainingJob``
custom resource that the operator turns into a (GPU) job running
``torchrun -m skillgym_trainer.distributed``."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol

from skillgym_trainer.errors import LaunchError
from skillgym_trainer.settings import TrainerSettings
from skillgym_trainer.sft.deepspeed_engine import load_config

GROUP = "skillgym.io"
VERSION = "v1alpha1"
PLURAL = "trainingjobs"
KIND = "TrainingJob"


@dataclass(frozen=True)
class TrainingRequest:
    run_id: str
    dataset_key: str
    base_model: str
    trainer_config: dict[str, Any] = field(default_factory=dict)
    zero_stage: int = 3
    module: str | None = None  # the pods' entry module; None: the operator's (SFT)


GRPO_MODULE = "skillgym_trainer.rl.distributed"


def grpo_request(run_id: str, plan_key: str, base_model: str, options: dict[str, Any]) -> TrainingRequest:
    """A GRPO run as a ``TrainingJob``: its "dataset" is the rollout plan in the store
    (``{"env_url", "task_ids"}``, see :mod:`skillgym_trainer.rl.distributed`), ``options`` are
    ``GrpoOptions`` fields."""
    return TrainingRequest(run_id, plan_key, base_model, trainer_config=options, zero_stage=2, module=GRPO_MODULE)


class Launcher(Protocol):
    name: str

    def submit(self, request: TrainingRequest) -> str:
        """Hand the run over; return where it can be followed (a resource name)."""
        ...


def training_job_manifest(request: TrainingRequest, namespace: str, image: str | None, gpus: int) -> dict[str, Any]:
    deepspeed = load_config(request.zero_stage)
    deepspeed["bf16"] = {"enabled": gpus > 0}
    return {
        "apiVersion": f"{GROUP}/{VERSION}",
        "kind": KIND,
        "metadata": {
            "name": request.run_id,
            "namespace": namespace,
            "labels": {"app.kubernetes.io/part-of": "skillgym", "skillgym.io/run": request.run_id},
        },
        "spec": {
            "datasetKey": request.dataset_key,
            "baseModel": request.base_model,
            "trainerConfig": request.trainer_config,
            "deepspeedConfig": deepspeed,
            "gpus": gpus,
            "nodes": 1,
            **({"image": image} if image else {}),
            **({"module": request.module} if request.module else {}),
        },
    }


class KubernetesLauncher:
    name = "kubernetes"

    def __init__(self, settings: TrainerSettings, api_client: Any | None = None) -> None:
        self.settings = settings
        self._api_client = api_client

    def _api(self) -> Any:
        from kubernetes import client, config

        if self._api_client is None:
            try:
                config.load_incluster_config()
            except config.ConfigException:
                config.load_kube_config()
            self._api_client = client.ApiClient()
        return client.CustomObjectsApi(self._api_client)

    def submit(self, request: TrainingRequest) -> str:
        from kubernetes.client.exceptions import ApiException

        body = training_job_manifest(
            request, self.settings.k8s_namespace, self.settings.k8s_image, self.settings.k8s_gpus
        )
        try:
            self._api().create_namespaced_custom_object(GROUP, VERSION, self.settings.k8s_namespace, PLURAL, body)
        except ApiException as exc:
            if exc.status != 409:  # 409: this run was already submitted (redelivered event)
                raise LaunchError(
                    "the TrainingJob could not be created", status=exc.status, body=str(exc.body)[:500]
                ) from exc
        return f"{self.settings.k8s_namespace}/{request.run_id}"
