"""Python dependencies a task declares: ``environment/requirements.txt``, one PEP 508
requirement per line (``#`` comments allowed).

That file is the single place a task declares them; its Dockerfile must ``COPY`` it and
``pip install -r`` it (see :mod:`.dockerfile`), and the local runtime installs exactly the same
list into a cached virtual environment (see :mod:`.venv`). Only named index requirements are
accepted: no pip options, URLs, paths or includes, so a task cannot point the host's pip at
arbitrary locations."""

from __future__ import annotations

import hashlib
import json
import platform
import sys
from dataclasses import dataclass
from pathlib import Path

from packaging.requirements import InvalidRequirement, Requirement
from packaging.utils import canonicalize_name

from skillgym_core.contracts.task import TaskDir
from skillgym_core.envbuild.provider import EnvironmentBuildError

REQUIREMENTS_FILE = "environment/requirements.txt"
MAX_REQUIREMENTS = 64
MAX_REQUIREMENTS_BYTES = 16 * 1024


class RequirementsError(EnvironmentBuildError):
    """``environment/requirements.txt`` cannot be used as declared."""

    reason = "requirements_invalid"


@dataclass(frozen=True)
class Requirements:
    """A normalised, sorted requirement list; equal lists build the same environment."""

    lines: tuple[str, ...]

    def text(self) -> str:
        return "".join(f"{line}\n" for line in self.lines)

    def key(self, *, salt: str = "") -> str:
        """Content key of the environment: the requirements plus the interpreter they run on."""
        identity = {
            "requirements": list(self.lines),
            "python": platform.python_version(),
            "implementation": sys.implementation.name,
            "platform": f"{sys.platform}-{platform.machine()}",
            "salt": salt,
        }
        return hashlib.sha256(json.dumps(identity, sort_keys=True).encode()).hexdigest()[:32]


def parse_requirements(text: str, *, origin: str = REQUIREMENTS_FILE) -> Requirements:
    """Every line must be a plain named requirement (``name[extras] specifiers ; marker``)."""
    if len(text.encode()) > MAX_REQUIREMENTS_BYTES:
        raise RequirementsError(f"{origin} is larger than {MAX_REQUIREMENTS_BYTES} bytes", path=origin)
    normalised: dict[str, str] = {}
    for number, raw in enumerate(text.splitlines(), start=1):
        line = raw.split(" #", 1)[0].strip() if not raw.lstrip().startswith("#") else ""
        if not line:
            continue
        if line.startswith("-"):
            raise RequirementsError(
                f"{origin}:{number}: pip options are not allowed: {line!r}", path=origin, line=number
            )
        try:
            requirement = Requirement(line)
        except InvalidRequirement as exc:
            raise RequirementsError(f"{origin}:{number}: {exc}", path=origin, line=number) from exc
        if requirement.url:
            raise RequirementsError(
                f"{origin}:{number}: direct URL requirements are not allowed: {line!r}", path=origin, line=number
            )
        name = canonicalize_name(requirement.name)
        if name in normalised:
            raise RequirementsError(f"{origin}:{number}: {name} is listed twice", path=origin, line=number)
        requirement.name = name
        normalised[name] = str(requirement)
    if len(normalised) > MAX_REQUIREMENTS:
        raise RequirementsError(f"{origin} lists more than {MAX_REQUIREMENTS} requirements", path=origin)
    return Requirements(tuple(sorted(normalised.values())))


def requirements_path(task: TaskDir) -> Path:
    return task.root / REQUIREMENTS_FILE


def declared_requirements(task: TaskDir) -> Requirements | None:
    """The task's requirements, or None when it declares none (no file, or an empty one)."""
    path = requirements_path(task)
    if path.is_symlink() or (path.exists() and not path.is_file()):
        raise RequirementsError(f"{REQUIREMENTS_FILE} must be a regular file", path=REQUIREMENTS_FILE)
    if not path.is_file():
        return None
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise RequirementsError(f"{REQUIREMENTS_FILE} is not UTF-8", path=REQUIREMENTS_FILE) from exc
    requirements = parse_requirements(text)
    return requirements if requirements.lines else None
