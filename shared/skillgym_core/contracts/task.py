"""The task package: a Harbor task directory with SkillGym metadata under ``[metadata]``.

A task written for Harbor alone (no SkillGym keys in ``[metadata]``, maybe no ``[task]``) is read
as it is: its SkillGym metadata is derived from its name (``template = "harbor"``, label
``harbor``), Harbor's own ``[metadata]`` keys are kept, and its network policy is Harbor's
(``network_mode`` wins over the older ``allow_internet``, whose default is true).

Layout (Harbor): ``task.toml``, ``instruction.md``, ``environment/`` (Dockerfile, the initial
workspace under ``environment/workspace/``, skills under ``environment/skills/<name>/``),
``tests/test.sh`` (writes ``/logs/verifier/reward.txt`` or ``reward.json``) and
``solution/solve.sh``. Tests and solution are never shown to the agent.

A multi-step task (``[[steps]]`` in ``task.toml``) has ``steps/<name>/`` with each step's
``instruction.md``, ``tests/`` (layered over the task's ``tests/``), ``solution/`` and
``workdir/`` (merged into the working directory before the step; its ``setup.sh`` runs then)."""

from __future__ import annotations

import posixpath
import re
import tomllib
from pathlib import Path
from typing import Any, Literal

import tomli_w
from pydantic import BaseModel, ConfigDict, Field, ValidationError, ValidationInfo, field_validator, model_validator

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
STEP_NAME = r"^[A-Za-z0-9][A-Za-z0-9._-]*$"
_ENV_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_ENV_REFERENCE = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}")
EnvPhase = Literal["agent", "solution", "verifier"]
# Where the runtime mounts its own trees; a task's working directory may not be one of them.
RESERVED_DIRS = ("/", "/tests", "/solution", "/logs", "/skills", "/proc", "/dev", "/sys", "/tmp", "/step")
# programs, libraries and the sandbox's own mounts (harnesses, the runner, the local venv)
SYSTEM_DIRS = ("/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/etc", "/usr/bin", "/usr/sbin", "/usr/lib",
               "/usr/lib64", "/usr/libexec", "/usr/local/bin", "/usr/local/sbin", "/usr/local/lib", "/opt/venv",
               "/opt/skillgym", "/agent", "/llm")


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
    docker_image: str | None = None  # a prebuilt image instead of environment/Dockerfile

    @field_validator("workdir")
    @classmethod
    def _workdir(cls, value: str) -> str:
        # normpath keeps a leading "//", which the kernel reads as "/": "//tests" is /tests
        normal = "/" + posixpath.normpath(value).lstrip("/")
        if not value.startswith("/") or normal in RESERVED_DIRS or any(
                normal.startswith(f"{reserved}/") for reserved in RESERVED_DIRS[1:]):
            raise ValueError(f"workdir must be an absolute path outside {', '.join(RESERVED_DIRS)}")
        # the workspace mounted there would put what the agent writes in place of the programs
        # every later run, the verifier's included, executes
        if shadowed := [path for path in SYSTEM_DIRS if path == normal or path.startswith(f"{normal}/")]:
            raise ValueError(f"workdir {normal} would hide {shadowed[0]}")
        return normal

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


class StepPhase(BaseModel):
    """``[steps.agent]`` / ``[steps.verifier]``: what is unset falls back to the task's table."""

    model_config = ConfigDict(extra="allow")
    timeout_sec: float | None = Field(default=None, gt=0)
    user: str | int | None = None


class Healthcheck(BaseModel):
    """A command that must succeed before the step's agent starts (retried ``retries`` times)."""

    model_config = ConfigDict(extra="allow")
    command: str
    interval_sec: float = Field(default=1.0, ge=0)
    timeout_sec: float = Field(default=30.0, gt=0)
    start_period_sec: float = Field(default=0.0, ge=0)
    retries: int = Field(default=3, ge=0)


class StepSection(BaseModel):
    """One ``[[steps]]`` entry: a step of a multi-step task, run in order in one environment."""

    model_config = ConfigDict(extra="allow")
    name: str = Field(pattern=STEP_NAME)
    agent: StepPhase = Field(default_factory=StepPhase)
    verifier: StepPhase = Field(default_factory=StepPhase)
    min_reward: float | dict[str, float] | None = None
    healthcheck: Healthcheck | None = None

    def below_minimum(self, rewards: dict[str, float], reward: float) -> bool:
        """Whether the step's verdict misses its ``min_reward`` (one threshold on the reward, or
        one per key, a key the verifier did not report missing any floor, as in Harbor): the trial
        stops there."""
        if self.min_reward is None:
            return False
        if isinstance(self.min_reward, dict):
            return any(key not in rewards or rewards[key] < floor for key, floor in self.min_reward.items())
        return reward < self.min_reward


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
    steps: list[StepSection] = Field(default_factory=list)
    multi_step_reward_strategy: Literal["mean", "final"] | None = None

    @model_validator(mode="after")
    def _unique_steps(self) -> TaskConfig:
        names = [step.name for step in self.steps]
        if len(set(names)) != len(names):
            raise ValueError(f"step names must be unique: {names}")
        return self

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

    def env_for(self, phase: EnvPhase) -> dict[str, str]:
        """The variables Harbor's ``[environment] env`` (every phase) and ``[verifier] env`` or
        ``[solution] env`` give a phase's runs. ``${VAR:-default}`` takes its default and ``${VAR}``
        is empty: nothing of the host's environment is read into a sandbox (it would hand the
        task, and through it the agent's trajectory, whatever secret the host holds)."""
        tables = [(self.environment.model_extra or {}).get("env")]
        if phase == "verifier":
            tables.append((self.verifier.model_extra or {}).get("env"))
        elif phase == "solution":
            solution = (self.model_extra or {}).get("solution")
            tables.append(solution.get("env") if isinstance(solution, dict) else None)
        merged: dict[str, str] = {}
        for table in tables:
            if isinstance(table, dict):
                merged.update({str(name): _ENV_REFERENCE.sub(lambda m: m.group(2) or "", str(value))
                               for name, value in table.items() if _ENV_NAME.match(str(name))})  # fmt: skip
        return merged

    @property
    def is_multi_step(self) -> bool:
        return bool(self.steps)

    @property
    def reward_strategy(self) -> Literal["mean", "final"]:
        return self.multi_step_reward_strategy or "mean"

    def to_toml(self) -> str:
        data = self.model_dump(mode="json", exclude_none=True)
        if not data.get("steps"):
            data.pop("steps", None)
        return tomli_w.dumps(data)

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


class _Folder:
    """What a task and each of its steps have: an instruction, tests and a solution."""

    root: Path

    @property
    def instruction_path(self) -> Path:
        return self.root / "instruction.md"

    def instruction(self) -> str:
        return self.instruction_path.read_text()

    @property
    def tests(self) -> Path:
        return self.root / "tests"

    @property
    def solution(self) -> Path:
        return self.root / "solution"


class TaskDir(_Folder):
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
    def skills(self) -> Path:
        return self.root / SKILLS_DIR

    def config(self) -> TaskConfig:
        return TaskConfig.from_toml(self.config_path.read_text(), origin=str(self.config_path), folder=self.root.name)

    def step(self, name: str) -> TaskStep:
        return TaskStep(self, name)

    def steps(self) -> list[TaskStep]:
        """The steps of a multi-step task in their order; empty for a single-step task."""
        return [TaskStep(self, step.name) for step in self.config().steps]

    def write_config(self, config: TaskConfig) -> None:
        self.config_path.write_text(config.to_toml())

    def check_layout(self) -> list[str]:
        """Every problem with the layout, empty when the directory conforms."""
        required: tuple[str, ...] = REQUIRED_PATHS
        try:
            steps = self.steps() if self.config_path.is_file() else []
        except TaskFormatError:
            steps = []
        if steps:  # each step brings its own instruction, and a test.sh of its own or the task's
            required = ("task.toml", "environment", *(f"steps/{step.name}/instruction.md" for step in steps))
            required += tuple(f"steps/{step.name}/tests/test.sh" for step in steps if step.test_script() is None)
        problems = [f"missing {rel}" for rel in required if not (self.root / rel).exists()]
        if (self.root / "environment").is_dir() and not (self.root / "environment" / "Dockerfile").exists() \
                and not self._prebuilt_image():
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

    def _prebuilt_image(self) -> str | None:
        try:
            return self.config().environment.docker_image if self.config_path.is_file() else None
        except TaskFormatError:
            return None

    def validate(self) -> TaskConfig:
        problems = self.check_layout()
        if problems:
            raise TaskFormatError(f"{self.root}: not a valid task directory", problems=problems)
        return self.config()


class TaskStep(_Folder):
    """One step of a multi-step task on disk: ``steps/<name>/``."""

    def __init__(self, task: TaskDir, name: str) -> None:
        self.task = task
        self.name = name
        self.root = task.root / "steps" / name

    @property
    def workdir(self) -> Path:
        return self.root / "workdir"

    def test_script(self) -> Path | None:
        """The step's ``test.sh``, else the task's shared one; None when neither exists."""
        for candidate in (self.tests / "test.sh", self.task.tests / "test.sh"):
            if candidate.is_file():
                return candidate
        return None

    def config(self) -> StepSection:
        for step in self.task.config().steps:
            if step.name == self.name:
                return step
        raise TaskFormatError(f"{self.task.root}: no step named {self.name!r}", path="task.toml")
