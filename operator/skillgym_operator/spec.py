"""Typed views of the custom resources' specs; invalid specs fail with a typed error."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator
from skillgym_core.errors import ContractError, SandboxError
from skillgym_core.sandbox.bwrap import check_target

Role = Literal["agent", "oracle", "nop", "verifier"]
# Besides what the local sandbox reserves: the kernel's /sys and the pod's own I/O directories.
POD_RESERVED_PREFIXES = ("/sys", "/skillgym")
QUANTITY = r"^[0-9]+(\.[0-9]+)?([KMGTPE]i|[kMGTPE])?$"


class _Spec(BaseModel):
    model_config = ConfigDict(extra="ignore", populate_by_name=True)


class MountSpec(_Spec):
    target: str = Field(pattern=r"^/")
    key: str | None = Field(None, description="tar.gz in the store unpacked at target; empty dir if absent")
    writable: bool = False
    result_key: str | None = Field(None, alias="resultKey")

    @field_validator("target")
    @classmethod
    def _allowed_target(cls, target: str) -> str:
        try:
            normalized = check_target(target)
        except SandboxError as exc:
            raise ValueError(str(exc)) from exc
        if any(normalized == p or normalized.startswith(f"{p}/") for p in POD_RESERVED_PREFIXES):
            raise ValueError(f"mount target is reserved: {target!r}")
        return normalized


class LimitsSpec(_Spec):
    cpu: str = "1"
    memory_mb: int = Field(1024, alias="memoryMb", ge=16)
    pids: int = Field(256, ge=8)
    wall_seconds: float = Field(60.0, alias="wallSeconds", gt=0)
    output_bytes: int = Field(1_000_000, alias="outputBytes", ge=0)
    ephemeral_storage_mb: int = Field(1024, alias="ephemeralStorageMb", ge=16)


class BuildSpec(_Spec):
    """What a task image is built from: a context in the store (its Dockerfile), or a prebuilt
    ``baseImage``; with ``user``, one more layer gives that image user the pods' uid."""

    context_key: str | None = Field(None, alias="contextKey")
    base_image: str | None = Field(None, alias="baseImage", pattern=r"^[^\s]+$")
    dockerfile: str = Field("Dockerfile", pattern=r"^[A-Za-z0-9_.-][A-Za-z0-9_./-]*$")
    user: str | None = Field(None, pattern=r"^[A-Za-z_0-9][A-Za-z0-9_.-]{0,31}$")

    @model_validator(mode="after")
    def _one_source(self) -> BuildSpec:
        if (self.context_key is None) == (self.base_image is None):
            raise ValueError("a build names either contextKey or baseImage")
        if ".." in self.dockerfile.split("/"):
            raise ValueError(f"dockerfile must stay inside the context: {self.dockerfile!r}")
        if self.user is not None and self.user in ("root", "0"):
            raise ValueError("the build's user may not be root")
        return self


class EnvVar(_Spec):
    name: str
    value: str = ""


class SessionSpec(_Spec):
    """A warm pod: commands arrive one by one under ``channel`` in the store (see
    :mod:`skillgym_core.sandbox.steps`); ``spec.command`` is the shell each is given to."""

    channel: str = Field(min_length=1)
    idle_seconds: int = Field(600, alias="idleSeconds", ge=1)


class SandboxRunSpec(_Spec):
    task_key: str | None = Field(None, alias="taskKey")
    role: Role = "agent"
    command: list[str] = Field(min_length=1)
    workdir: str = "/app"
    env: list[EnvVar] = Field(default_factory=list)
    image: str | None = None
    build: BuildSpec | None = None
    mounts: list[MountSpec] = Field(default_factory=list)
    stdin_key: str | None = Field(None, alias="stdinKey")
    output_prefix: str = Field(alias="outputPrefix")
    limits: LimitsSpec = Field(default_factory=LimitsSpec)
    timeout_seconds: int | None = Field(None, alias="timeoutSeconds", ge=1)
    skill_provided: bool = Field(False, alias="skillProvided")
    max_attempts: int | None = Field(None, alias="maxAttempts", ge=1)
    session: SessionSpec | None = None
    network: Literal["none", "public"] = Field(
        "none", description="public: the task allows the internet (the cluster's own networks stay closed)")

    @model_validator(mode="after")
    def _distinct_targets(self) -> SandboxRunSpec:
        targets = [m.target for m in self.mounts]
        if len(set(targets)) != len(targets):
            raise ValueError(f"mount targets repeat: {targets}")
        return self


class TrainingResources(_Spec):
    cpu: str = "8"
    memory: str = "64Gi"
    scratch: str = Field("200Gi", pattern=QUANTITY, description="size cap of /tmp (model downloads, caches)")


class TrainingJobSpec(_Spec):
    dataset_key: str = Field(alias="datasetKey")
    base_model: str = Field(alias="baseModel")
    trainer_config: dict[str, Any] = Field(default_factory=dict, alias="trainerConfig")
    deepspeed_config: dict[str, Any] = Field(default_factory=dict, alias="deepspeedConfig")
    gpus: int = Field(1, ge=0, description="GPUs per node")
    nodes: int = Field(1, ge=1)
    image: str | None = None
    module: str | None = None
    output_prefix: str | None = Field(None, alias="outputPrefix")
    resources: TrainingResources = Field(default_factory=TrainingResources)
    backoff_limit: int = Field(3, alias="backoffLimit", ge=0)


class InvalidSpecError(ContractError):
    reason = "invalid_spec"


def parse_sandbox_run(spec: dict[str, Any]) -> SandboxRunSpec:
    try:
        return SandboxRunSpec.model_validate(dict(spec))
    except ValidationError as exc:
        raise InvalidSpecError(
            "SandboxRun spec is invalid", errors=exc.errors(include_url=False, include_context=False)
        ) from exc


def parse_training_job(spec: dict[str, Any]) -> TrainingJobSpec:
    try:
        return TrainingJobSpec.model_validate(dict(spec))
    except ValidationError as exc:
        raise InvalidSpecError(
            "TrainingJob spec is invalid", errors=exc.errors(include_url=False, include_context=False)
        ) from exc
