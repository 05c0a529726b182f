"""A warm sandbox pod for a whole session: one ``SandboxRun`` with ``spec.session``, whose pod
keeps its mounts and processes between commands. Commands travel through the store
(:mod:`skillgym_core.sandbox.steps`): the client writes step ``n``'s request, a relay container
in the pod (the one holding store credentials) hands it to the run container's step loop and
writes the reply. Closing writes ``stop``; the pod's run container then exits and its push
container uploads the writable mounts as for any run, which the client copies back."""

from __future__ import annotations

import time
import uuid
from collections.abc import Mapping, Sequence
from typing import Any

from kubernetes.client.exceptions import ApiException
from pydantic import ValidationError

from skillgym_core import keys
from skillgym_core.errors import ArtifactNotFound, SandboxError
from skillgym_core.metrics import SANDBOX_RUNS, SANDBOX_SECONDS
from skillgym_core.sandbox import steps
from skillgym_core.sandbox.base import Limits, Mount, Outcome, SandboxResult
from skillgym_core.sandbox.kubernetes import (
    GROUP,
    PLURAL,
    TERMINAL,
    VERSION,
    KubernetesSandbox,
    split_root,
    waiting_note,
)
from skillgym_core.store.base import get_json, put_json

REPLY_SLACK_S = 30.0  # a step's reply may take this long beyond its own timeout (store round trips)
STATUS_EVERY_S = 2.0  # how often a waiting step checks that the session's pod still lives
OUTCOMES = {"ok": Outcome.OK, "timeout": Outcome.TIMEOUT, "error": Outcome.SANDBOX_ERROR}


class KubernetesSession:
    name = "kubernetes-session"

    def __init__(self, sandbox: KubernetesSandbox, run_name: str, mounts: Sequence[Mount],
                 mount_specs: list[dict[str, Any]], next_step: int, started: bool) -> None:  # fmt: skip
        self.sandbox, self.run_name = sandbox, run_name
        self.mounts, self.mount_specs = list(mounts), mount_specs
        self.channel = keys.sandbox_run(run_name, "session").rstrip("/")
        self.next_step = next_step
        self.started = started  # whether a reply has come back yet (the pod is up)
        self.closed = False

    @classmethod
    def open(
        cls,
        sandbox: KubernetesSandbox,
        *,
        mounts: Sequence[Mount],
        workdir: str,
        env: Mapping[str, str],
        limits: Limits,
        idle_s: float,
        shell: Sequence[str],
    ) -> KubernetesSession:
        run_name = f"sbs-{uuid.uuid4().hex[:16]}"
        mounts, root = split_root(mounts)
        mount_specs, input_mb = sandbox.mount_specs(run_name, mounts)
        body = sandbox.manifest(run_name, list(shell), mount_specs, workdir, env, limits, None, input_mb, root)
        session = cls(sandbox, run_name, mounts, mount_specs, 1, False)
        body["spec"]["session"] = {"channel": session.channel, "idleSeconds": max(1, int(idle_s))}
        sandbox.create_run(body)
        return session

    @classmethod
    def resume(
        cls, sandbox: KubernetesSandbox, record: Mapping[str, Any], *, mounts: Sequence[Mount]
    ) -> KubernetesSession:
        run_name = str(record["run"])
        session = cls(sandbox, run_name, split_root(mounts)[0], list(record["mountSpecs"]), 1, True)
        sent = [n for key in sandbox.store.list(steps.steps_prefix(session.channel)) if (n := steps.step_of(key))]
        session.next_step = max(sent, default=0) + 1
        phase = session._status().get("phase", "Gone")
        if phase in TERMINAL or phase == "Gone":
            raise SandboxError(f"session {run_name} ended ({phase}) while no one followed it", reason="session_lost")
        return session

    def record(self) -> dict[str, Any]:
        return {"kind": "kubernetes", "run": self.run_name, "mountSpecs": self.mount_specs}

    def run(self, command: str, *, timeout_s: float, stdin: bytes | None = None) -> SandboxResult:
        if self.closed:
            raise SandboxError(f"session {self.run_name} is closed", reason="session_closed")
        step, began = self.next_step, time.monotonic()
        self.next_step += 1
        put_json(self.sandbox.store, steps.request_key(self.channel, step),
                 steps.StepRequest.make(command, timeout_s, stdin).body())  # fmt: skip
        patience = timeout_s + REPLY_SLACK_S + (0.0 if self.started else self.sandbox.start_slack_s)
        try:
            reply = self._await_reply(step, began + patience)
        except SandboxError as exc:
            result = SandboxResult(Outcome.SANDBOX_ERROR, None, "", str(exc), time.monotonic() - began,
                                   detail=exc.to_dict())  # fmt: skip
        else:
            self.started = True
            result = self._result(reply, time.monotonic() - began)
        SANDBOX_RUNS.labels(self.name, result.outcome.value).inc()
        SANDBOX_SECONDS.labels(self.name).observe(result.duration_s)
        return result

    def close(self, *, keep_files: bool = True) -> None:
        """Stop the pod; with ``keep_files`` wait for its upload and copy the writable mounts back
        (:class:`SandboxError` if that fails). The run and its store objects are removed either way."""
        if self.closed:
            return
        self.closed = True
        try:
            self.sandbox.store.put_bytes(steps.stop_key(self.channel), b"")
            if keep_files:
                status = self.sandbox.wait(self.run_name, REPLY_SLACK_S + self.sandbox.start_slack_s)
                final = self.sandbox.result(status, self.mounts, self.mount_specs, 0.0, self.run_name)
                if final.outcome is Outcome.SANDBOX_ERROR:
                    raise SandboxError(f"session {self.run_name} could not hand its files back: {final.stderr}",
                                       reason="session_files_lost", **final.detail)  # fmt: skip
        finally:
            self.sandbox.cleanup(self.run_name)

    def _await_reply(self, step: int, deadline: float) -> dict[str, Any]:
        key = steps.reply_key(self.channel, step)
        pause, checked = 0.01, time.monotonic()
        status: dict[str, Any] = {}
        while time.monotonic() < deadline:
            try:
                return dict(get_json(self.sandbox.store, key))
            except ArtifactNotFound:
                pass
            if time.monotonic() - checked >= STATUS_EVERY_S:
                checked = time.monotonic()
                status = self._status()
                phase = status.get("phase", "Gone")
                if phase in TERMINAL or phase == "Gone":
                    raise SandboxError(f"session {self.run_name} ended ({phase}) before step {step} was answered",
                                       reason="session_ended")  # fmt: skip
            time.sleep(pause)
            pause = min(0.2, pause * 1.5)
        raise SandboxError(f"no reply to step {step} of session {self.run_name} in time{waiting_note(status)}",
                           reason="step_deadline")  # fmt: skip

    def _status(self) -> dict[str, Any]:
        """The run's status (phase "Pending" until the operator writes one, "Unknown" when the API
        cannot be read), ``{}`` once the run is deleted. Read by listing: the client's role has no get."""
        try:
            listed: Any = self.sandbox.api.list_namespaced_custom_object(
                GROUP, VERSION, self.sandbox.namespace, PLURAL, field_selector=f"metadata.name={self.run_name}")
        except ApiException:
            return {"phase": "Unknown"}
        # Filtered here too: a server may ignore the field selector.
        items = [i for i in listed.get("items") or [] if (i.get("metadata") or {}).get("name") == self.run_name]
        if not items:
            return {}
        status = dict(items[0].get("status") or {})
        return {**status, "phase": str(status.get("phase") or "Pending")}

    def _result(self, body: dict[str, Any], duration_s: float) -> SandboxResult:
        try:
            reply = steps.StepReply.model_validate(body)
        except ValidationError as exc:
            return SandboxResult(Outcome.SANDBOX_ERROR, None, "", f"malformed step reply: {exc}", duration_s)
        outcome = OUTCOMES[reply.outcome]
        exit_code = reply.exit_code
        if reply.truncated and outcome is Outcome.OK:
            outcome = Outcome.OUTPUT_LIMIT
        if outcome is not Outcome.OK:
            exit_code = None
        detail = {"session": self.run_name, "message": reply.message} if reply.message else {"session": self.run_name}
        return SandboxResult(outcome, exit_code, reply.stdout, reply.stderr, duration_s, truncated=reply.truncated,
                             detail=detail)  # fmt: skip

