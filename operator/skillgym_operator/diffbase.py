"""kopf's record of what it last handled, kept only for kinds that have change handlers."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, cast

import kopf


class ChangeHandledKindsOnly(kopf.AnnotationsDiffBaseStorage):
    """kopf builds a deep copy of every watched object on every event to diff it against its last
    handled state. Kinds followed only through raw events and indexes (SandboxRuns, sandbox pods,
    the sandbox policy) never use that diff, so for them the copy is skipped: it was the largest
    share of the operator's CPU under load."""

    def __init__(self, event_only_kinds: Iterable[str]) -> None:
        super().__init__()
        self.event_only_kinds = frozenset(event_only_kinds)

    def build(self, *, body: kopf.Body, extra_fields: Any = None) -> kopf.BodyEssence:
        if body.get("kind") in self.event_only_kinds:
            return cast(kopf.BodyEssence, {})
        return super().build(body=body, extra_fields=extra_fields)
