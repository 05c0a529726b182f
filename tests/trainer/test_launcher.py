"""The Kubernetes launcher against a Kubernetes API served over real HTTP (kmock)."""

from __future__ import annotations

from pathlib import Path

from skillgym_trainer.launcher import TrainingRequest, training_job_manifest
from skillgym_trainer.service import TrainerService
from skillgym_trainer.settings import TrainerSettings

from tests.operator.apiserver import run_apiserver
from tests.trainer.factories import envelope, make_context, store_trajectory


def test_manifest_keeps_optimizer_out_and_enables_bf16_on_gpus() -> None:
    manifest = training_job_manifest(TrainingRequest("run-1", "datasets/x/chat.jsonl", "smollm2"), "ns", None, 2)
    assert manifest["apiVersion"] == "skillgym.io/v1alpha1" and manifest["kind"] == "TrainingJob"
    spec = manifest["spec"]
    assert spec["deepspeedConfig"]["zero_optimization"]["stage"] == 3
    assert "optimizer" not in spec["deepspeedConfig"] and spec["deepspeedConfig"]["bf16"]["enabled"]


def test_threshold_submits_a_training_job(tmp_path: Path) -> None:
    from skillgym_trainer.launcher import KubernetesLauncher

    with run_apiserver(tmp_path, "skillgym") as api:
        ctx = make_context(tmp_path)
        settings = TrainerSettings(min_new_examples=2, launcher="kubernetes", k8s_namespace="skillgym")
        service = TrainerService(ctx, settings)
        service.launcher_factory = lambda: KubernetesLauncher(settings, api.api_client)
        assert service.handle(envelope(store_trajectory(ctx.store, 1))) == []  # type: ignore[arg-type]
        assert service.handle(envelope(store_trajectory(ctx.store, 2))) == []  # type: ignore[arg-type]
        jobs = api.objects("skillgym.io/v1alpha1/trainingjobs", "skillgym")
        assert len(jobs) == 1
        (job,) = jobs.values()
        assert ctx.store.exists(job["spec"]["datasetKey"])
        assert job["spec"]["trainerConfig"]["max_steps"] == settings.max_steps
        assert service.pending_ids() == []
        # A second submission of the same run (redelivery) is accepted without a duplicate.
        assert (
            KubernetesLauncher(settings, api.api_client).submit(
                TrainingRequest(job["metadata"]["name"], job["spec"]["datasetKey"], "tiny")
            )
            == f"skillgym/{job['metadata']['name']}"
        )
        assert len(api.objects("skillgym.io/v1alpha1/trainingjobs", "skillgym")) == 1
