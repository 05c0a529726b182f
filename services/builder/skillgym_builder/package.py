"""Write a Harbor task directory from a template's output: instruction, environment (Dockerfile,
initial workspace, the skill), trusted tests, the reference solution and ``[metadata]``."""

from __future__ import annotations

import hashlib
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from skillgym_core.contracts.task import (
    AGENT_WORKDIR,
    EnvironmentSection,
    ProtectedInput,
    SkillGymMetadata,
    TaskConfig,
    TaskDir,
    TaskSection,
    TimeoutSection,
)
from skillgym_core.ids import content_id, hash_tree

from skillgym_builder.skillcard import SkillCard
from skillgym_builder.templates.base import TemplateOutput, TemplateSpec

SKILLS_TARGET = "/skills"


@dataclass(frozen=True)
class BuildInfo:
    revision: int = 0
    parent_task_id: str | None = None
    builder: str = "auto"  # "llm" | "template" once built; "auto" = LLM when configured
    patterns: tuple[str, ...] = ()
    extra: dict[str, Any] | None = None


def dockerfile(spec: TemplateSpec) -> str:
    base = spec.runtime.get("base_image", "python:3.11-slim")
    deps = list(spec.runtime.get("dependencies", []))
    install = f"RUN pip install --no-cache-dir {' '.join(deps)}\n" if deps else ""
    return (
        f"FROM {base}\n"
        f"{install}"
        f"WORKDIR {AGENT_WORKDIR}\n"
        f"COPY workspace/ {AGENT_WORKDIR}/\n"
        f"COPY skills/ {SKILLS_TARGET}/\n"
    )


def solve_script(steps: list[str]) -> str:
    body = "\n".join(steps)
    return f"#!/usr/bin/env bash\n# Reference solution: one command per step.\nset -euo pipefail\ncd {AGENT_WORKDIR}\n{body}\n"


def _write(root: Path, files: dict[str, bytes], executable: tuple[str, ...] = (".sh",)) -> None:
    for rel, data in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
        path.chmod(0o755 if rel.endswith(executable) else 0o644)


def write_task(
    dest: Path, card: SkillCard, spec: TemplateSpec, output: TemplateOutput, info: BuildInfo
) -> tuple[str, TaskDir]:
    """Materialise the task under ``dest`` (must not exist yet); return (task_id, TaskDir)."""
    task = TaskDir(dest)
    dest.mkdir(parents=True)
    (dest / "instruction.md").write_text(output.instruction)
    env = dest / "environment"
    _write(env / "workspace", output.workspace, executable=())
    (env / "workspace").mkdir(parents=True, exist_ok=True)
    (env / "Dockerfile").write_text(dockerfile(spec))
    shutil.copytree(card.root, task.skills / card.dir_name, symlinks=False, ignore_dangling_symlinks=True)
    _write(task.tests, output.tests)
    script = output.solve_script if output.solve_script is not None else solve_script(output.solution_steps)
    solution = {**output.solution_files, "solve.sh": script.encode()}
    for name, steps in output.alternatives.items():
        solution[f"alternatives/{name}.sh"] = solve_script(steps).encode()
    _write(task.solution, solution)

    files_hash = hash_tree(dest)
    task_id = content_id(
        "task",
        {"skill": card.record.skill_id, "template": spec.id, "revision": info.revision, "files": files_hash},
    )
    protected = [
        ProtectedInput(path=rel, sha256=hashlib.sha256(output.workspace[rel]).hexdigest())
        for rel in sorted(output.protected)
    ]
    blueprint = output.blueprint or spec.blueprint
    metadata = SkillGymMetadata(
        task_id=task_id,
        skill_id=card.record.skill_id,
        skill_name=card.name,
        template=spec.id,
        profile=spec.profile,
        category=card.record.subcategory or card.record.category,
        difficulty=spec.difficulty,
        blueprint=blueprint.model_dump(),
        difficulty_patterns=list(info.patterns or blueprint.patterns),
        revision=info.revision,
        parent_task_id=info.parent_task_id,
        labels=[],
        protected_inputs=protected,
        builder=info.builder,
        rubric=[item.model_dump() for item in spec.rubric],
        params=output.params,
        **(info.extra or {}),
    )
    config = TaskConfig(
        source=f"skillgym:{card.record.skill_id}",
        task=TaskSection(
            name=f"skillgym/{card.dir_name}-{spec.id}-r{info.revision}",
            description=spec.title,
            keywords=["skillgym", spec.profile, spec.id, card.dir_name],
        ),
        metadata=metadata,
        verifier=TimeoutSection(timeout_sec=spec.limits.verifier_timeout_sec),
        agent=TimeoutSection(timeout_sec=spec.limits.agent_timeout_sec),
        environment=EnvironmentSection(
            build_timeout_sec=spec.limits.build_timeout_sec,
            cpus=spec.limits.cpus,
            memory_mb=spec.limits.memory_mb,
            storage_mb=spec.limits.storage_mb,
            gpus=0,
            allow_internet=False,
            workdir=AGENT_WORKDIR,
            skills_dir=SKILLS_TARGET,
        ),
    )
    task.write_config(config)
    return task_id, task
