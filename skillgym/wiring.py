"""Build any service by name with the backends it is given."""

from __future__ import annotations

import importlib
import os
from collections.abc import Iterator, Mapping
from contextlib import contextmanager

from skillgym_core.context import ServiceContext
from skillgym_core.service import Service

SERVICE_CLASSES: dict[str, str] = {
    "builder": "skillgym_builder.service:BuilderService",
    "reviewer": "skillgym_reviewer.service:ReviewerService",
    "validator": "skillgym_validator.service:ValidatorService",
    "sampler": "skillgym_sampler.service:SamplerService",
    "trainer": "skillgym_trainer.service:TrainerService",
}
PIPELINE_ORDER = ("builder", "reviewer", "validator", "sampler", "trainer")


class UnknownServiceError(ValueError):
    def __init__(self, name: str) -> None:
        super().__init__(f"unknown service {name!r}; choose one of {', '.join(SERVICE_CLASSES)}")
        self.name = name


def create_service(name: str, ctx: ServiceContext) -> Service:
    try:
        target = SERVICE_CLASSES[name]
    except KeyError:
        raise UnknownServiceError(name) from None
    module_name, class_name = target.split(":")
    cls = getattr(importlib.import_module(module_name), class_name)
    service: Service = cls(ctx)
    return service


@contextmanager
def environment(overrides: Mapping[str, str | None]) -> Iterator[None]:
    """Apply settings overrides (environment variables) for the duration, then restore."""
    saved = {key: os.environ.get(key) for key in overrides}
    try:
        for key, value in overrides.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value
        yield
    finally:
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value
