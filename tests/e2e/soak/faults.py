"""The faults the soak injects. Each waits for its moment (work in flight where it strikes),
does its damage, lifts it, and names the services whose recovery then counts: those that had
work waiting when it struck."""

from __future__ import annotations

import time
from collections.abc import Callable, Collection
from dataclasses import dataclass

from tests.e2e.distributed import SERVICES
from tests.e2e.soak.fleet import Fleet


@dataclass(frozen=True)
class Struck:
    victims: tuple[str, ...]
    note: str = ""


@dataclass(frozen=True)
class Fault:
    kind: str  # one of FAULT_KINDS
    name: str
    strikes_now: Callable[[Fleet, dict[str, int]], bool]  # given the consumer lag per service
    inject: Callable[[Fleet, dict[str, int]], Struck]  # returns once the fault is lifted


def _busy(lags: dict[str, int]) -> tuple[str, ...]:
    return tuple(s for s in SERVICES if lags.get(s, 0) > 0)


def _some_service_busy(fleet: Fleet, lags: dict[str, int]) -> bool:
    return bool(_busy(lags))


def _outage(stop: Callable[[], None], restart: Callable[[], None], seconds: float, meanwhile: Callable[[], None]) -> str:
    started = time.monotonic()
    stop()
    stopped = time.monotonic()
    meanwhile()
    time.sleep(max(0.0, seconds - (time.monotonic() - stopped)))
    restarting = time.monotonic()
    restart()
    done = time.monotonic()
    return f"stopping took {stopped - started:.1f}s, down {restarting - stopped:.1f}s, restarting took {done - restarting:.1f}s"


def kill(service: str) -> Fault:
    """``kill -9`` of a service while it has records it has not committed."""

    def inject(fleet: Fleet, lags: dict[str, int]) -> Struck:
        fleet.supervisor.kill(service)
        return Struck((service,))

    return Fault("kill", f"kill -9 {service}", lambda fleet, lags: lags.get(service, 0) > 0, inject)


def broker_down(seconds: float) -> Fault:
    """The Kafka process stopped, then started again on the same port and data directory."""

    def inject(fleet: Fleet, lags: dict[str, int]) -> Struck:
        note = _outage(fleet.kafka.stop, fleet.kafka.restart, seconds, lambda: None)
        return Struck(_busy(lags), note)

    return Fault("broker", f"broker down {seconds:.0f}s", _some_service_busy, inject)


def store_down(seconds: float) -> Fault:
    """MinIO stopped, then started again on the same port and data directory."""

    def inject(fleet: Fleet, lags: dict[str, int]) -> Struck:
        note = _outage(fleet.s3.stop, fleet.s3.restart, seconds, lambda: None)
        return Struck(_busy(lags), note)

    return Fault("store", f"store down {seconds:.0f}s", _some_service_busy, inject)


def store_down_across_restart(seconds: float) -> Fault:
    """MinIO stopped, the busiest service killed (and started again by the supervisor) while it
    is down, then MinIO back: the service starts against a store that does not answer."""

    def inject(fleet: Fleet, lags: dict[str, int]) -> Struck:
        victim = max(SERVICES, key=lambda s: lags.get(s, 0))
        note = _outage(fleet.s3.stop, fleet.s3.restart, seconds, lambda: fleet.supervisor.kill(victim))
        return Struck(tuple(dict.fromkeys((victim, *_busy(lags)))), f"killed {victim}; {note}")

    return Fault("store-restart", f"store down {seconds:.0f}s across a restart", _some_service_busy, inject)


def _training_in_flight(fleet: Fleet, lags: dict[str, int]) -> bool:
    """A training run has started and, when the trainer checkpoints, mirrored a checkpoint:
    killed there, the restarted trainer must resume it."""
    run = fleet.training_in_progress()
    if run is None:
        return False
    if int(fleet.cluster.env.get("SKILLGYM_TRAINER_CHECKPOINT_EVERY", "0")) == 0:
        return True
    mirrored = fleet.store_keys(f"training/{run['run_id']}/checkpoints/")
    return any(key.endswith("/trainer_state.json") for key in mirrored)


def kill_trainer_mid_run() -> Fault:
    def inject(fleet: Fleet, lags: dict[str, int]) -> Struck:
        fleet.supervisor.kill("trainer")
        return Struck(("trainer",))

    return Fault("trainer-mid-run", "kill -9 trainer mid training run", _training_in_flight, inject)


FAULT_KINDS = {
    "kill": "kill -9 of builder, reviewer, validator and sampler, each while it has records it has not committed",
    "trainer-mid-run": "kill -9 of the trainer in its training run, after a checkpoint was mirrored",
    "broker": "the Kafka broker down for the outage",
    "store": "MinIO down for the outage",
    "store-restart": "MinIO down while the busiest service is killed and started again",
}


def plan(outage_s: float, kinds: Collection[str] = tuple(FAULT_KINDS)) -> list[Fault]:
    """The faults of ``kinds`` in the order they are tried: the first that can strike goes. A
    training run is the rarest moment, so its kill comes first; the outages, which only need some
    service busy, sit between the kills so that they strike early, while work is plentiful."""
    unknown = set(kinds) - set(FAULT_KINDS)
    if unknown:
        raise ValueError(f"unknown fault kinds {sorted(unknown)}; choose from {', '.join(FAULT_KINDS)}")
    faults = [
        kill_trainer_mid_run(),
        kill("builder"),
        broker_down(outage_s),
        kill("reviewer"),
        store_down(outage_s),
        kill("validator"),
        store_down_across_restart(outage_s),
        kill("sampler"),
    ]
    return [fault for fault in faults if fault.kind in kinds]
