"""Sandbox sessions: many commands against the same mounts, as an agent's episode runs them.

A session is opened on a sandbox with the episode's mounts and limits; each :meth:`run` is one
command given to the session's shell; :meth:`close` ends it and, unless discarded, leaves the
writable mounts' final contents on the host (where the trusted verifier reads them).

- :class:`SequentialSession` serves any sandbox: each command is a sandbox run of its own on the
  same host directories (the local sandbox: a fresh bubblewrap per command, nothing lives on).
- :class:`~skillgym_core.sandbox.kubernetes_session.KubernetesSession` keeps one pod warm for the
  whole session and passes commands to it through the store.

A session's :meth:`record` is what a restarted server needs to :func:`resume_session` it."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from skillgym_core.errors import SandboxError
from skillgym_core.sandbox.base import Limits, Mount, Sandbox, SandboxResult

DEFAULT_SHELL = ("bash", "-lc")


class SandboxSession(Protocol):
    def run(self, command: str, *, timeout_s: float, stdin: bytes | None = None) -> SandboxResult: ...

    def close(self, *, keep_files: bool = True) -> None:
        """End the session; with ``keep_files`` the writable mounts' contents are on the host after."""
        ...

    def record(self) -> dict[str, Any]: ...


@dataclass
class SequentialSession:
    sandbox: Sandbox
    mounts: Sequence[Mount]
    workdir: str
    env: Mapping[str, str] | None
    limits: Limits
    shell: Sequence[str] = DEFAULT_SHELL

    def run(self, command: str, *, timeout_s: float, stdin: bytes | None = None) -> SandboxResult:
        limits = Limits(**{**self.limits.__dict__, "wall_s": timeout_s})
        return self.sandbox.run([*self.shell, command], mounts=self.mounts, workdir=self.workdir, env=self.env,
                                limits=limits, stdin=stdin)  # fmt: skip

    def close(self, *, keep_files: bool = True) -> None:
        """Nothing to do: every command already wrote straight into the host directories."""

    def record(self) -> dict[str, Any]:
        return {"kind": "sequential"}


def open_session(
    sandbox: Sandbox,
    *,
    mounts: Sequence[Mount],
    workdir: str,
    env: Mapping[str, str] | None,
    limits: Limits,
    idle_s: float,
    shell: Sequence[str] = DEFAULT_SHELL,
) -> SandboxSession:
    """A session on ``sandbox``: a warm pod on Kubernetes, else one run per command.
    ``limits.wall_s`` is the whole session's lifetime; ``idle_s`` ends it sooner without commands."""
    from skillgym_core.sandbox.kubernetes import KubernetesSandbox

    if isinstance(sandbox, KubernetesSandbox):
        from skillgym_core.sandbox.kubernetes_session import KubernetesSession

        return KubernetesSession.open(sandbox, mounts=mounts, workdir=workdir, env=env or {}, limits=limits,
                                      idle_s=idle_s, shell=shell)  # fmt: skip
    return SequentialSession(sandbox, list(mounts), workdir, env, limits, tuple(shell))


def resume_session(
    sandbox: Sandbox,
    record: Mapping[str, Any],
    *,
    mounts: Sequence[Mount],
    workdir: str,
    env: Mapping[str, str] | None,
    limits: Limits,
    shell: Sequence[str] = DEFAULT_SHELL,
) -> SandboxSession:
    """The session ``record`` describes, on the same mounts; :class:`SandboxError` if it cannot be."""
    if record.get("kind") == "kubernetes":
        from skillgym_core.sandbox.kubernetes import KubernetesSandbox
        from skillgym_core.sandbox.kubernetes_session import KubernetesSession

        if not isinstance(sandbox, KubernetesSandbox):
            raise SandboxError("a Kubernetes session cannot resume on another sandbox", reason="session_lost")
        return KubernetesSession.resume(sandbox, record, mounts=mounts)
    return SequentialSession(sandbox, list(mounts), workdir, env, limits, tuple(shell))
