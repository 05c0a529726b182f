"""Rendering inputs that need a real library (a workbook made with openpyxl, ...): the family's
render script runs in the sandbox with a cached environment of the family's build requirements,
and the files it writes become the task's workspace."""

from __future__ import annotations

import json
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from skillgym_core.contracts.task import TaskDir
from skillgym_core.envbuild import EnvironmentBuildError, EnvironmentProvider
from skillgym_core.sandbox.base import Limits, Mount, Sandbox
from skillgym_core.sandbox.janitor import remove_tree
from skillgym_core.sandbox.workspace import read_regular_file

from skillgym_builder.errors import BuildError

RENDER_IN, RENDER_OUT = "/render", "/rendered"
MAX_ASSET_BYTES = 32 * 1024 * 1024


class RenderError(BuildError):
    """The inputs of an instance could not be rendered (environment, script or missing output)."""

    reason = "render_failed"


@dataclass(frozen=True)
class RenderJob:
    script: str  # python3 source; run as ``python3 render.py params.json OUTDIR``
    params: dict[str, Any]
    requirements: tuple[str, ...]
    produces: tuple[str, ...]  # paths below OUTDIR that become workspace files
    timeout_s: float = 120.0


class AssetRenderer(Protocol):
    def render(self, job: RenderJob) -> dict[str, bytes]:
        """The produced files by relative path; raises :class:`RenderError`."""
        ...


class SandboxRenderer:
    def __init__(self, sandbox: Sandbox, environment: EnvironmentProvider | None, scratch: Path) -> None:
        self.sandbox = sandbox
        self.environment = environment
        self.scratch = scratch

    def _environment_mounts(self, job: RenderJob, work: Path) -> tuple[list[Mount], dict[str, str] | None]:
        if not job.requirements:
            return [], None
        if self.environment is None:
            raise RenderError("rendering needs an environment builder (local sandbox only)",
                              requirements=list(job.requirements))
        holder = work / "env"
        (holder / "environment").mkdir(parents=True)
        (holder / "environment" / "requirements.txt").write_text("".join(f"{r}\n" for r in job.requirements))
        try:
            prepared = self.environment.prepare(TaskDir(holder))
        except EnvironmentBuildError as exc:
            raise RenderError(f"the render environment did not build: {exc}", reason="render_environment",
                              environment=exc.to_dict()) from exc
        return ([], None) if prepared is None else (prepared.mounts(), prepared.run_env(None))

    def render(self, job: RenderJob) -> dict[str, bytes]:
        self.scratch.mkdir(parents=True, exist_ok=True)
        work = Path(tempfile.mkdtemp(prefix="render-", dir=self.scratch))
        try:
            inputs, outputs = work / "in", work / "out"
            inputs.mkdir()
            outputs.mkdir()
            (inputs / "render.py").write_text(job.script)
            (inputs / "params.json").write_text(json.dumps(job.params))
            mounts, env = self._environment_mounts(job, work)
            result = self.sandbox.run(
                ["python3", f"{RENDER_IN}/render.py", f"{RENDER_IN}/params.json", RENDER_OUT],
                mounts=[Mount(inputs, RENDER_IN), Mount(outputs, RENDER_OUT, writable=True), *mounts],
                workdir=RENDER_OUT, env=env, limits=Limits(wall_s=job.timeout_s, memory_mb=1024),
            )  # fmt: skip
            if not result.ok:
                raise RenderError(f"render script failed ({result.outcome.value}, exit {result.exit_code}): "
                                  f"{result.stderr.strip()[-600:]}")
            files = {}
            for rel in job.produces:
                data = read_regular_file(outputs / rel, max_bytes=MAX_ASSET_BYTES)
                if data is None:
                    raise RenderError(f"render script did not write {rel}", missing=rel)
                files[rel] = data
            return files
        finally:
            remove_tree(work)
