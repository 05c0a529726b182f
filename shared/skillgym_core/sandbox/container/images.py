"""Building a task's Dockerfile into an image, once per content: the tag is the hash of the
Dockerfile, its build context and the base images it resolves to, so an unchanged task is a
cache hit and any change is a new image.

No registry is reachable from these machines, so ``FROM`` is resolved against the images the
engine holds. A base it lacks is replaced by the nearest local base made by
``scripts/install-containers.sh`` (``python:*`` by its Python image, Debian and Ubuntu by its
Debian image), and the build records a warning saying so."""

from __future__ import annotations

import contextlib
import hashlib
import re
import shutil
import tarfile
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from skillgym_core.envbuild.provider import EnvironmentBuildError
from skillgym_core.sandbox.container.tarsafe import extract_data
from skillgym_core.sandbox.container.users import REMAP_SCRIPT, REMAP_SCRIPT_NAME, remap_dockerfile

BASE_REPO = "localhost/skillgym-base"
DEBIAN_BASE = f"{BASE_REPO}/debian:bookworm"
PYTHON_BASE = f"{BASE_REPO}/python:3.11"
TASK_REPO = "localhost/skillgym-task"
# (pattern on the image name without registry and tag, local stand-in)
NEAREST_BASES: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(r"^(?:library/)?python$"), PYTHON_BASE),
    (re.compile(r"^(?:library/)?(?:debian|ubuntu|buildpack-deps)$"), DEBIAN_BASE),
)
_FROM = re.compile(r"^(\s*FROM\s+)((?:--\S+\s+)*)(\S+)(.*)$", re.I)
LOG_TAIL_LINES = 40
FAILURE_MEMORY_S = 300.0  # how long a failed build or pull is answered from memory
MAX_EXPORT_BYTES = 512 * 1024 * 1024


@dataclass(frozen=True)
class BuiltImage:
    tag: str
    cache_hit: bool
    build_seconds: float
    substitutions: dict[str, str] = field(default_factory=dict)  # FROM as written -> local base used

    @property
    def warnings(self) -> list[str]:
        return [f"FROM {wanted} is not available locally (no registry is reachable); built on {used}, the nearest "
                "local base" for wanted, used in self.substitutions.items()]


def _repository(reference: str) -> str:
    """``docker.io/library/python:3.11-slim`` -> ``library/python``."""
    name = reference.split("@", 1)[0]
    last = name.rsplit("/", 1)[-1]
    if ":" in last:
        name = name[: len(name) - len(last)] + last.split(":", 1)[0]
    first, _, rest = name.partition("/")
    if rest and ("." in first or ":" in first or first == "localhost"):
        name = rest
    return name


def nearest_base(reference: str) -> str | None:
    repository = _repository(reference)
    return next((local for pattern, local in NEAREST_BASES if pattern.match(repository)), None)


def resolve_from_lines(dockerfile: str, exists: Callable[[str], bool]) -> tuple[str, dict[str, str]]:
    """The Dockerfile with every ``FROM`` the engine lacks pointed at its nearest local base; raises
    :class:`EnvironmentBuildError` (``base_image_unavailable``) for a base with no stand-in."""
    stages: set[str] = set()
    substitutions: dict[str, str] = {}
    lines = []
    for line in dockerfile.splitlines():
        match = _FROM.match(line)
        if match:
            prefix, flags, image, rest = match.groups()
            alias = re.match(r"\s+AS\s+(\S+)", rest, re.I)
            if image.lower() not in stages and "$" not in image and image != "scratch" and not exists(image):
                local = nearest_base(image)
                if local is None:
                    raise EnvironmentBuildError(
                        f"FROM {image}: not available locally and no local base stands in for it",
                        reason="base_image_unavailable", image=image)
                substitutions[image] = local
                line = f"{prefix}{flags}{local}{rest}"
            if alias:
                stages.add(alias.group(1).lower())
        lines.append(line)
    return "\n".join(lines) + "\n", substitutions


def context_digest(context: Path, dockerfile: str, bases: dict[str, str]) -> str:
    digest = hashlib.sha256(dockerfile.encode())
    for wanted, used in sorted(bases.items()):
        digest.update(f"\0base\0{wanted}\0{used}".encode())
    for path in sorted(p for p in context.rglob("*") if not p.is_symlink()):
        rel = path.relative_to(context).as_posix()
        if path.is_file():
            digest.update(f"\0file\0{rel}\0{path.stat().st_mode & 0o777:o}\0".encode())
            digest.update(path.read_bytes())
        elif path.is_dir():
            digest.update(f"\0dir\0{rel}".encode())
    return digest.hexdigest()


class ImageBuilder:
    """Builds (or finds) the image of one build context; one build per tag at a time."""

    def __init__(self, client: Any, *, repository: str = TASK_REPO, build_network: str | None = None) -> None:
        self.client = client
        self.repository = repository
        self.build_network = build_network
        self._locks: dict[str, threading.Lock] = {}
        self._guard = threading.Lock()
        # every run of a task prepares its image: a build or pull that just failed is not retried
        # for each of them, only once FAILURE_MEMORY_S has passed
        self._failed: dict[str, tuple[float, EnvironmentBuildError]] = {}

    def _remembered(self, key: str) -> None:
        failed = self._failed.get(key)
        if failed is not None and time.monotonic() - failed[0] < FAILURE_MEMORY_S:
            # a new exception each time: one shared object would gather every raiser's traceback
            raise EnvironmentBuildError(str(failed[1]), reason=failed[1].reason, **failed[1].details)

    def _attempt(self, key: str, work: Callable[[], BuiltImage]) -> BuiltImage:
        self._remembered(key)
        try:
            return work()
        except EnvironmentBuildError as exc:
            self._failed[key] = (time.monotonic(), exc)
            raise

    def _exists(self, reference: str) -> bool:
        from docker.errors import ImageNotFound

        try:
            self.client.images.get(reference)
        except ImageNotFound:
            return False
        return True

    def prebuilt(self, reference: str) -> BuiltImage:
        """A task's ``docker_image``: on the engine already, or pulled now; a typed
        ``base_image_unavailable`` when it can be neither (no registry reachable)."""
        return self._attempt(f"pull:{reference}", lambda: self._prebuilt(reference))

    def _prebuilt(self, reference: str) -> BuiltImage:
        from docker.errors import DockerException

        if self._exists(reference):
            return BuiltImage(reference, True, 0.0, {})
        started = time.monotonic()
        try:
            self.client.api.pull(reference)
        except DockerException as exc:
            raise EnvironmentBuildError(f"the task's image {reference} is not on the engine and could not be pulled: "
                                        f"{str(exc)[:300]}", reason="base_image_unavailable", image=reference) from exc
        if not self._exists(reference):
            raise EnvironmentBuildError(f"the task's image {reference} could not be pulled",
                                        reason="base_image_unavailable", image=reference)  # fmt: skip
        return BuiltImage(reference, False, time.monotonic() - started, {})

    def ensure(self, context: Path, *, dockerfile: str = "Dockerfile", timeout_s: float = 600.0) -> BuiltImage:
        path = context / dockerfile
        if not path.is_file():
            raise EnvironmentBuildError(f"{path}: no Dockerfile", reason="environment_build_failed", path=str(path))
        text, substitutions = resolve_from_lines(path.read_text(errors="replace"), self._exists)
        tag = f"{self.repository}:{context_digest(context, text, substitutions)[:32]}"
        return self._once(tag, lambda: self._build(context, dockerfile, text, tag, timeout_s), substitutions)

    def as_user(self, base: BuiltImage, user: str, uid: int, *, timeout_s: float = 600.0) -> BuiltImage:
        """``base`` with one more layer in which the image's ``user`` has the sandbox ``uid``
        (see :mod:`skillgym_core.sandbox.container.users`); cached by the base image's id."""
        base_id = str(self.client.images.get(base.tag).id)
        key = hashlib.sha256(f"{base_id}\0{user}\0{uid}\0{REMAP_SCRIPT}".encode()).hexdigest()
        tag = f"{self.repository}:{key[:32]}"

        def build() -> None:
            with tempfile.TemporaryDirectory(prefix="skillgym-user-") as tmp:
                context = Path(tmp)
                (context / REMAP_SCRIPT_NAME).write_text(REMAP_SCRIPT)
                self._build(context, "Dockerfile", remap_dockerfile(base.tag, user, uid), tag, timeout_s)

        built = self._once(tag, build, base.substitutions)
        return BuiltImage(built.tag, built.cache_hit and base.cache_hit,
                          base.build_seconds + built.build_seconds, base.substitutions)

    def _once(self, tag: str, build: Callable[[], None], substitutions: dict[str, str]) -> BuiltImage:
        """The image ``tag``: found on the engine, or built now (one build per tag at a time)."""
        with self._guard:
            lock = self._locks.setdefault(tag, threading.Lock())
        with lock:
            if self._exists(tag):
                return BuiltImage(tag, True, 0.0, substitutions)

            def timed() -> BuiltImage:
                started = time.monotonic()
                build()
                return BuiltImage(tag, False, time.monotonic() - started, substitutions)

            return self._attempt(f"build:{tag}", timed)

    def _build(self, context: Path, dockerfile: str, text: str, tag: str, timeout_s: float) -> None:
        from docker.errors import APIError, DockerException

        log: list[str] = []
        with tempfile.TemporaryDirectory(prefix="skillgym-build-") as tmp:
            staged = Path(tmp) / "context"
            shutil.copytree(context, staged, symlinks=True)
            (staged / dockerfile).write_text(text)
            try:
                stream = self.client.api.build(
                    path=str(staged), dockerfile=dockerfile, tag=tag, rm=True, forcerm=True, pull=False,
                    decode=True, timeout=int(timeout_s), network_mode=self.build_network,
                    labels={"io.skillgym.task-image": "1"},
                )
                for chunk in stream:
                    if "stream" in chunk:
                        log.extend(str(chunk["stream"]).splitlines())
                    if "error" in chunk:
                        log.append(str(chunk["error"]).strip())
                        raise EnvironmentBuildError(
                            f"the Dockerfile did not build: {str(chunk['error']).strip()[:300]}",
                            reason="environment_build_failed", log_tail="\n".join(log[-LOG_TAIL_LINES:]))
            except (APIError, DockerException, OSError) as exc:
                raise EnvironmentBuildError(f"the Dockerfile did not build: {exc}", reason="environment_build_failed",
                                            log_tail="\n".join(log[-LOG_TAIL_LINES:])) from exc
        if not self._exists(tag):
            raise EnvironmentBuildError("the build ended without an image", reason="environment_build_failed",
                                        log_tail="\n".join(log[-LOG_TAIL_LINES:]))

    def export(self, image: str, path: str, dest: Path) -> bool:
        """Unpack the image's files under ``path`` into ``dest`` as plain data (the tar ``data``
        filter: no absolute names, no links out, no devices); False when the image has no ``path``."""
        from docker.errors import DockerException, NotFound

        api = self.client.api
        container = api.create_container(image, command=["true"], network_disabled=True)
        try:
            with tempfile.TemporaryFile() as spool:
                try:
                    stream, _ = api.get_archive(container["Id"], path)
                except NotFound:
                    return False
                size = 0
                for chunk in stream:
                    size += len(chunk)
                    if size > MAX_EXPORT_BYTES:
                        raise EnvironmentBuildError(f"{image}:{path} holds more than {MAX_EXPORT_BYTES} bytes",
                                                    reason="workspace_too_large", image=image)
                    spool.write(chunk)
                spool.seek(0)
                with tarfile.open(fileobj=spool) as archive, tempfile.TemporaryDirectory() as tmp:
                    extract_data(archive, Path(tmp))
                    top = Path(tmp) / Path(path.rstrip("/")).name
                    if not top.is_dir():
                        return False
                    dest.mkdir(parents=True, exist_ok=True)
                    for item in top.iterdir():
                        shutil.move(str(item), dest / item.name)
            return True
        finally:
            with contextlib.suppress(DockerException):
                api.remove_container(container["Id"], force=True)
