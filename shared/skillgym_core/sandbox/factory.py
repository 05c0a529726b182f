"""Pick the sandbox named in settings."""

from __future__ import annotations

from skillgym_core.sandbox.base import Sandbox
from skillgym_core.settings import CommonSettings


def make_sandbox(settings: CommonSettings) -> Sandbox:
    """The configured sandbox; a local one that cannot provide its mandatory protections raises
    :class:`~skillgym_core.sandbox.protections.SandboxUnsafeError` here, before any work is taken."""
    if settings.sandbox == "local":
        from skillgym_core.sandbox.local import LocalSandbox

        sandbox = LocalSandbox(uid=settings.sandbox_uid, allow_unsafe=settings.sandbox_allow_unsafe)
        sandbox.require_protections()
        return sandbox
    if settings.sandbox == "container":
        from skillgym_core.sandbox.container.backend import ContainerSandbox

        return ContainerSandbox(engine_url=settings.container_engine_url, uid=settings.sandbox_uid)
    from skillgym_core.sandbox.kubernetes import KubernetesSandbox

    return KubernetesSandbox.from_environment()
