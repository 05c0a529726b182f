"""Drives the soak: a clean distributed run of the input as the reference, the same input
(fresh topics and bucket, same broker and store servers) under the fault plan, then the audit.

Nothing is repaired by hand: the only help the services get is the :class:`Supervisor`
starting exited processes again, as Kubernetes would."""

from __future__ import annotations

import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from skillgym_core.contracts.topics import ALL_TOPICS, SKILL_INGESTED, TRAINING_COMPLETED
from skillgym_core.sandbox.janitor import remove_tree

from tests.e2e.distributed import Cluster, running_cluster
from tests.e2e.soak.audit import DLQ_TOPICS, Audit, Injection, audit
from tests.e2e.soak.broker import Record
from tests.e2e.soak.faults import Fault
from tests.e2e.soak.fleet import Fleet, wait_until_settled
from tests.e2e.soak.inputs import INGEST_ENV, accepted_skills, in_waves
from tests.e2e.soak.supervisor import Exit, Supervisor
from tests.support.services import KafkaServer, S3Server

Log = Callable[[str], None]


def pipeline_env(teacher_url: str, *, train_steps: int, checkpoint_every: int) -> dict[str, str]:
    """Settings of both runs: the scripted teacher for the sampler, a training run long enough
    to be killed in the middle (mirroring checkpoints it must resume from), and probes often
    enough that readiness reflects a recovery within seconds."""
    return {
        "SKILLGYM_SAMPLER_LLM_BASE_URL": teacher_url,
        "SKILLGYM_TRAINER_MAX_STEPS": str(train_steps),
        "SKILLGYM_TRAINER_CHECKPOINT_EVERY": str(checkpoint_every),
        "SKILLGYM_PROBE_INTERVAL_S": "1",
        **INGEST_ENV,
    }


@dataclass(frozen=True)
class SoakSettings:
    skills: Path
    faults: Sequence[Fault]
    env: dict[str, str] = field(default_factory=dict)  # for both runs: the teacher, sampler and trainer settings
    waves: int = 1  # parts the faulted run publishes the input in, one whenever no fault can strike
    wave_gap_s: float = 3.0  # how long no fault may find its moment before the next part goes out
    strike_patience_s: float = 90.0  # with the input all out, a fault waits this long for work in flight
    recovery_timeout_s: float = 300.0
    settle_timeout_s: float = 900.0
    quiet_s: float = 5.0  # how long nothing may move before a run counts as settled


@dataclass
class RunOutcome:
    workdir: Path
    seconds: float
    records: list[Record]
    examples: set[str]  # trajectories the trainer recorded
    manifests: dict[str, set[str]]  # trajectory ids of each dataset a completion names
    ready: dict[str, bool]
    lags: dict[str, int]
    injections: list[Injection] = field(default_factory=list)
    exits: list[Exit] = field(default_factory=list)

    def logs(self, service: str, chars: int = 3000) -> str:
        path = self.workdir / f"{service}.log"
        return path.read_text(errors="replace")[-chars:] if path.exists() else ""


@dataclass
class SoakResult:
    reference: RunOutcome
    faulted: RunOutcome
    audit: Audit


def _await_recovery(
    fleet: Fleet, victims: Sequence[str], before: dict[str, tuple[int, int]], timeout_s: float
) -> float | None:
    """Seconds until every service is ready and every victim settled a record it had waiting
    when the fault struck (or has nothing left); None if that never happened."""
    lifted = time.monotonic()
    while time.monotonic() - lifted < timeout_s:
        progress = fleet.progress()
        if progress is not None:
            moved = all(progress[v][0] > before[v][0] or progress[v][0] >= progress[v][1] for v in victims)
            if moved and all(fleet.readiness().values()):
                return time.monotonic() - lifted
        time.sleep(0.25)
    return None


class _Idle:
    """How long no fault could strike, and how long the pipeline has had nothing to consume
    and no training run going."""

    def __init__(self) -> None:
        self.no_moment_since = time.monotonic()
        self.drained_since: float | None = None

    def no_moment_s(self) -> float:
        return time.monotonic() - self.no_moment_since

    def drained_s(self, fleet: Fleet, lags: dict[str, int]) -> float:
        if any(lags.values()) or fleet.training_in_progress():
            self.drained_since = None
            return 0.0
        self.drained_since = self.drained_since or time.monotonic()
        return time.monotonic() - self.drained_since


def inject_all(
    fleet: Fleet, faults: Sequence[Fault], more_work: Callable[[], bool], settings: SoakSettings, log: Log
) -> list[Injection]:
    """Strike every fault once, each when its moment comes (the first in plan order that can
    strike goes), each after the one before recovered. While no fault can strike, the next part
    of the input is published (``more_work``; False once there is none); with none left, a fault
    that found no moment within the patience strikes anyway (and is reported so)."""
    pending = list(faults)
    injections: list[Injection] = []
    idle = _Idle()
    while pending:
        lags = fleet.lags()
        if lags is None:
            time.sleep(0.5)
            continue
        fault = next((f for f in pending if f.strikes_now(fleet, lags)), None)
        in_flight = fault is not None
        if fault is None:
            drained = idle.drained_s(fleet, lags) >= settings.quiet_s
            if (drained or idle.no_moment_s() >= settings.wave_gap_s) and more_work():
                idle = _Idle()
                continue
            if not drained and idle.no_moment_s() < settings.strike_patience_s:
                time.sleep(0.25)
                continue
            fault = pending[0]
        pending.remove(fault)
        before = fleet.progress() or {}
        started = time.time()
        log(f"{fault.name}: striking ({'work in flight' if in_flight else 'nothing in flight'}; lag {lags})")
        struck = fault.inject(fleet, lags)
        lifted = time.time()
        victims = [v for v in struck.victims if v in before]
        recovered = _await_recovery(fleet, victims, before, settings.recovery_timeout_s)
        log(f"{fault.name}: lifted after {lifted - started:.1f}s ({struck.note or 'at once'}), recovered in "
            f"{'never' if recovered is None else f'{recovered:.1f}s'}")
        injections.append(
            Injection(fault.name, fault.kind, struck.victims, in_flight, started, lifted, recovered, struck.note)
        )
        idle = _Idle()
    return injections


def _manifests(fleet: Fleet, records: Sequence[Record]) -> dict[str, set[str]]:
    manifests: dict[str, set[str]] = {}
    for record in records:
        if record.topic == TRAINING_COMPLETED:
            dataset_key = str(record.payload["dataset_key"])
            manifest = fleet.store_json(dataset_key.rsplit("/", 1)[0] + "/manifest.json")
            manifests[dataset_key] = set(manifest["trajectory_ids"])
    return manifests


def _outcome(fleet: Fleet, started: float) -> RunOutcome:
    seconds = time.monotonic() - started
    records = fleet.broker.records([*ALL_TOPICS, *DLQ_TOPICS])
    return RunOutcome(
        workdir=fleet.cluster.workdir,
        seconds=seconds,
        records=records,
        examples=fleet.recorded_examples(),
        manifests=_manifests(fleet, records),
        ready=fleet.readiness(),
        lags=fleet.lags() or {},
        exits=list(fleet.supervisor.exits),
    )


@contextmanager
def _running(kafka: KafkaServer, s3: S3Server, workdir: Path, env: dict[str, str]) -> Iterator[Fleet]:
    """The five services over ``kafka`` and ``s3``, kept running by a supervisor.

    Their sandboxes stage host paths in a directory of this run's own: a process killed with
    ``kill -9`` leaves its staging mounts behind, and a later process that happens to get the
    same pid cannot stage anything in a shared one. Whatever the killed processes left is
    detached and removed at the end."""
    staging = Path(tempfile.mkdtemp(prefix="skillgym-soak-staging-", dir="/tmp"))
    staging.chmod(0o711)  # the sandbox uid must be able to pass through it
    try:
        run_env = {**env, "SKILLGYM_SANDBOX_STAGING": str(staging)}
        with running_cluster(kafka, s3, workdir, run_env) as cluster, Supervisor(cluster) as supervisor:
            fleet = Fleet.around(cluster, kafka, s3, supervisor)
            try:
                yield fleet
            finally:
                fleet.broker.close()
    finally:
        remove_tree(staging)


def _ingest(cluster: Cluster, skills: Path, out: Path) -> None:
    cluster.skillgym("ingest", str(skills), "--out", str(out), "--publish")


def clean_run(kafka: KafkaServer, s3: S3Server, settings: SoakSettings, workdir: Path, log: Log) -> RunOutcome:
    """The reference: the input through the pipeline with no fault (and no training: how many
    examples there are to train on is what this run finds out)."""
    env = {**settings.env, "SKILLGYM_TRAINER_MIN_NEW_EXAMPLES": "0"}
    with _running(kafka, s3, workdir, env) as fleet:
        started = time.monotonic()
        _ingest(fleet.cluster, settings.skills, workdir / "ingest")
        took = wait_until_settled(fleet, quiet_s=settings.quiet_s, timeout_s=settings.settle_timeout_s)
        log(f"clean run settled after {took:.0f}s")
        return _outcome(fleet, started)


def faulted_run(
    kafka: KafkaServer, s3: S3Server, settings: SoakSettings, workdir: Path, reference: RunOutcome, log: Log
) -> RunOutcome:
    """The same input under every fault of the plan, published in ``settings.waves`` parts; the
    trainer trains once the examples the clean run recorded all arrived."""
    env = {**settings.env, "SKILLGYM_TRAINER_MIN_NEW_EXAMPLES": str(len(reference.examples))}
    ingested = {r.payload["skill_id"] for r in reference.records if r.topic == SKILL_INGESTED}
    accepted = accepted_skills(reference.workdir / "ingest", ingested)
    waves = in_waves(settings.skills, settings.waves, workdir / "waves", accepted)
    with _running(kafka, s3, workdir, env) as fleet:

        def publish_next_wave() -> bool:
            if not waves:
                return False
            wave = waves.pop(0)
            log(f"publishing {wave.name}: {', '.join(sorted(p.name for p in wave.iterdir()))}")
            _ingest(fleet.cluster, wave, workdir / "ingest" / wave.name)
            return True

        started = time.monotonic()
        publish_next_wave()
        injections = inject_all(fleet, settings.faults, publish_next_wave, settings, log)
        while publish_next_wave():
            pass
        # a training run keeps the trainer's record uncommitted: settled means trained, or never will be
        took = wait_until_settled(fleet, quiet_s=settings.quiet_s, timeout_s=settings.settle_timeout_s)
        log(f"faulted run settled {took:.0f}s after the last fault")
        outcome = _outcome(fleet, started)
        outcome.injections = injections
        return outcome


def soak(kafka: KafkaServer, s3: S3Server, settings: SoakSettings, workdir: Path, log: Log = print) -> SoakResult:
    reference = clean_run(kafka, s3, settings, workdir / "clean", log)
    if not reference.examples:
        raise AssertionError("the clean run recorded no training example: nothing to train under faults")
    faulted = faulted_run(kafka, s3, settings, workdir / "faulted", reference, log)
    result = audit(
        reference.records,
        faulted.records,
        faulted.injections,
        reference_examples=reference.examples,
        dataset_manifests=faulted.manifests,
    )
    return SoakResult(reference, faulted, result)
