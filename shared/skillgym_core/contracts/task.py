"""The task package: a Harbor task directory with SkillGym metadata under ``[metadata]``.

A task written for Harbor alone (no SkillGym keys in ``[metadata]``, maybe no ``[task]``) is read
as it is: its SkillGym metadata is derived from its name (``template = "harbor"``, label
``harbor``), Harbor's own ``[metadata]`` keys are kept, and its network policy is Harbor's
(``network_mode`` wins over the older ``allow_internet``, whose default is true).

Layout (Harbor): ``task.toml``, ``instruction.md``, ``environment/`` (Dockerfile, the initial
workspace under ``environment/workspace/``, skills under ``environment/skills/<name>/``),
``tests/test.sh`` (writes ``/logs/verifier/reward.txt`` or ``reward.json``) and
``solution/solve.sh``. Tests and solution are never shown to the agent."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path
from typing import Any, Literal

import tomli_w
from pydantic import BaseModel, ConfigDict, Field, ValidationError, ValidationInfo, model_validator

from skillgym_core.errors import TaskFormatError

HARBOR_SCHEMA_VERSION = "1.2"
SKILLGYM_METADATA_VERSION = "1.0"
REQUIRED_PATHS = ("task.toml", "instruction.md", "environment", "tests/test.sh")
WORKSPACE_DIR = "environment/workspace"
SKILLS_DIR = "environment/skills"
AGENT_WORKDIR = "/app"
REWARD_TXT = "/logs/verifier/reward.txt"
REWARD_JSON = "/logs/verifier/reward.json"

Profile = Literal["procedural", "abductive", "constraint", "partial-order"]
NetworkMode = Literal["public", "no-network", "allowlist"]
HARBOR_TEMPLATE = "harbor"
_SKILLGYM_KEYS = ("task_id", "skill_id", "skill_name", "template")


class TaskSection(BaseModel):
    model_config = ConfigDict(extra="allow")
    name: str = Field(pattern=r"^[^/\s]+/[^/\s]+$")
    description: str = ""
    keywords: list[str] = Field(default_factory=list)


class TimeoutSection(BaseModel):
    """``[agent]`` and ``[verifier]``: Harbor's ``user`` and per-phase ``network_mode`` are read."""

    model_config = ConfigDict(extra="allow")
    timeout_sec: float = 600.0
    user: str | int | None = None
    network_mode: NetworkMode | None = None


class EnvironmentSection(BaseModel):
    model_config = ConfigDict(extra="allow")
    build_timeout_sec: float = 600.0
    cpus: int | None = 1
    memory_mb: int | None = 2048
    storage_mb: int | None = 10240
    gpus: int | None = 0
    allow_internet: bool = False  # SkillGym's tasks; a Harbor task that says nothing gets Harbor's default (true)
    network_mode: NetworkMode | None = None
    allowed_hosts: list[str] | None = None
    workdir: str = AGENT_WORKDIR
    skills_dir: str | None = None

    @property
    def network(self) -> NetworkMode:
        """Harbor's resolution: ``network_mode`` when given, else ``allow_internet``."""
        if self.network_mode is not None:
            return self.network_mode
        return "public" if self.allow_internet else "no-network"

    @property
    def offline(self) -> bool:
        return self.network == "no-network"


class ProtectedInput(BaseModel):
    model_config = ConfigDict(extra="forbid")
    path: str
    sha256: str


class SkillGymMetadata(BaseModel):
    """Everything SkillGym knows about the task; lives in ``[metadata]`` of ``task.toml``."""

    model_config = ConfigDict(extra="allow")
    skillgym_version: str = SKILLGYM_METADATA_VERSION
    task_id: str
    skill_id: str
    skill_name: str
    template: str
    profile: Profile = "procedural"
    category: str | None = None
    difficulty: str = "medium"
    blueprint: dict[str, Any] = Field(default_factory=dict)
    difficulty_patterns: list[str] = Field(default_factory=list)
    revision: int = 0
    parent_task_id: str | None = None
    labels: list[str] = Field(default_factory=list)
    protected_inputs: list[ProtectedInput] = Field(default_factory=list)
    review: dict[str, Any] = Field(default_factory=dict)


class TaskConfig(BaseModel):
    """``task.toml``: Harbor's TaskConfig fields we use, unknown keys kept."""

    model_config = ConfigDict(extra="allow")
    schema_version: str = HARBOR_SCHEMA_VERSION
    source: str | None = None
    task: TaskSection
    metadata: SkillGymMetadata
    verifier: TimeoutSection = Field(default_factory=lambda: TimeoutSection(timeout_sec=120))
    agent: TimeoutSection = Field(default_factory=lambda: TimeoutSection(timeout_sec=600))
    environment: EnvironmentSection = Field(default_factory=EnvironmentSection)

    @model_validator(mode="before")
    @classmethod
    def _harbor_task(cls, data: Any, info: ValidationInfo) -> Any:
        """Harbor's own tasks: ``version`` renamed, a missing ``[task]`` named after the folder,
        SkillGym metadata derived from the name when the task carries none."""
        if not isinstance(data, dict):
            return data
        data = dict(data)
        if "version" in data:
            data.setdefault("schema_version", data.pop("version"))
        folder = str((info.context or {}).get("folder") or "task")
        task = data.get("task")
        if task is None:
            data["task"] = task = {"name": f"local/{_slug(folder)}"}
        metadata = data.get("metadata")
        if metadata is None or (isinstance(metadata, dict) and not any(k in metadata for k in _SKILLGYM_KEYS)):
            name = str(task.get("name", folder)) if isinstance(task, dict) else folder
            harbor = dict(metadata or {})
            labels = harbor.pop("labels", None)
            data["metadata"] = {
                **{k: v for k, v in harbor.items() if k not in SkillGymMetadata.model_fields
                   or (k in ("difficulty", "category") and isinstance(v, str))},
                "harbor_metadata": harbor, "task_id": f"harbor-{_slug(name)}", "skill_id": "none",
                "skill_name": "", "template": HARBOR_TEMPLATE,
                "labels": [HARBOR_TEMPLATE, *(labels if isinstance(labels, list) else [])],
            }
            environment = data.get("environment")
            if environment is None or isinstance(environment, dict):
                data["environment"] = {"allow_internet": True, **(environment or {})}
        return data

    @property
    def is_harbor(self) -> bool:
        """A task written for Harbor, without SkillGym's metadata of its own."""
        return self.metadata.template == HARBOR_TEMPLATE

    def to_toml(self) -> str:
        return tomli_w.dumps(self.model_dump(mode="json", exclude_none=True))

    @classmethod
    def from_toml(cls, text: str, *, origin: str = "task.toml", folder: str | None = None) -> TaskConfig:
        try:
            return cls.model_validate(tomllib.loads(text), context={"folder": folder})
        except tomllib.TOMLDecodeError as exc:
            raise TaskFormatError(f"{origin}: invalid TOML: {exc}", path=origin) from exc
        except ValidationError as exc:
            raise TaskFormatError(
                f"{origin}: does not match the task config contract",
                path=origin,
                errors=exc.errors(include_url=False, include_context=False),
            ) from exc


def _slug(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "-", name).strip("-.") or "task"


class TaskDir:
    """A Harbor task directory on disk."""

    def __init__(self, root: Path) -> None:
        self.root = Path(root)

    @property
    def config_path(self) -> Path:
        return self.root / "task.toml"

    @property
    def workspace(self) -> Path:
        return self.root / WORKSPACE_DIR

    @property
    def tests(self) -> Path:
        return self.root / "tests"

    @property
    def solution(self) -> Path:
        return self.root / "solution"

    @property
    def skills(self) -> Path:
        return self.root / SKILLS_DIR

    def config(self) -> TaskConfig:
        return TaskConfig.from_toml(self.config_path.read_text(), origin=str(self.config_path), folder=self.root.name)

    def instruction(self) -> str:
        return (self.root / "instruction.md").read_text()

    def write_config(self, config: TaskConfig) -> None:
        self.config_path.write_text(config.to_toml())

    def check_layout(self) -> list[str]:
        """Every problem with the layout, empty when the directory conforms."""
        problems = [f"missing {rel}" for rel in REQUIRED_PATHS if not (self.root / rel).exists()]
        if (self.root / "environment").is_dir() and not (self.root / "environment" / "Dockerfile").exists():
            problems.append("missing environment/Dockerfile")
        if self.config_path.exists():
            try:
                self.config()
            except TaskFormatError as exc:
                problems.append(str(exc))
        for path in self.root.rglob("*"):
            if path.is_symlink():
                problems.append(f"symlink not allowed: {path.relative_to(self.root)}")
        return problems

    def validate(self) -> TaskConfig:
        problems = self.check_layout()
        if problems:
            raise TaskFormatError(f"{self.root}: not a valid task directory", problems=problems)
        return self.config()
