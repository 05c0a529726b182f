"""Pick the sandbox named in settings."""

from __future__ import annotations

from skillgym_core.sandbox.base import Sandbox
from skillgym_core.settings import CommonSettings


def make_sandbox(settings: CommonSettings) -> Sandbox:
    if settings.sandbox == "local":
        from skillgym_core.sandbox.local import LocalSandbox

        return LocalSandbox()
    from skillgym_core.sandbox.kubernetes import KubernetesSandbox

    return KubernetesSandbox.from_environment()
