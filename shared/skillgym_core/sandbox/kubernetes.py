"""Kubernetes sandbox: each run becomes a ``SandboxRun`` resource that the SkillGym operator turns
into a locked-down pod. Mount contents travel through the store (content-addressed archives in,
result archives out); this client creates the resource, follows it with a watch until it is
terminal, copies writable mounts back to the host paths and maps the status to a result.

The pod's writable paths (each mount, ``/tmp``) are emptyDirs capped at the run's
``ephemeralStorageMb``, which also caps the pod's total disk use: room to write (the task's
``storage_mb`` when given, else ``file_size_mb`` x 4) plus the unpacked size of the mounts
fetched into it."""

from __future__ import annotations

import logging
import math
import os
import shutil
import tempfile
import time
import uuid
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import urllib3
from pydantic import Field

from skillgym_core import keys
from skillgym_core.archive import pack_dir, unpack_dir
from skillgym_core.errors import ArtifactNotFound, SandboxError
from skillgym_core.ids import sha256_hex
from skillgym_core.metrics import SANDBOX_RUNS, SANDBOX_SECONDS
from skillgym_core.sandbox.base import BuildContext, ImageRoot, Limits, Mount, Outcome, RootMarker, SandboxResult
from skillgym_core.sandbox.bwrap import check_target, untrusted_runner_source
from skillgym_core.settings import CommonSettings
from skillgym_core.store.base import Store, get_json

GROUP, VERSION, PLURAL, KIND = "skillgym.io", "v1alpha1", "sandboxruns", "SandboxRun"
# the confining runner a verifier uses on agent-written code, shipped into every pod as a volume
RUNNER_DIR = "/opt/skillgym/runner"
RUNNER_PATH = f"{RUNNER_DIR}/run-untrusted"
TERMINAL = frozenset({"Succeeded", "Failed"})
OUTCOMES = {
    "ok": Outcome.OK,
    "timeout": Outcome.TIMEOUT,
    "oom": Outcome.OOM,
    "killed": Outcome.KILLED,
    "error": Outcome.SANDBOX_ERROR,
}
log = logging.getLogger(__name__)
SERVICE_ACCOUNT_NAMESPACE = Path("/var/run/secrets/kubernetes.io/serviceaccount/namespace")

# An API server restarting or shedding load answers these for a moment.
RETRIABLE_STATUSES = frozenset({429, 500, 502, 503, 504})


def waiting_note(status: dict[str, Any]) -> str:
    """What a run's status says it last waited on (``"; it was Pending (Unschedulable): 0/3 nodes
    are available ..."``), for errors that would otherwise only say that time ran out."""
    phase = status.get("phase")
    if not phase:
        return ""
    reason = f" ({status['reason']})" if status.get("reason") else ""
    message = f": {status['message']}" if status.get("message") else ""
    return f"; it was {phase}{reason}{message}"


class KubernetesSandboxSettings(CommonSettings):
    k8s_namespace: str = Field("", description="namespace for SandboxRuns; empty: the pod's own, else default")
    k8s_sandbox_image: str = Field("", description="task image; empty lets the operator use its default")
    k8s_start_slack_s: float = Field(600.0, description="time allowed beyond the wall limit (scheduling, pulls)")
    k8s_keep_runs: bool = Field(False, description="keep finished SandboxRun resources for inspection")


def unpacked_mb(root: Path) -> int:
    """MiB the regular files under ``root`` take once unpacked into the pod (links are not packed)."""
    total = sum(path.stat().st_size for path in root.rglob("*") if path.is_file() and not path.is_symlink())
    return math.ceil(total / 2**20)


def _default_namespace() -> str:
    if SERVICE_ACCOUNT_NAMESPACE.is_file():
        return SERVICE_ACCOUNT_NAMESPACE.read_text().strip()
    return "default"


def build_spec(root: BuildContext) -> dict[str, str]:
    """What the operator builds the run's image from."""
    build = {"contextKey": root.context_key} if root.context_key else {"baseImage": root.base_image}
    return {**build, **({"user": root.user} if root.user else {})}


def split_root(mounts: Sequence[Mount]) -> tuple[list[Mount], RootMarker | None]:
    """The real mounts, and the last marker of what the run's root filesystem is (if any)."""
    roots = [m for m in mounts if isinstance(m, RootMarker)]
    return [m for m in mounts if not isinstance(m, RootMarker)], (roots[-1] if roots else None)


class KubernetesSandbox:
    name = "kubernetes"

    def __init__(
        self,
        store: Store,
        *,
        namespace: str = "default",
        image: str | None = None,
        build_context_key: str | None = None,
        api_client: Any = None,
        start_slack_s: float = 600.0,
        keep_runs: bool = False,
    ) -> None:
        import kubernetes

        self.store = store
        self.namespace = namespace
        self.image = image or None
        self.build_context_key = build_context_key
        self.start_slack_s = start_slack_s
        self.keep_runs = keep_runs
        self.api = kubernetes.client.CustomObjectsApi(api_client)
        self._watch_factory = kubernetes.watch.Watch
        self._runner_key: str | None = None

    @classmethod
    def from_environment(cls, settings: KubernetesSandboxSettings | None = None) -> KubernetesSandbox:
        import kubernetes

        from skillgym_core.store.factory import make_store

        settings = settings or KubernetesSandboxSettings()
        try:
            kubernetes.config.load_incluster_config()
        except kubernetes.config.ConfigException:
            kubernetes.config.load_kube_config(config_file=os.environ.get("KUBECONFIG"))
        return cls(
            make_store(settings),
            namespace=settings.k8s_namespace or _default_namespace(),
            image=settings.k8s_sandbox_image or None,
            start_slack_s=settings.k8s_start_slack_s,
            keep_runs=settings.k8s_keep_runs,
        )

    def with_environment(self, environment_dir: Path) -> KubernetesSandbox:
        """A sandbox whose runs use the image built from ``environment_dir`` (its Dockerfile)."""
        data = pack_dir(environment_dir)
        key = keys.sandbox_input(sha256_hex(data))
        if not self.store.exists(key):
            self.store.put_bytes(key, data, "application/gzip")
        clone = object.__new__(KubernetesSandbox)
        clone.__dict__.update(self.__dict__)
        clone.image, clone.build_context_key = None, key
        return clone

    def describe(self) -> dict[str, Any]:
        return {
            "backend": self.name,
            "namespace": self.namespace,
            "image": self.image,
            "build_context_key": self.build_context_key,
            "store": self.store.describe(),
        }

    def run(
        self,
        command: Sequence[str],
        *,
        mounts: Sequence[Mount],
        workdir: str = "/app",
        env: Mapping[str, str] | None = None,
        limits: Limits | None = None,
        stdin: bytes | None = None,
    ) -> SandboxResult:
        limits = limits or Limits()
        started = time.monotonic()
        run_name = f"sbx-{uuid.uuid4().hex[:16]}"
        try:
            result = self._run(run_name, command, mounts, workdir, env or {}, limits, stdin, started)
        except SandboxError as exc:
            result = SandboxResult(
                Outcome.SANDBOX_ERROR, None, "", str(exc), time.monotonic() - started, detail=exc.to_dict()
            )
        finally:
            self.cleanup(run_name)
        SANDBOX_RUNS.labels(self.name, result.outcome.value).inc()
        SANDBOX_SECONDS.labels(self.name).observe(result.duration_s)
        return result

    def manifest(
        self,
        run_name: str,
        command: Sequence[str],
        mount_specs: list[dict[str, Any]],
        workdir: str,
        env: Mapping[str, str],
        limits: Limits,
        stdin_key: str | None,
        input_mb: int = 0,
        root: RootMarker | None = None,
    ) -> dict[str, Any]:
        """The SandboxRun; ``root`` (a task's image, or its build context) overrides the sandbox's own."""
        spec: dict[str, Any] = {
            "command": list(command),
            "workdir": workdir,
            "env": [{"name": k, "value": v} for k, v in sorted(env.items())],
            "mounts": mount_specs,
            "outputPrefix": keys.sandbox_run(run_name).rstrip("/"),
            "limits": {
                "cpu": str(limits.cpus or 1),
                "memoryMb": limits.memory_mb,
                "pids": limits.pids,
                "wallSeconds": limits.wall_s,
                "outputBytes": limits.output_bytes,
                "ephemeralStorageMb": max(64, limits.storage_mb or limits.file_size_mb * 4) + input_mb,
            },
        }
        if isinstance(root, ImageRoot):
            spec["image"] = root.image
        elif isinstance(root, BuildContext):
            spec["build"] = build_spec(root)
        elif self.image:
            spec["image"] = self.image
        elif self.build_context_key:
            spec["build"] = {"contextKey": self.build_context_key}
        if stdin_key:
            spec["stdinKey"] = stdin_key
        if isinstance(root, (ImageRoot, BuildContext)) and root.network:
            spec["network"] = "public"
        return {
            "apiVersion": f"{GROUP}/{VERSION}",
            "kind": KIND,
            "metadata": {
                "name": run_name,
                "namespace": self.namespace,
                "labels": {"app.kubernetes.io/part-of": "skillgym", "app.kubernetes.io/component": "sandbox"},
            },
            "spec": spec,
        }

    def _upload(self, data: bytes) -> str:
        key = keys.sandbox_input(sha256_hex(data))
        if not self.store.exists(key):
            self.store.put_bytes(key, data, "application/gzip")
        return key

    def _run(
        self,
        run_name: str,
        command: Sequence[str],
        mounts: Sequence[Mount],
        workdir: str,
        env: Mapping[str, str],
        limits: Limits,
        stdin: bytes | None,
        started: float,
    ) -> SandboxResult:
        mounts, root = split_root(mounts)
        mount_specs, input_mb = self.mount_specs(run_name, mounts)
        stdin_key = None
        if stdin is not None:
            stdin_key = keys.sandbox_run(run_name, "stdin")
            self.store.put_bytes(stdin_key, stdin)
        env = {**env, "SKILLGYM_RUN_UNTRUSTED": RUNNER_PATH}
        body = self.manifest(run_name, command, [*mount_specs, self._runner_spec()], workdir, env, limits, stdin_key,
                             input_mb + 1, root)
        self.create_run(body)
        status = self.wait(run_name, limits.wall_s + self.start_slack_s)
        return self.result(status, mounts, mount_specs, time.monotonic() - started, run_name)

    def mount_specs(self, run_name: str, mounts: Sequence[Mount]) -> tuple[list[dict[str, Any]], int]:
        """Each mount uploaded (content-addressed) as the run spec names it, and the MiB they unpack to."""
        specs: list[dict[str, Any]] = []
        input_mb = 0
        for index, mount in enumerate(mounts):
            if not Path(mount.host).is_dir():
                raise SandboxError(f"mount source is not a directory: {mount.host}", reason="bad_mount")
            target = check_target(mount.target)
            input_mb += unpacked_mb(Path(mount.host))
            item: dict[str, Any] = {"target": target, "key": self._upload(pack_dir(Path(mount.host)))}
            if mount.writable:
                item.update(writable=True, resultKey=keys.sandbox_run(run_name, f"mounts/{index}.tar.gz"))
            specs.append(item)
        return specs, input_mb

    def _runner_spec(self) -> dict[str, Any]:
        """The runner's read-only volume (uploaded once per store, content-addressed)."""
        if self._runner_key is None:
            with tempfile.TemporaryDirectory(prefix="skillgym-runner-") as folder:
                runner = Path(folder) / "run-untrusted"
                runner.write_bytes(untrusted_runner_source().read_bytes())
                runner.chmod(0o755)
                self._runner_key = self._upload(pack_dir(Path(folder)))
        return {"target": RUNNER_DIR, "key": self._runner_key}

    def create_run(self, body: dict[str, Any]) -> None:
        self.api.create_namespaced_custom_object(GROUP, VERSION, self.namespace, PLURAL, body)

    def wait(self, run_name: str, timeout_s: float) -> dict[str, Any]:
        """Follow the run with a watch until its phase is terminal; return its status."""
        from kubernetes.client.exceptions import ApiException

        deadline = time.monotonic() + timeout_s
        last: dict[str, Any] = {}
        while (remaining := deadline - time.monotonic()) > 0:
            watch = self._watch_factory()
            try:
                for event in watch.stream(
                    self.api.list_namespaced_custom_object,
                    GROUP,
                    VERSION,
                    self.namespace,
                    PLURAL,
                    field_selector=f"metadata.name={run_name}",
                    timeout_seconds=max(1, int(min(remaining, 300))),
                    _request_timeout=max(1.0, min(remaining, 300.0)) + 5,
                ):
                    obj = event.get("object") or {}
                    if (obj.get("metadata") or {}).get("name") != run_name:
                        continue
                    if event.get("type") == "DELETED":
                        raise SandboxError("the SandboxRun was deleted while running", reason="run_deleted")
                    last = obj.get("status") or {}
                    if last.get("phase") in TERMINAL:
                        return last
                    if time.monotonic() >= deadline:
                        break
            except (urllib3.exceptions.ReadTimeoutError, urllib3.exceptions.ProtocolError):
                continue  # an idle or dropped watch: open a new one while time remains
            except urllib3.exceptions.MaxRetryError:
                time.sleep(min(1.0, max(0.0, deadline - time.monotonic())))
                continue  # the API server cannot be reached (restarting): try again while time remains
            except ApiException as exc:
                if exc.status not in RETRIABLE_STATUSES:
                    raise
                time.sleep(min(1.0, max(0.0, deadline - time.monotonic())))
                continue  # not ready yet after a restart, or shedding load
            finally:
                watch.stop()
        raise SandboxError(
            f"SandboxRun {run_name} did not finish in {timeout_s:.0f}s{waiting_note(last)}",
            reason="run_deadline",
            last_phase=last.get("phase"),
            last_reason=last.get("reason"),
        )

    def result(
        self,
        status: dict[str, Any],
        mounts: Sequence[Mount],
        mount_specs: list[dict[str, Any]],
        duration_s: float,
        run_name: str,
    ) -> SandboxResult:
        outcome = OUTCOMES.get(str(status.get("outcome")), Outcome.SANDBOX_ERROR)
        detail = {
            "run": run_name,
            "attempt": status.get("attempt"),
            "pod": status.get("podName"),
            "image": status.get("image"),
            "reason": status.get("reason"),
            "message": status.get("message"),
        }
        artifacts = status.get("artifacts") or {}
        if outcome is Outcome.SANDBOX_ERROR or not artifacts:
            return SandboxResult(
                Outcome.SANDBOX_ERROR, None, "", str(status.get("message") or ""), duration_s, detail=detail
            )
        try:
            stdout = self.store.get_bytes(artifacts["stdout"]).decode(errors="replace")
            stderr = self.store.get_bytes(artifacts["stderr"]).decode(errors="replace")
            record = get_json(self.store, artifacts["result"])
            for mount, spec in zip(mounts, mount_specs, strict=True):
                if spec.get("resultKey"):
                    self._copy_back(Path(mount.host), self.store.get_bytes(spec["resultKey"]))
        except (ArtifactNotFound, KeyError) as exc:
            detail["missing"] = str(exc)
            return SandboxResult(Outcome.SANDBOX_ERROR, None, "", "run results missing", duration_s, detail=detail)
        truncated = bool(record.get("truncated"))
        exit_code = status.get("exitCode")
        if truncated and outcome is Outcome.OK:
            outcome = Outcome.OUTPUT_LIMIT
        if outcome in (Outcome.TIMEOUT, Outcome.OUTPUT_LIMIT):
            exit_code = None
        return SandboxResult(
            outcome,
            None if exit_code is None else int(exit_code),
            stdout,
            stderr,
            duration_s,
            truncated=truncated,
            detail=detail,
        )

    @staticmethod
    def _copy_back(host: Path, archive: bytes) -> None:
        for child in host.iterdir():
            if child.is_dir() and not child.is_symlink():
                shutil.rmtree(child)
            else:
                child.unlink()
        unpack_dir(archive, host)

    def cleanup(self, run_name: str) -> None:
        if self.keep_runs:
            return
        from kubernetes.client.exceptions import ApiException

        try:
            self.api.delete_namespaced_custom_object(GROUP, VERSION, self.namespace, PLURAL, run_name)
        except ApiException as exc:
            if exc.status != 404:
                log.warning("could not delete SandboxRun %s: %s", run_name, exc.reason)
        for key in list(self.store.list(keys.sandbox_run(run_name))):
            self.store.delete(key)
