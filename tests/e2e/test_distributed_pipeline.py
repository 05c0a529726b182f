"""The same pipeline with every service as its own process over real Kafka and a real S3 server."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from skillgym.embedded import EmbeddedOptions, run_pipeline
from tests.e2e.conftest import EXAMPLE_SKILLS, STAGE_COUNTS
from tests.e2e.distributed import running_cluster, wait_for_training
from tests.support.scripted_llm import ScriptedLLMServer
from tests.support.services import KafkaServer, S3Server

pytestmark = [pytest.mark.e2e, pytest.mark.integration, pytest.mark.slow]


def test_distributed_pipeline_matches_embedded_counts(
    tmp_path: Path, kafka: KafkaServer, s3: S3Server, scripted_teacher: ScriptedLLMServer
) -> None:
    embedded = run_pipeline(
        [EXAMPLE_SKILLS], tmp_path / "embedded", EmbeddedOptions(llm_base_url=scripted_teacher.base_url)
    ).summary
    extra = {
        "SKILLGYM_SAMPLER_LLM_BASE_URL": scripted_teacher.base_url,
        "SKILLGYM_TRAINER_MIN_NEW_EXAMPLES": str(embedded["dataset_examples"]),
    }
    with running_cluster(kafka, s3, tmp_path / "cluster", extra) as cluster:
        ingest = cluster.skillgym("ingest", str(EXAMPLE_SKILLS), "--out", str(tmp_path / "ingest"), "--publish")
        funnel = json.loads((tmp_path / "ingest" / "funnel.json").read_text())
        assert ingest.returncode == 0
        summary = wait_for_training(cluster, embedded["skills_seen"], embedded["skills_accepted"])
        for service in ("builder", "sampler"):
            assert cluster.get(service, "/healthz").status_code == 200
            assert "skillgym_events_consumed_total" in cluster.get(service, "/metrics").text

    assert funnel
    assert {key: summary[key] for key in STAGE_COUNTS} == {key: embedded[key] for key in STAGE_COUNTS}
    assert summary["training_loss_last"] < summary["training_loss_first"]
