"""Leader election over a ``coordination.k8s.io`` Lease, so that of several operator replicas one
acts and the others stand by. The decision is a pure function of the Lease as read; writes use
its resourceVersion, so two candidates that decide at once cannot both win (one gets 409).

A replica that cannot renew before its lease runs out stops the process: another may already
act, and two operators creating the same pods is worse than a restart."""

from __future__ import annotations

import http.server
import logging
import threading
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any, Literal

from kubernetes.client.exceptions import ApiException

logger = logging.getLogger(__name__)

Action = Literal["create", "renew", "take_over", "wait"]


def _parse(stamp: Any) -> datetime | None:
    if isinstance(stamp, datetime):
        return stamp if stamp.tzinfo else stamp.replace(tzinfo=UTC)
    if not stamp:
        return None
    return datetime.fromisoformat(str(stamp).replace("Z", "+00:00"))


def micro_time(moment: datetime) -> str:
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def decide(lease: dict[str, Any] | None, identity: str, now: datetime, renewed_at: datetime | None = None) -> Action:
    """What ``identity`` should do with the Lease it just read (None: there is none yet).
    ``renewed_at``: when this candidate saw the record last change, by its own clock; given, it is
    trusted over the holder's timestamps, so a holder whose clock is off is not taken over early."""
    if lease is None:
        return "create"
    spec = lease.get("spec") or {}
    holder = spec.get("holderIdentity") or ""
    if holder == identity:
        return "renew"
    renewed = renewed_at or _parse(spec.get("renewTime")) or _parse(spec.get("acquireTime"))
    duration = float(spec.get("leaseDurationSeconds") or 0)
    if not holder or renewed is None or renewed + timedelta(seconds=duration) <= now:
        return "take_over"
    return "wait"


def next_lease(lease: dict[str, Any] | None, action: Action, identity: str, duration_s: int, now: datetime,
               name: str) -> dict[str, Any]:
    """The Lease body to write for ``action`` (not for ``wait``)."""
    spec = dict((lease or {}).get("spec") or {})
    stamp = micro_time(now)
    if action in ("create", "take_over"):
        transitions = int(spec.get("leaseTransitions") or 0) + (1 if action == "take_over" else 0)
        spec = {"holderIdentity": identity, "leaseDurationSeconds": duration_s, "acquireTime": stamp,
                "leaseTransitions": transitions}
    spec["renewTime"] = stamp
    metadata = dict((lease or {}).get("metadata") or {"name": name})
    return {"apiVersion": "coordination.k8s.io/v1", "kind": "Lease", "metadata": metadata, "spec": spec}


@dataclass
class LeaseClient:
    """Reads and writes one Lease through a ``CoordinationV1Api``."""

    api: Any
    namespace: str
    name: str

    def read(self) -> dict[str, Any] | None:
        try:
            lease = self.api.read_namespaced_lease(self.name, self.namespace)
        except ApiException as exc:
            if exc.status == 404:
                return None
            raise
        return dict(self.api.api_client.sanitize_for_serialization(lease))

    def write(self, action: Action, body: dict[str, Any]) -> bool:
        """False when another candidate wrote first (a conflict)."""
        try:
            if action == "create":
                self.api.create_namespaced_lease(self.namespace, body)
            else:
                self.api.replace_namespaced_lease(self.name, self.namespace, body)
        except ApiException as exc:
            if exc.status in (409, 422):
                return False
            raise
        return True


class LeaderElector:
    def __init__(self, lease: LeaseClient, identity: str, duration_s: int, renew_s: float,
                 on_lost: Callable[[], None], clock: Callable[[], datetime] = lambda: datetime.now(UTC)) -> None:
        self.lease, self.identity = lease, identity
        self.duration_s, self.renew_s = duration_s, renew_s
        self.on_lost, self.clock = on_lost, clock
        self._stop = threading.Event()
        self._held_until: datetime | None = None
        self._seen: tuple[Any, datetime] | None = None  # the other holder's record, and when it was first seen

    def _renewed_at(self, lease: dict[str, Any] | None, now: datetime) -> datetime | None:
        spec = (lease or {}).get("spec") or {}
        record = (spec.get("holderIdentity"), str(spec.get("renewTime")), spec.get("leaseTransitions"))
        if self._seen is None or self._seen[0] != record:
            self._seen = (record, now)
        return self._seen[1]

    def try_once(self) -> bool:
        """One round: True when this candidate holds the lease afterwards."""
        current = self.lease.read()
        now = self.clock()
        action = decide(current, self.identity, now, self._renewed_at(current, now))
        if action == "wait":
            return False
        if self.lease.write(action, next_lease(current, action, self.identity, self.duration_s, now, self.lease.name)):
            if action != "renew":
                logger.info("leader election: %s now holds lease %s (%s)", self.identity, self.lease.name, action)
            self._held_until = now + timedelta(seconds=self.duration_s)
            return True
        return False

    def acquire(self, poll_s: float | None = None) -> None:
        """Block until this candidate holds the lease (or :meth:`stop` is called)."""
        poll = poll_s if poll_s is not None else self.renew_s
        while not self._stop.is_set():
            try:
                if self.try_once():
                    return
            except Exception as exc:  # an API error while standing by: try again later
                logger.warning("leader election: cannot read or write lease %s: %s", self.lease.name, exc)
            self._stop.wait(poll)

    def keep_renewing(self) -> threading.Thread:
        thread = threading.Thread(target=self._renew_loop, name="lease-renewer", daemon=True)
        thread.start()
        return thread

    def _renew_loop(self) -> None:
        while not self._stop.wait(self.renew_s):
            try:
                if self.try_once():
                    continue
                reason = "another replica holds the lease"
            except Exception as exc:  # keep trying while the lease is still ours
                reason = f"renewal failed: {exc}"
                if self._held_until is not None and self.clock() < self._held_until:
                    logger.warning("leader election: %s; retrying", reason)
                    continue
            logger.critical("leader election: lost lease %s (%s); stopping", self.lease.name, reason)
            self.on_lost()
            return

    def stop(self) -> None:
        self._stop.set()


class StandbyHealth:
    """Answers the liveness probe while a replica stands by (the operator's own endpoint starts
    only once it leads), so a healthy standby is not restarted."""

    def __init__(self, port: int) -> None:
        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                body = b'{"standby": true}'
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *_: Any) -> None:
                return

        http.server.ThreadingHTTPServer.allow_reuse_address = True
        self.server = http.server.ThreadingHTTPServer(("0.0.0.0", port), Handler)
        self.thread = threading.Thread(target=self.server.serve_forever, name="standby-health", daemon=True)
        self.thread.start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


SERVICE_ACCOUNT_NAMESPACE = "/var/run/secrets/kubernetes.io/serviceaccount/namespace"


def lease_namespace(configured: str, namespace_file: str = SERVICE_ACCOUNT_NAMESPACE) -> str:
    if configured:
        return configured
    try:
        with open(namespace_file, encoding="utf-8") as handle:
            return handle.read().strip() or "default"
    except OSError:
        return "default"


def default_identity() -> str:
    import socket
    import uuid

    return f"{socket.gethostname()}-{uuid.uuid4().hex[:6]}"


def lead(settings: Any, coordination_api: Any, on_lost: Callable[[], None]) -> LeaderElector:
    """Stand by until this replica holds the Lease, then keep it renewed in the background."""
    lease = LeaseClient(coordination_api, lease_namespace(settings.lease_namespace), settings.lease_name)
    identity = settings.identity or default_identity()
    elector = LeaderElector(lease, identity, settings.lease_duration_s, settings.lease_renew_s, on_lost)
    health = StandbyHealth(settings.standby_health_port) if settings.standby_health_port else None
    logger.info("leader election: %s standing by for lease %s/%s", identity, lease.namespace, lease.name)
    try:
        elector.acquire(poll_s=min(settings.lease_renew_s, 2.0))
    finally:
        if health is not None:
            health.close()
    elector.keep_renewing()
    return elector
