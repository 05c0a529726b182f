"""A rule-based Dockerfile linter for task environments.

Rules: a ``FROM`` with a pinned tag (or digest) from an allowed registry, a ``WORKDIR``, no copy
of the whole build context, no ``ADD`` from a URL, no download piped into a shell, skills
copied only into agent skill directories, ``environment/requirements.txt`` copied and
``pip install -r``-ed when declared (and no package installed outside it, since the local
runtime installs only that file), and no secret in ``ENV``/``ARG``."""

from __future__ import annotations

import posixpath
import re
from dataclasses import asdict, dataclass, field
from typing import Any

from skillgym_core.contracts.task import TaskDir
from skillgym_core.envbuild.dockerparse import (
    Instruction,
    env_pairs,
    parse_dockerfile,
    pip_installs,
    split_words,
    substitute,
)
from skillgym_core.envbuild.requirements import RequirementsError, declared_requirements, requirements_path
from skillgym_core.errors import TaskFormatError

DEFAULT_SKILL_DIRS = (
    "/skills", "/harbor/skills", "/root/.claude/skills", "/root/.codex/skills", "/root/.opencode/skill",
    "/root/.goose/skills", "/root/.factory/skills", "/root/.agents/skills", "/root/.gemini/skills",
    "/root/.qwen/skills",
)  # fmt: skip
ALLOWED_REGISTRIES = ("docker.io", "ghcr.io", "quay.io", "mcr.microsoft.com", "public.ecr.aws")
WHOLE_CONTEXT = {".", "./", "*", "./*"}
SECRET_NAME = re.compile(r"secret|token|passw(or)?d|api[_-]?key|access[_-]?key|private[_-]?key|credential", re.I)
SECRET_VALUE = re.compile(
    r"sk-[A-Za-z0-9_-]{20,}|AKIA[0-9A-Z]{16}|gh[pousr]_[A-Za-z0-9]{30,}|xox[abprs]-[A-Za-z0-9-]{10,}"
    r"|-----BEGIN [A-Z ]*PRIVATE KEY"
)
PIPE_TO_SHELL = re.compile(
    r"\b(curl|wget)\b[^|;&]*\|\s*(sudo\s+)?((ba|z|da)?sh|python[0-9.]*|perl|ruby|node)\b"
    r"|\b(ba|z|da)?sh\s+(-c\s+)?[\"']?(\$\(|<\()\s*(curl|wget)\b"
)


@dataclass(frozen=True)
class LintFinding:
    code: str
    message: str
    line: int | None = None

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def _norm_src(src: str) -> str:
    src = src[2:] if src.startswith("./") else src
    return src.rstrip("/") or src


def _image_findings(image: str, stages: set[str], line: int, registries: tuple[str, ...]) -> list[LintFinding]:
    if image.lower() in stages or image == "scratch":
        return []
    if "$" in image:
        return [LintFinding("from_unresolved", f"FROM {image}: the base image is not a literal reference", line)]
    findings = []
    first, _, rest = image.partition("/")
    registry = first if rest and ("." in first or ":" in first or first == "localhost") else "docker.io"
    if registry not in registries:
        findings.append(
            LintFinding(
                "from_registry", f"FROM {image}: registry {registry} is not allowed ({', '.join(registries)})", line
            )
        )
    if "@sha256:" not in image:
        name = image.rsplit("/", 1)[-1]
        tag = name.partition(":")[2]
        if not tag or tag == "latest":
            findings.append(
                LintFinding("from_unpinned", f"FROM {image}: pin a tag other than latest (or a digest)", line)
            )
    return findings


@dataclass
class _State:
    workdir: str = "/"
    has_from: bool = False
    has_workdir: bool = False
    stages: set[str] = field(default_factory=set)
    args: dict[str, str] = field(default_factory=dict)
    copied_requirements: set[str] = field(default_factory=set)
    installed_requirements: set[str] = field(default_factory=set)

    def resolve(self, path: str) -> str:
        return posixpath.normpath(posixpath.join(self.workdir, path))


def lint_dockerfile(
    text: str,
    *,
    requirements_declared: bool = False,
    requirements_present: bool = False,
    skill_dirs: tuple[str, ...] = DEFAULT_SKILL_DIRS,
    registries: tuple[str, ...] = ALLOWED_REGISTRIES,
) -> list[LintFinding]:
    findings: list[LintFinding] = []
    state = _State()
    for ins in parse_dockerfile(text):
        findings += _check(ins, state, skill_dirs, registries)
    if not state.has_from:
        findings.append(LintFinding("from_missing", "the Dockerfile has no FROM instruction"))
    if not state.has_workdir:
        findings.append(LintFinding("workdir_missing", "the Dockerfile sets no WORKDIR"))
    references = bool(state.copied_requirements or state.installed_requirements)
    if requirements_declared:
        if not state.copied_requirements:
            findings.append(
                LintFinding(
                    "requirements_not_copied",
                    "environment/requirements.txt is declared but the Dockerfile never COPYs it",
                )
            )
        elif not state.copied_requirements & state.installed_requirements:
            findings.append(
                LintFinding(
                    "requirements_not_installed",
                    "the Dockerfile copies requirements.txt but never runs `pip install -r` on the copied file",
                )
            )
    elif references and not requirements_present:
        findings.append(
            LintFinding(
                "requirements_missing",
                "the Dockerfile uses requirements.txt but environment/requirements.txt does not exist",
            )
        )
    return findings


def _check(
    ins: Instruction, state: _State, skill_dirs: tuple[str, ...], registries: tuple[str, ...]
) -> list[LintFinding]:
    keyword, line = ins.keyword, ins.line
    findings: list[LintFinding] = []
    if keyword == "ARG":
        for word in split_words(ins.args):
            name, _, value = word.partition("=")
            findings += _secret(name, value, "ARG", line)
            if value and not state.has_from:
                state.args[name] = value
    elif keyword == "FROM":
        words = [w for w in split_words(ins.args) if not w.startswith("--")]
        if words:
            findings += _image_findings(substitute(words[0], state.args), state.stages, line, registries)
            if len(words) >= 3 and words[1].upper() == "AS":
                state.stages.add(words[2].lower())
        state.has_from = True
        state.workdir = "/"
    elif keyword == "WORKDIR":
        state.has_workdir = True
        state.workdir = state.resolve(ins.args.strip().strip("\"'"))
    elif keyword == "ENV":
        for name, value in env_pairs(split_words(ins.args)):
            findings += _secret(name, value, "ENV", line)
    elif keyword in ("COPY", "ADD"):
        findings += _copy(ins, state, skill_dirs)
    elif keyword == "RUN":
        command = " ".join(split_words(ins.args)) if ins.args.startswith("[") else ins.args
        if PIPE_TO_SHELL.search(command):
            findings.append(LintFinding("pipe_to_shell", "RUN pipes a download into an interpreter", line))
        for files, packages in pip_installs(command):
            state.installed_requirements |= {state.resolve(f) for f in files if f}
            if packages:
                findings.append(
                    LintFinding(
                        "undeclared_install",
                        f"RUN pip installs {' '.join(packages)} outside environment/requirements.txt; declare them there",
                        line,
                    )
                )
    return findings


def _secret(name: str, value: str, keyword: str, line: int) -> list[LintFinding]:
    literal = value.strip().strip("\"'")
    if literal and not literal.startswith("$") and (SECRET_NAME.search(name) or SECRET_VALUE.search(literal)):
        return [
            LintFinding(
                "secret_in_env", f"{keyword} {name} sets a secret-looking value; pass secrets at run time", line
            )
        ]
    return []


def _copy(ins: Instruction, state: _State, skill_dirs: tuple[str, ...]) -> list[LintFinding]:
    words = split_words(ins.args)
    if any(w.startswith("--from") for w in words):
        return []
    parts = [w for w in words if not w.startswith("--")]
    if len(parts) < 2:
        return [LintFinding("copy_syntax", f"{ins.keyword} needs a source and a destination", ins.line)]
    sources, dest = parts[:-1], parts[-1]
    findings = []
    resolved_dest = state.resolve(dest)
    for src in sources:
        if ins.keyword == "ADD" and re.match(r"^(https?|ftp)://|^git@|\.git$", src):
            findings.append(
                LintFinding("add_remote", f"ADD fetches {src}; vendor the file into environment/", ins.line)
            )
        if src in WHOLE_CONTEXT:
            findings.append(
                LintFinding("copy_context", f"{ins.keyword} {src} {dest} copies the whole build context", ins.line)
            )
        name = _norm_src(src)
        if name == "skills" or name.startswith("skills/"):
            target = resolved_dest.rstrip("/") or "/"
            if not any(target == d or target.startswith(d + "/") for d in skill_dirs):
                findings.append(
                    LintFinding(
                        "skills_target", f"skills copied to {dest}, which is not an agent skill directory", ins.line
                    )
                )
        if posixpath.basename(name) == "requirements.txt":
            state.copied_requirements.add(
                state.resolve(posixpath.join(dest, "requirements.txt")) if dest.endswith("/") else resolved_dest
            )
    return findings


def lint_environment(task: TaskDir, *, skill_dirs: tuple[str, ...] = DEFAULT_SKILL_DIRS) -> list[LintFinding]:
    """Findings for the task's Dockerfile, requirements file and ``skills_dir``."""
    findings: list[LintFinding] = []
    declared = False
    try:
        declared = declared_requirements(task) is not None
    except RequirementsError as exc:
        findings.append(LintFinding("requirements_invalid", str(exc), exc.details.get("line")))
    dockerfile = task.root / "environment" / "Dockerfile"
    if not dockerfile.is_file() or dockerfile.is_symlink():
        return [*findings, LintFinding("dockerfile_missing", "environment/Dockerfile is missing")]
    findings += lint_dockerfile(
        dockerfile.read_text(errors="replace"),
        requirements_declared=declared or bool(findings),
        requirements_present=requirements_path(task).is_file(),
        skill_dirs=skill_dirs,
    )
    try:
        skills_dir = task.config().environment.skills_dir
    except (OSError, TaskFormatError):  # the conformance gate reports an unreadable task.toml
        skills_dir = None
    if skills_dir and skills_dir.rstrip("/") not in skill_dirs:
        findings.append(
            LintFinding(
                "skills_dir_not_allowed", f"[environment] skills_dir {skills_dir} is not an agent skill directory"
            )
        )
    return findings
