"""Harbor task conformance: does a directory follow Harbor's published task format and
SkillGym's stricter rules for it?

Harbor: ``task.toml`` (``[task] name = "org/name"``, ``[metadata]``, ``[verifier]``/``[agent]``
``timeout_sec``, ``[environment]`` build timeout and resources), ``instruction.md``,
``environment/`` (a ``Dockerfile`` for non-compose providers), ``tests/test.sh`` writing
``/logs/verifier/reward.txt`` or ``reward.json``, optional ``solution/solve.sh``. ``tests/`` and
``solution/`` reach the container only after the agent (or only for the oracle), so nothing in
the instruction or the environment may depend on or copy them.

SkillGym adds, for the tasks it writes: a reference solution is required, skills live in
``environment/skills/<name>/`` with a ``SKILL.md``, the initial workspace is
``environment/workspace/`` copied to the workdir, no network (``allow_internet = false`` or
``network_mode = "no-network"``), and protected inputs carry the sha256 of the workspace file they
name. A task written for Harbor alone (no SkillGym metadata) is held to Harbor's rules: its
tables and solution are optional and it may use the network.

A multi-step task needs, per step, ``steps/<name>/instruction.md`` and a ``test.sh`` of the
step's own or the task's; SkillGym's own multi-step tasks also a ``solution/solve.sh`` per step."""

from __future__ import annotations

import hashlib
import json
import re
import tomllib
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from skillgym_core.contracts.task import REWARD_JSON, REWARD_TXT, TaskConfig, TaskDir, TaskStep
from skillgym_core.errors import ContractError, TaskFormatError
from skillgym_core.llm.judge import parse_rubric

ENVIRONMENT_ERROR = "environment_error"
CHECKER_ERROR = "checker_error"
LEAKAGE = "leakage"

_TASK_NAME = re.compile(r"^[^/\s]+/[^/\s]+$")
_REWARD_MENTION = re.compile(r"/logs/verifier|reward\.(txt|json)")


@dataclass(frozen=True)
class ConformanceIssue:
    code: str
    message: str
    failure_type: str
    path: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def _issue(code: str, message: str, failure_type: str, path: str | None = None) -> ConformanceIssue:
    return ConformanceIssue(code, message, failure_type, path)


def check_task(root: Path) -> list[ConformanceIssue]:
    """Every conformance problem of the task directory at ``root``; empty when it conforms."""
    task = TaskDir(Path(root))
    issues: list[ConformanceIssue] = []
    raw, config = _load_config(task, issues)
    issues += _check_layout(task)
    harbor = config is not None and config.is_harbor
    if harbor:
        issues = [i for i in issues if i.path != "solution/solve.sh"]  # Harbor tasks may come without one
        if config is not None and config.environment.docker_image:  # a prebuilt image instead of a Dockerfile
            issues = [i for i in issues if i.path != "environment/Dockerfile"]
        if (task.root / "environment" / "docker-compose.yaml").is_file():
            issues.append(_issue("compose_environment", "a docker-compose environment (several containers) is not "
                                 "supported; one Dockerfile or docker_image is", ENVIRONMENT_ERROR,
                                 "environment/docker-compose.yaml"))
    if raw is not None:
        issues += _check_raw_toml(raw, config, harbor=harbor)
    steps = task.steps() if config is not None and config.is_multi_step else []
    if steps:
        issues = [i for i in issues if i.path not in _SINGLE_STEP_PATHS] + _check_steps(task, harbor=harbor)
    else:
        issues += _check_tests(task)
    issues += _check_separation(task, steps)
    if config is not None:
        issues += _check_environment(task, config)
        issues += _check_protected_inputs(task, config)
    return issues


def assert_conforms(root: Path) -> TaskConfig:
    issues = check_task(root)
    if issues:
        raise TaskFormatError(
            f"{root}: task does not conform", problems=[issue.to_dict() for issue in issues]
        )
    return TaskDir(Path(root)).config()


_SINGLE_STEP_PATHS = ("instruction.md", "tests/test.sh", "solution/solve.sh")


def _check_steps(task: TaskDir, *, harbor: bool) -> list[ConformanceIssue]:
    """Each step's instruction, its tests (its own ``test.sh`` or the task's) and, for SkillGym's
    tasks, its reference solution."""
    issues = []
    for step in task.steps():
        rel = f"steps/{step.name}"
        if not step.instruction_path.is_file() or not step.instruction().strip():
            issues.append(_issue("missing_file", f"{rel}/instruction.md is missing or empty", ENVIRONMENT_ERROR,
                                 f"{rel}/instruction.md"))
        script = step.test_script()
        if script is None:
            issues.append(_issue("missing_file", f"neither {rel}/tests/test.sh nor tests/test.sh exists", CHECKER_ERROR,
                                 f"{rel}/tests/test.sh"))
        else:
            issues += _check_test_script(task.root, script, [task.tests, step.tests])
        if not harbor and not (step.solution / "solve.sh").is_file():
            issues.append(_issue("missing_file", f"missing {rel}/solution/solve.sh", CHECKER_ERROR,
                                 f"{rel}/solution/solve.sh"))
    return issues


def _check_layout(task: TaskDir) -> list[ConformanceIssue]:
    issues = []
    for rel, kind in (
        ("task.toml", ENVIRONMENT_ERROR),
        ("instruction.md", ENVIRONMENT_ERROR),
        ("environment", ENVIRONMENT_ERROR),
        ("environment/Dockerfile", ENVIRONMENT_ERROR),
        ("tests/test.sh", CHECKER_ERROR),
        ("solution/solve.sh", CHECKER_ERROR),
    ):
        if not (task.root / rel).exists():
            issues.append(_issue("missing_file", f"missing {rel}", kind, rel))
    instruction = task.root / "instruction.md"
    if instruction.is_file() and not instruction.read_text(errors="replace").strip():
        issues.append(_issue("empty_instruction", "instruction.md is empty", ENVIRONMENT_ERROR, "instruction.md"))
    for path in task.root.rglob("*"):
        if path.is_symlink():
            rel = path.relative_to(task.root).as_posix()
            issues.append(_issue("symlink", f"symlink not allowed: {rel}", ENVIRONMENT_ERROR, rel))
    return issues


def _load_config(task: TaskDir, issues: list[ConformanceIssue]) -> tuple[dict[str, Any] | None, TaskConfig | None]:
    if not task.config_path.is_file():
        return None, None
    try:
        raw = tomllib.loads(task.config_path.read_text())
    except tomllib.TOMLDecodeError as exc:
        issues.append(_issue("toml_syntax", f"task.toml: {exc}", ENVIRONMENT_ERROR, "task.toml"))
        return None, None
    try:
        return raw, task.config()
    except TaskFormatError as exc:
        detail = "; ".join(f"{'.'.join(map(str, e['loc']))}: {e['msg']}" for e in exc.details.get("errors", []))
        issues.append(_issue("config_contract", f"task.toml: {detail or exc}", ENVIRONMENT_ERROR, "task.toml"))
        return raw, None


def _positive(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and value > 0


def _check_raw_toml(raw: dict[str, Any], config: TaskConfig | None, *, harbor: bool = False) -> list[ConformanceIssue]:
    """SkillGym's tasks spell every table out; Harbor's own may leave any to its defaults, but
    what they do write must hold."""
    issues = []
    if not harbor and not isinstance(raw.get("schema_version", raw.get("version")), str):
        issues.append(_issue("schema_version", "task.toml needs a string schema_version", ENVIRONMENT_ERROR))
    task = raw.get("task")
    if (task is not None or not harbor) and (not isinstance(task, dict) or not _TASK_NAME.match(str(task.get("name", "")))):
        issues.append(_issue("task_name", '[task] name must look like "org/name"', ENVIRONMENT_ERROR))
    if not harbor and not isinstance(raw.get("metadata"), dict):
        issues.append(_issue("metadata", "[metadata] table is missing", ENVIRONMENT_ERROR))
    for table, kind in (("verifier", CHECKER_ERROR), ("agent", ENVIRONMENT_ERROR)):
        section = raw.get(table)
        if harbor and (not isinstance(section, dict) or "timeout_sec" not in section):
            continue
        if not isinstance(section, dict) or not _positive(section.get("timeout_sec")):
            issues.append(_issue("timeout", f"[{table}] timeout_sec must be a positive number", kind))
    env = raw.get("environment")
    if not isinstance(env, dict):
        if not harbor:
            issues.append(_issue("environment_table", "[environment] table is missing", ENVIRONMENT_ERROR))
        return issues
    if (not harbor or "build_timeout_sec" in env) and not _positive(env.get("build_timeout_sec")):
        issues.append(_issue("timeout", "[environment] build_timeout_sec must be positive", ENVIRONMENT_ERROR))
    for key in ("cpus", "memory_mb", "storage_mb", "gpus"):
        value = env.get(key)
        if value is not None and (not isinstance(value, int) or isinstance(value, bool) or value < 0):
            issues.append(_issue("resources", f"[environment] {key} must be a non-negative integer", ENVIRONMENT_ERROR))
    if env.get("gpus"):
        issues.append(_issue("gpu", "tasks must run without a GPU", ENVIRONMENT_ERROR))
    if not harbor and (config is None or not config.environment.offline):
        issues.append(_issue("network", '[environment] must be offline: allow_internet = false or network_mode = '
                                        '"no-network"', ENVIRONMENT_ERROR))
    return issues


def _check_tests(task: TaskDir) -> list[ConformanceIssue]:
    script = task.tests / "test.sh"
    if not script.is_file():
        return []
    return _check_test_script(task.root, script, [task.tests])


def _check_test_script(root: Path, script: Path, folders: list[Path]) -> list[ConformanceIssue]:
    """``script`` starts with ``#!``; the test folders (layered in order) write a reward and hold
    a well-formed ``rubric.json`` when they hold one."""
    issues = []
    rel = script.relative_to(root).as_posix()
    if not script.read_text(errors="replace").startswith("#!"):
        issues.append(_issue("shebang", f"{rel} has no #! line", CHECKER_ERROR, rel))
    files = [p for folder in folders if folder.is_dir() for p in folder.rglob("*") if p.is_file()]
    corpus = "\n".join(p.read_text(errors="replace") for p in files)
    for rubric in (folder / "rubric.json" for folder in folders):
        if not rubric.is_file():
            continue
        try:
            raw = json.loads(rubric.read_text())
            parse_rubric(raw if isinstance(raw, list) else [])
            if not isinstance(raw, list) or not raw:
                raise ContractError("rubric.json must be a non-empty list")
        except (json.JSONDecodeError, ContractError, ValidationError) as exc:
            where = rubric.relative_to(root).as_posix()
            issues.append(_issue("rubric", f"{where}: {exc}", CHECKER_ERROR, where))
    if not _REWARD_MENTION.search(corpus):
        tests = str(Path(rel).parent)
        issues.append(_issue("reward_path", f"{tests}/ never writes {REWARD_TXT} or {REWARD_JSON}", CHECKER_ERROR, tests))
    return issues


def _digests(root: Path) -> dict[str, str]:
    if not root.is_dir():
        return {}
    return {
        hashlib.sha256(p.read_bytes()).hexdigest(): p.as_posix()
        for p in root.rglob("*")
        if p.is_file() and p.stat().st_size >= 64
    }


def _check_separation(task: TaskDir, steps: list[TaskStep]) -> list[ConformanceIssue]:
    """Tests and solution reach the container only after the agent; nothing may expose them."""
    issues = []
    for instruction in [task.root / "instruction.md", *(step.instruction_path for step in steps)]:
        if instruction.is_file() and re.search(r"(^|[\s`(\"'])/(tests|solution)(/|\b)", instruction.read_text(errors="replace")):
            rel = instruction.relative_to(task.root).as_posix()
            issues.append(_issue("instruction_mentions_hidden", f"{rel} points at /tests or /solution", LEAKAGE, rel))
    hidden = {**_digests(task.tests), **_digests(task.solution)}
    for step in steps:
        hidden |= {**_digests(step.tests), **_digests(step.solution)}
    env_root = task.root / "environment"
    shown = _digests(env_root)
    for step in steps:
        shown |= _digests(step.workdir)
    for digest, path in shown.items():
        if digest in hidden:
            rel = Path(path).relative_to(task.root).as_posix()
            issues.append(_issue("hidden_file_copied", f"{rel} duplicates {Path(hidden[digest]).relative_to(task.root)}", LEAKAGE, rel))
    dockerfile = env_root / "Dockerfile"
    if dockerfile.is_file():
        for line in dockerfile.read_text(errors="replace").splitlines():
            if re.match(r"^\s*(COPY|ADD)\b", line, re.I) and re.search(r"(\.\./|\btests/|\bsolution/)", line):
                issues.append(_issue("dockerfile_copies_hidden", f"Dockerfile copies hidden files: {line.strip()}", LEAKAGE, "environment/Dockerfile"))
    return issues


def _check_environment(task: TaskDir, config: TaskConfig) -> list[ConformanceIssue]:
    issues = []
    dockerfile = task.root / "environment" / "Dockerfile"
    if dockerfile.is_file():
        instructions = [
            line.strip() for line in dockerfile.read_text(errors="replace").splitlines()
            if line.strip() and not line.strip().startswith("#")
        ]
        if not instructions or not instructions[0].upper().startswith(("FROM", "ARG")):
            issues.append(_issue("dockerfile_from", "Dockerfile must start with FROM", ENVIRONMENT_ERROR, "environment/Dockerfile"))
        workdirs = [line.split(None, 1)[1] for line in instructions if line.upper().startswith("WORKDIR ") ]
        if not workdirs or workdirs[-1].rstrip("/") != config.environment.workdir.rstrip("/"):
            issues.append(_issue("dockerfile_workdir", f"Dockerfile WORKDIR must be {config.environment.workdir}", ENVIRONMENT_ERROR, "environment/Dockerfile"))
        if task.workspace.is_dir() and not any(
            re.match(r"^(COPY|ADD)\s+(\./)?workspace/?\s", line, re.I) for line in instructions
        ):
            issues.append(_issue("dockerfile_workspace", "Dockerfile does not copy workspace/ into the image", ENVIRONMENT_ERROR, "environment/Dockerfile"))
        if task.skills.is_dir():
            target = (config.environment.skills_dir or "").rstrip("/")
            if not target or not any(
                re.match(rf"^(COPY|ADD)\s+(\./)?skills/?\s+{re.escape(target)}/?$", line, re.I) for line in instructions
            ):
                issues.append(_issue("skills_dir", "skills/ must be copied to [environment] skills_dir", ENVIRONMENT_ERROR, "environment/Dockerfile"))
    if task.skills.is_dir():
        skills = [p for p in task.skills.iterdir() if p.is_dir()]
        if not skills:
            issues.append(_issue("no_skill", "environment/skills/ holds no skill", ENVIRONMENT_ERROR, "environment/skills"))
        for skill in skills:
            if not (skill / "SKILL.md").is_file():
                rel = skill.relative_to(task.root).as_posix()
                issues.append(_issue("skill_md", f"{rel} has no SKILL.md", ENVIRONMENT_ERROR, rel))
    return issues


def _check_protected_inputs(task: TaskDir, config: TaskConfig) -> list[ConformanceIssue]:
    issues = []
    for item in config.metadata.protected_inputs:
        path = task.workspace / item.path
        if not path.is_file():
            issues.append(_issue("protected_missing", f"protected input {item.path} is not in the workspace", ENVIRONMENT_ERROR, item.path))
        elif hashlib.sha256(path.read_bytes()).hexdigest() != item.sha256:
            issues.append(_issue("protected_hash", f"protected input {item.path} does not match its sha256", ENVIRONMENT_ERROR, item.path))
    return issues
