"""The distributed pipeline under faults: a clean run of the example skills as the reference,
then the same input while every service is killed with ``kill -9`` in the middle of its stage,
the broker and MinIO go down, MinIO stays down across a service restart and the trainer dies in
the middle of its training run. Nothing is repaired by hand (killed processes are started again,
as Kubernetes would). Nothing may be lost, no artifact made twice, nothing left stalled.

``benchmarks/soak.py`` runs the same harness longer."""

from __future__ import annotations

import time

import pytest

from tests.e2e.distributed import SERVICES
from tests.e2e.soak.faults import plan
from tests.e2e.soak.harness import SoakResult, SoakSettings, pipeline_env, soak
from tests.e2e.soak.inputs import soak_input
from tests.e2e.soak.report import table
from tests.support.scripted_llm import ScriptedLLMServer
from tests.support.services import start_kafka, start_s3

pytestmark = [pytest.mark.e2e, pytest.mark.integration, pytest.mark.slow]

OUTAGE_S = 10.0


@pytest.fixture(scope="module")
def soaked(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory, module_teacher: ScriptedLLMServer
) -> SoakResult:
    """Its own broker and MinIO: the soak stops and restarts them under the other tests' feet otherwise."""
    tmp = tmp_path_factory.mktemp("faults")
    reporter = request.config.pluginmanager.get_plugin("terminalreporter")
    capture = request.config.pluginmanager.get_plugin("capturemanager")

    def log(line: str) -> None:
        if reporter is not None and capture is not None:
            with capture.global_and_fixture_disabled():  # progress and the table show as the run goes
                reporter.write_line(f"[soak +{time.monotonic() - started:4.0f}s] {line}")

    started = time.monotonic()
    with start_kafka(tmp / "kafka") as kafka, start_s3(tmp / "s3") as s3:
        settings = SoakSettings(
            # two variants of each example keep every stage busy long enough for each fault to strike
            # mid-stage: with wrong outputs judged in bulk, one variant left the validator idle at its turn
            skills=soak_input(tmp / "skills", variants=2),
            faults=plan(OUTAGE_S),
            waves=3,
            env=pipeline_env(module_teacher.base_url, train_steps=24, checkpoint_every=4),
            strike_patience_s=60,
            recovery_timeout_s=180,
            settle_timeout_s=300,
        )
        result = soak(kafka, s3, settings, tmp, log)
    (tmp / "soak-table.txt").write_text(table(result.audit) + "\n")
    for line in ["", *table(result.audit).splitlines()]:
        log(line)
    return result


def _logs(result: SoakResult, services: list[str] | tuple[str, ...] = SERVICES) -> str:
    return "\n".join(f"--- {s} ---\n{result.faulted.logs(s)}" for s in services)


def test_every_fault_struck_while_work_was_in_flight(soaked: SoakResult) -> None:
    injections = soaked.faulted.injections
    assert [i.fault for i in injections if not i.mid_stage] == []
    killed = {v for i in injections if i.kind in ("kill", "trainer-mid-run") for v in i.victims}
    assert killed == set(SERVICES)
    assert {i.kind for i in injections} == {"kill", "trainer-mid-run", "broker", "store", "store-restart"}


def test_nothing_is_lost(soaked: SoakResult) -> None:
    lost = {topic: tally.lost for topic, tally in soaked.audit.topics.items() if tally.lost}
    assert lost == {}, f"events of the clean run missing under faults: {lost}\n{_logs(soaked)}"
    assert soaked.faulted.examples == soaked.reference.examples


def test_no_artifact_is_made_twice(soaked: SoakResult) -> None:
    extra = {topic: tally.extra for topic, tally in soaked.audit.topics.items() if tally.extra}
    assert extra == {}, f"events only the faulted run published: {extra}"
    for topic, tally in soaked.audit.topics.items():
        assert tally.distinct == tally.expected, topic  # redeliveries of one id are allowed, counted apart


def test_training_completes_once_per_dataset_version(soaked: SoakResult) -> None:
    training = soaked.audit.training
    assert (training.versions, training.completions) == (1, 1), training
    assert training.complete_dataset, "the one dataset trained is not every example the clean run recorded"


def test_nothing_is_left_stalled(soaked: SoakResult) -> None:
    not_recovered = [i.fault for i in soaked.faulted.injections if i.recovered_s is None]
    assert not_recovered == [], _logs(soaked)
    assert soaked.faulted.ready == dict.fromkeys(SERVICES, True)
    assert soaked.faulted.lags == dict.fromkeys(SERVICES, 0)
    assert soaked.audit.new_dead_letters == {}


def test_recovery_needs_no_help_beyond_restarting_killed_processes(soaked: SoakResult) -> None:
    """A service started while MinIO is down waits for it instead of exiting (a crash loop would
    add the orchestrator's back-off to the outage)."""
    exited = [(e.service, e.returncode, e.log_tail[-400:]) for e in soaked.faulted.exits if not e.killed]
    assert exited == []


def test_the_clean_run_is_clean(soaked: SoakResult) -> None:
    reference = soaked.reference
    assert reference.exits == []
    assert reference.ready == dict.fromkeys(SERVICES, True)
    assert reference.lags == dict.fromkeys(SERVICES, 0)
    assert reference.examples, "nothing to train on"

