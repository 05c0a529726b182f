"""The pod for one SandboxRun attempt (the NetworkPolicies over such pods: :mod:`.network`).

Layout inside the pod: an init container (runner image) fetches every mount's archive and the
stdin from the store into emptyDir volumes; the ``run`` container (task image) executes the
command through a POSIX-sh wrapper that enforces the wall timeout, captures stdout/stderr and
writes the outcome as its termination message; the ``push`` sidecar (runner image) waits for the
exit code, then uploads writable mounts, output and a result record.

Every container follows :mod:`skillgym_operator.builders.policy` (non-root, no capabilities, a
read-only root); what the command may write is size-capped emptyDirs: its mounts, ``/tmp``, the
I/O directory and, when no mount covers it, the working directory.

One pod runs one phase. The agent and the verifier are separate SandboxRuns and so separate
pods: the verifier's pod gets a fresh copy of the workspace and its own ``/logs`` volume, which no
container of an agent's pod ever mounts, so nothing the agent runs can write the verifier's
results. Inside a pod only ``run`` executes untrusted code; ``push`` holds store credentials and
reads what ``run`` wrote read-only and without following links
(see :mod:`skillgym_operator.untrusted_files`)."""

from __future__ import annotations

import json
import math
from typing import Any

from skillgym_operator.builders.common import (
    isolated_pod_fields,
    labels,
    owner_reference,
    restricted_pod_security_context,
    restricted_security_context,
    size_limited_empty_dir,
    store_env_from,
)
from skillgym_operator.resources import (
    FETCH_CONTAINER,
    IO_DIR,
    LABEL_ATTEMPT,
    LABEL_NETWORK,
    LABEL_ROLE,
    LABEL_RUN,
    MOUNTS_DIR,
    NETWORK_PUBLIC,
    OUTCOME_FILE,
    PLAN_ENV,
    PUSH_CONTAINER,
    RELAY_CONTAINER,
    RUN_CONTAINER,
)
from skillgym_operator.session import STEP_LOOP
from skillgym_operator.settings import OperatorSettings
from skillgym_operator.spec import SandboxRunSpec

WORKDIR_VOLUME = "workdir"

# $1.. is the command. The wrapper is the container's PID 1, so on timeout ``kill -1`` takes down
# every other process in the container (the whole command tree) and leaves the wrapper to report;
# the outcome file doubles as the container's termination message.
RUN_WRAPPER = (
    f"io={IO_DIR}\n"
    + """\
in=/dev/null; [ -f "$io/stdin" ] && in="$io/stdin"
"$@" <"$in" >"$io/stdout" 2>"$io/stderr" &
child=$!
(
  sleep "$SKILLGYM_WALL_SECONDS"; echo timeout >"$io/outcome"
  if [ "$$" = 1 ]; then kill -KILL -1; else kill -KILL "$child"; fi
) &
timer=$!
wait "$child"; code=$?
kill -KILL "$timer" 2>/dev/null
[ -s "$io/outcome" ] || echo ok >"$io/outcome"
echo "$code" >"$io/exit_code.tmp" && mv "$io/exit_code.tmp" "$io/exit_code"
exit "$code"
"""
)


def pod_name(run_name: str, attempt: int) -> str:
    return f"{run_name[:55]}-a{attempt}"


def mount_volume(index: int) -> str:
    return f"mount-{index}"


def mount_stage_path(index: int) -> str:
    return f"{MOUNTS_DIR}/{index}"


def transfer_plan(spec: SandboxRunSpec) -> dict[str, Any]:
    """What the fetch and push containers do, as JSON passed in their environment."""
    return {
        "mounts": [
            {
                "path": mount_stage_path(i),
                "target": m.target,
                "key": m.key,
                "writable": m.writable,
                "resultKey": m.result_key,
            }
            for i, m in enumerate(spec.mounts)
        ],
        "stdinKey": spec.stdin_key,
        "outputPrefix": spec.output_prefix.rstrip("/"),
        "outputBytes": spec.limits.output_bytes,
        "wallSeconds": spec.limits.wall_seconds,
        **({"session": spec.session.model_dump(by_alias=True)} if spec.session else {}),
    }


def active_deadline_s(spec: SandboxRunSpec, settings: OperatorSettings) -> int:
    if spec.timeout_seconds is not None:
        return spec.timeout_seconds
    return math.ceil(spec.limits.wall_seconds) + settings.push_grace_s


def _runner_container(name: str, args: list[str], spec: SandboxRunSpec, settings: OperatorSettings,
                      module: str = "skillgym_operator.transfer") -> dict[str, Any]:  # fmt: skip
    volume_mounts: list[dict[str, Any]] = [
        {"name": "io", "mountPath": IO_DIR, "readOnly": name == PUSH_CONTAINER},
        {"name": "runner-tmp", "mountPath": "/tmp"},
    ]
    # The relay hands commands over through the io volume only; the mounts are not its business.
    volume_mounts += [
        {"name": mount_volume(i), "mountPath": mount_stage_path(i), "readOnly": name == PUSH_CONTAINER}
        for i in range(len(spec.mounts))
        if name != RELAY_CONTAINER
    ]
    return {
        "name": name,
        "image": settings.runner_image,
        "imagePullPolicy": settings.image_pull_policy,
        "command": ["python", "-m", module, *args],
        "env": [{"name": PLAN_ENV, "value": json.dumps(transfer_plan(spec), sort_keys=True)}],
        "envFrom": store_env_from(settings),
        "volumeMounts": volume_mounts,
        "terminationMessagePolicy": "FallbackToLogsOnError",
        "securityContext": restricted_security_context(settings),
        "resources": {
            "requests": {"cpu": "50m", "memory": "128Mi"},
            "limits": {"cpu": "500m", "memory": "512Mi"},
        },
    }


def _session_loop(spec: SandboxRunSpec) -> list[str]:
    """For a session, the run container's command is the step loop, given the shell as arguments."""
    return ["/bin/sh", "-c", STEP_LOOP, "session"] if spec.session else []


def _is_under(path: str, mount_path: str) -> bool:
    return path == mount_path or path.startswith(mount_path.rstrip("/") + "/")


def _workdir_mount(workdir: str, volume_mounts: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """A writable emptyDir at the working directory unless a mount already covers it (the root
    filesystem is read-only, so the image's own directory could not be written)."""
    if workdir == "/" or any(_is_under(workdir, m["mountPath"]) for m in volume_mounts):
        return []
    return [{"name": WORKDIR_VOLUME, "mountPath": workdir}]


def _network_label(spec: SandboxRunSpec, settings: OperatorSettings) -> dict[str, str]:
    """The label that puts the pod under the public network policy (see :mod:`.network`)."""
    return {LABEL_NETWORK: NETWORK_PUBLIC} if spec.network == NETWORK_PUBLIC and settings.public_network else {}


def sandbox_pod(
    run: dict[str, Any], spec: SandboxRunSpec, image: str, attempt: int, settings: OperatorSettings
) -> dict[str, Any]:
    meta = run["metadata"]
    name = meta["name"]
    limits = spec.limits
    run_mounts: list[dict[str, Any]] = [
        {"name": "io", "mountPath": IO_DIR},
        {"name": "run-tmp", "mountPath": "/tmp"},
        *(
            {"name": mount_volume(i), "mountPath": m.target, "readOnly": not m.writable}
            for i, m in enumerate(spec.mounts)
        ),
    ]
    run_mounts += _workdir_mount(spec.workdir, run_mounts)
    run_container = {
        "name": RUN_CONTAINER,
        "image": image,
        "imagePullPolicy": settings.image_pull_policy,
        "command": ["/bin/sh", "-c", RUN_WRAPPER, "sandbox", *_session_loop(spec), *spec.command],
        "workingDir": spec.workdir,
        "env": [
            *({"name": e.name, "value": e.value} for e in spec.env),
            {"name": "SKILLGYM_WALL_SECONDS", "value": str(math.ceil(limits.wall_seconds))},
            # a task's own user keeps the home its image gives it (the runtime reads /etc/passwd)
            *([] if spec.build is not None and spec.build.user else [{"name": "HOME", "value": "/tmp"}]),
            *([{"name": "SKILLGYM_STEP_OUTPUT_BYTES", "value": str(limits.output_bytes)}] if spec.session else []),
        ],
        "volumeMounts": run_mounts,
        "terminationMessagePath": OUTCOME_FILE,
        "terminationMessagePolicy": "File",
        "securityContext": restricted_security_context(settings),
        "resources": {
            "requests": {"cpu": limits.cpu, "memory": f"{limits.memory_mb}Mi"},
            "limits": {
                "cpu": limits.cpu,
                "memory": f"{limits.memory_mb}Mi",
                "ephemeral-storage": f"{limits.ephemeral_storage_mb}Mi",
            },
        },
    }
    storage_mb = limits.ephemeral_storage_mb
    volumes: list[dict[str, Any]] = [
        size_limited_empty_dir("io", max(64, limits.output_bytes * 3 // 1_000_000 + 16)),
        size_limited_empty_dir("run-tmp", storage_mb),
        size_limited_empty_dir("runner-tmp", 256),
        *(size_limited_empty_dir(mount_volume(i), storage_mb) for i in range(len(spec.mounts))),
    ]
    if any(m["name"] == WORKDIR_VOLUME for m in run_mounts):
        volumes.append(size_limited_empty_dir(WORKDIR_VOLUME, storage_mb))
    pod_spec: dict[str, Any] = {
        "restartPolicy": "Never",
        "activeDeadlineSeconds": active_deadline_s(spec, settings),
        **isolated_pod_fields(),
        "terminationGracePeriodSeconds": 5,
        "securityContext": restricted_pod_security_context(settings),
        "initContainers": [_runner_container(FETCH_CONTAINER, ["fetch"], spec, settings)],
        "containers": [
            run_container,
            _runner_container(PUSH_CONTAINER, ["push"], spec, settings),
            *([_runner_container(RELAY_CONTAINER, [], spec, settings, "skillgym_operator.session")]
              if spec.session else []),
        ],
        "volumes": volumes,
    }
    if settings.sandbox_service_account:
        pod_spec["serviceAccountName"] = settings.sandbox_service_account
    if settings.runtime_class_name:
        pod_spec["runtimeClassName"] = settings.runtime_class_name
    if settings.sandbox_node_selector:
        pod_spec["nodeSelector"] = dict(settings.sandbox_node_selector)
    if settings.sandbox_tolerations:
        pod_spec["tolerations"] = [dict(t) for t in settings.sandbox_tolerations]
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": pod_name(name, attempt),
            "namespace": meta["namespace"],
            "labels": labels("sandbox", **{LABEL_RUN: name, LABEL_ATTEMPT: str(attempt), LABEL_ROLE: spec.role},
                             **_network_label(spec, settings)),
            "ownerReferences": [owner_reference(run)],
        },
        "spec": pod_spec,
    }
