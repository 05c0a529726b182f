"""Sandboxes: where agent code, reference solutions and verifiers run (never in a service)."""

from skillgym_core.sandbox.base import Limits, Mount, Outcome, Sandbox, SandboxResult

__all__ = ["Limits", "Mount", "Outcome", "Sandbox", "SandboxResult"]
