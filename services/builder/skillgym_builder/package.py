"""Write a Harbor task directory from a template's output: instruction, environment (Dockerfile,
initial workspace, the skill), trusted tests, the reference solution and ``[metadata]``."""

from __future__ import annotations

import hashlib
import json
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
REQUIREMENTS_IN_IMAGE = "/tmp/requirements.txt"
# metadata an output may set that the writer places itself
OWN_METADATA = frozenset({"difficulty", "rubric"})


@dataclass(frozen=True)
class BuildInfo:
    revision: int = 0
    parent_task_id: str | None = None
    builder: str = "auto"  # "llm" | "template" once built; "auto" = LLM when configured
    patterns: tuple[str, ...] = ()
    extra: dict[str, Any] | None = None


def dockerfile(spec: TemplateSpec, requirements: list[str] | None = None,
               system_packages: list[str] | None = None) -> str:
    """The image the task runs in: the declared requirements (``environment/requirements.txt``,
    installed the same way the local environment builder installs them), system packages the
    task needs (the family's and the instance's own), the workspace and the skill."""
    base = spec.runtime.get("base_image", "python:3.11-slim")
    apt = sorted({*spec.runtime.get("apt_packages", []), *(system_packages or [])})
    deps = list(spec.runtime.get("dependencies", []))
    lines = [f"FROM {base}"]
    if apt:
        lines.append(
            "RUN apt-get update && apt-get install -y --no-install-recommends "
            f"{' '.join(apt)} && rm -rf /var/lib/apt/lists/*"
        )
    lines.append(f"WORKDIR {AGENT_WORKDIR}")
    if requirements:
        lines += [
            f"COPY requirements.txt {REQUIREMENTS_IN_IMAGE}",
            f"RUN pip install --no-cache-dir -r {REQUIREMENTS_IN_IMAGE}",
        ]
    elif deps:  # the text templates' stdlib-only runtime never lists any; kept for their specs
        lines.append(f"RUN pip install --no-cache-dir {' '.join(deps)}")
    lines += [f"COPY workspace/ {AGENT_WORKDIR}/", f"COPY skills/ {SKILLS_TARGET}/"]
    return "\n".join(lines) + "\n"


def solve_script(steps: list[str]) -> str:
    body = "\n".join(steps)
    return f"#!/usr/bin/env bash\n# Reference solution: one command per step.\nset -euo pipefail\ncd {AGENT_WORKDIR}\n{body}\n"


def _write(root: Path, files: dict[str, bytes], executable: tuple[str, ...] = (".sh",)) -> None:
    for rel, data in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
        path.chmod(0o755 if rel.endswith(executable) else 0o644)


def without_none(value: Any) -> Any:
    """``value`` with every null dropped (TOML has no null)."""
    if isinstance(value, dict):
        return {k: without_none(v) for k, v in value.items() if v is not None}
    if isinstance(value, list | tuple):
        return [without_none(v) for v in value if v is not None]
    return value


def _readable(root: Path) -> None:
    """World-readable modes below ``root`` (the skill's own folder may come from a private temp dir),
    as an image build would leave them: the sandbox's uid must read the skill."""
    for path in [root, *root.rglob("*")]:
        if not path.is_symlink():
            path.chmod(0o755 if path.is_dir() or path.suffix == ".sh" else 0o644)


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
    (env / "Dockerfile").write_text(dockerfile(spec, output.requirements, output.system_packages))
    if output.requirements:
        (env / "requirements.txt").write_text("".join(f"{line}\n" for line in output.requirements))
    shutil.copytree(card.root, task.skills / card.dir_name, symlinks=False, ignore_dangling_symlinks=True)
    _readable(task.skills)
    tests = dict(output.tests)
    if output.equivalences:
        tests["equivalences.json"] = (json.dumps(output.equivalences, indent=2, sort_keys=True) + "\n").encode()
    _write(task.tests, tests)
    script = output.solve_script if output.solve_script is not None else solve_script(output.solution_steps)
    solution = {**output.solution_files, "solve.sh": script.encode()}
    for name, steps in output.alternatives.items():
        solution[f"alternatives/{name}.sh"] = solve_script(steps).encode()
    for name, text in output.alternative_scripts.items():
        solution[f"alternatives/{name}.sh"] = text.encode()
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
        difficulty=str(output.metadata.get("difficulty", spec.difficulty)),
        blueprint=blueprint.model_dump(),
        difficulty_patterns=list(info.patterns or blueprint.patterns),
        revision=info.revision,
        parent_task_id=info.parent_task_id,
        labels=[],
        protected_inputs=protected,
        builder=info.builder,
        rubric=output.metadata.get("rubric") or [item.model_dump() for item in spec.rubric],
        params=output.params,
        **without_none({**{k: v for k, v in output.metadata.items() if k not in OWN_METADATA}, **(info.extra or {})}),
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
