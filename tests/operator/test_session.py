"""A session pod's two halves for real, without a cluster: the run container's step loop (the
operator's wrapper and loop scripts, in the local bubblewrap sandbox with the io volume bound
where the pod mounts it) and the relay (in a thread, on a real store), driven through the step
channel as the session client drives them."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from skillgym_core.errors import ArtifactNotFound, StoreError
from skillgym_core.sandbox import steps
from skillgym_core.sandbox.base import Limits, Mount, SandboxResult
from skillgym_core.sandbox.local import LocalSandbox
from skillgym_core.store.base import get_json, put_json
from skillgym_core.store.local import LocalStore
from skillgym_operator.builders.sandbox import RUN_WRAPPER
from skillgym_operator.resources import IO_DIR
from skillgym_operator.session import STEP_LOOP, Relay

pytestmark = pytest.mark.integration

CHANNEL = "sandbox/runs/s1/session"
OUTPUT_BYTES = 1000


@dataclass
class Pod:
    store: LocalStore
    io: Path
    workspace: Path
    relay: threading.Thread
    shell: threading.Thread
    box: dict[str, Any]

    def ask(self, step: int, command: str, timeout_s: float = 10, stdin: bytes | None = None) -> steps.StepReply:
        put_json(self.store, steps.request_key(CHANNEL, step), steps.StepRequest.make(command, timeout_s, stdin).body())
        deadline = time.monotonic() + timeout_s + 20
        while time.monotonic() < deadline:
            try:
                return steps.StepReply.model_validate(get_json(self.store, steps.reply_key(CHANNEL, step)))
            except ArtifactNotFound:
                time.sleep(0.02)
        raise AssertionError(f"no reply to step {step}")

    def stop(self) -> None:
        self.store.put_bytes(steps.stop_key(CHANNEL), b"")
        self.relay.join(30)
        self.shell.join(30)


def _start(tmp_path: Path, idle_s: int = 60) -> Pod:
    store, io, workspace = LocalStore(tmp_path / "store"), tmp_path / "io", tmp_path / "ws"
    io.mkdir()
    workspace.mkdir()
    box: dict[str, Any] = {}
    plan = {"session": {"channel": CHANNEL, "idleSeconds": idle_s}, "outputBytes": OUTPUT_BYTES}

    def relay() -> None:
        box["relay"] = Relay(plan, store, io).serve()

    def shell() -> None:
        box["shell"] = LocalSandbox().run(
            ["/bin/sh", "-c", RUN_WRAPPER, "sandbox", "/bin/sh", "-c", STEP_LOOP, "session", "bash", "-lc"],
            mounts=[Mount(io, IO_DIR, writable=True), Mount(workspace, "/app", writable=True)], workdir="/app",
            env={"SKILLGYM_WALL_SECONDS": "120", "SKILLGYM_STEP_OUTPUT_BYTES": str(OUTPUT_BYTES), "HOME": "/tmp"},
            limits=Limits(wall_s=130),
        )  # fmt: skip

    threads = [threading.Thread(target=relay, daemon=True), threading.Thread(target=shell, daemon=True)]
    for thread in threads:
        thread.start()
    return Pod(store, io, workspace, threads[0], threads[1], box)


@pytest.fixture
def pod(tmp_path: Path) -> Iterator[Pod]:
    running = _start(tmp_path)
    yield running
    running.stop()


def test_steps_share_the_pods_files_and_each_gets_its_own_result(pod: Pod) -> None:
    first = pod.ask(1, "echo hello > note.txt; echo done; echo warn >&2; exit 3")
    assert (first.outcome, first.exit_code, first.stdout, first.stderr) == ("ok", 3, "done\n", "warn\n")
    second = pod.ask(2, "cat note.txt; cat > copy.txt; cat copy.txt", stdin=b"from stdin\n")
    assert (second.exit_code, second.stdout) == (0, "hello\nfrom stdin\n")
    assert (pod.workspace / "copy.txt").read_text() == "from stdin\n"


def test_a_step_past_its_timeout_is_killed_with_its_children_and_the_next_one_runs(pod: Pod) -> None:
    began = time.monotonic()
    late = pod.ask(1, "sleep 60 & sleep 60; echo never", timeout_s=1)
    assert (late.outcome, late.exit_code, late.stdout) == ("timeout", None, "")
    assert time.monotonic() - began < 15
    assert pod.ask(2, "pgrep -c -f '^sleep 60' || true").stdout.strip() == "0"  # the whole group went
    assert pod.ask(3, "echo alive").stdout == "alive\n"


def test_output_is_capped_and_marked(pod: Pod) -> None:
    reply = pod.ask(1, "yes | head -c 5000; yes err | head -c 3000 >&2")
    assert reply.truncated and len(reply.stdout) == OUTPUT_BYTES and len(reply.stderr) == OUTPUT_BYTES


def test_links_planted_in_the_io_volume_never_lead_the_relay_out(pod: Pod, tmp_path: Path) -> None:
    secret = tmp_path / "outside"
    secret.mkdir()
    (secret / "stdout").write_text("relay-side secret\n")
    (secret / "done").write_text("")
    steps_dir = f"{IO_DIR}/steps"
    # Step 1 swaps its own step directory and output for links to a folder only the relay's side has.
    # The loop then cannot mark the step done, so the relay gives up on it after its timeout.
    reply = pod.ask(1, f"mv {steps_dir}/1 {steps_dir}/1.moved; ln -s {secret} {steps_dir}/1; "
                       f"ln -sf {secret}/stdout {steps_dir}/1.moved/stdout; echo mine", timeout_s=1)  # fmt: skip
    assert "secret" not in reply.stdout + reply.stderr and reply.outcome == "error"
    # ... and plants a link where step 2's directory will be made.
    pod.ask(2, f"ln -s {secret} {steps_dir}/3")
    third = pod.ask(3, "echo three")
    assert (third.outcome, third.stdout) == ("ok", "three\n")
    assert sorted(p.name for p in secret.iterdir()) == ["done", "stdout"]  # nothing written there


def test_stop_ends_the_loop_and_the_relay(tmp_path: Path) -> None:
    pod = _start(tmp_path)
    assert pod.ask(1, "true").exit_code == 0
    pod.stop()
    assert pod.box["relay"] == "stopped"
    shell: SandboxResult = pod.box["shell"]
    assert shell.exit_code == 0 and (pod.io / "exit_code").read_text().strip() == "0"


def test_an_idle_session_ends_itself(tmp_path: Path) -> None:
    pod = _start(tmp_path, idle_s=1)
    pod.relay.join(30)
    pod.shell.join(30)
    assert pod.box["relay"] == "idle" and pod.box["shell"].exit_code == 0


class OutageStore(LocalStore):
    """A store that cannot be reached for its first ``failures`` reads."""

    def __init__(self, root: Path, failures: int) -> None:
        super().__init__(root)
        self.failures = failures

    def get_bytes(self, key: str) -> bytes:
        if self.failures > 0:
            self.failures -= 1
            raise StoreError("connection refused")
        return super().get_bytes(key)


def test_the_relay_waits_out_a_store_outage(tmp_path: Path) -> None:
    store, io = OutageStore(tmp_path / "store", failures=3), tmp_path / "io"
    io.mkdir()
    plan = {"session": {"channel": CHANNEL, "idleSeconds": 30}, "outputBytes": OUTPUT_BYTES}
    relay = Relay(plan, store, io)
    stop = threading.Timer(4.0, lambda: store.put_bytes(steps.stop_key(CHANNEL), b""))
    stop.start()
    assert relay.serve() == "stopped" and store.failures == 0  # kept polling through the failed reads
