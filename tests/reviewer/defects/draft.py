"""A task draft: every file of a Harbor task as data, so a defect can be planted by editing it.

The verifier is the builder's: ``tests/test.sh`` runs ``tests/verify.py``, which imports the
rubric runner ``tests/checks.py`` and grades one rubric item per named check function (the
sources in :attr:`Draft.checks`); ``tests/rubric.json`` weighs them equally."""

from __future__ import annotations

import copy
import hashlib
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from skillgym_core.builtin_verifier import runner_text
from skillgym_core.contracts.task import (
    EnvironmentSection,
    ProtectedInput,
    SkillGymMetadata,
    TaskConfig,
    TaskDir,
    TaskSection,
    TimeoutSection,
)

BUILDER_TEST_SH = runner_text("test.sh")
RUBRIC_RUNNER = runner_text("checks.py")
DOCKERFILE = "FROM python:3.11-slim\nWORKDIR /app\nCOPY workspace/ /app/\nCOPY skills/ /skills/\n"

VERIFY_HEADER = '''"""Verifier for the {slug} task."""

import json
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from checks import APP, app_path, load_expected, read_json, read_lines, run, run_untrusted, share

EXPECTED = load_expected()


def number(value):
    """A JSON number: neither a bool nor a numeric string."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise TypeError(f"not a number: {{value!r}}")
    return float(value)


def close(got, want, tolerance=0.001):
    return abs(number(got) - want) <= tolerance
'''


def solve_sh(*commands: str) -> str:
    return "#!/usr/bin/env bash\nset -euo pipefail\ncd /app\n" + "".join(f"{command}\n" for command in commands)


@dataclass
class Draft:
    """One task's files. Workspace, skills, tests and solution paths are relative to their folder."""

    slug: str
    skill_name: str
    instruction: str
    workspace: dict[str, str | bytes]
    skills: dict[str, str]
    solution: dict[str, str]
    expected: Any
    checks: dict[str, str]
    protected: list[str]
    prelude: str = ""
    tests: dict[str, str] = field(default_factory=dict)  # replaces or adds files under tests/
    dockerfile: str = DOCKERFILE
    verifier_timeout_s: float = 30
    agent_timeout_s: float = 60

    def copy(self) -> Draft:
        return copy.deepcopy(self)

    def verify_py(self) -> str:
        parts = [VERIFY_HEADER.format(slug=self.slug)]
        if self.prelude:
            parts.append(self.prelude.strip("\n") + "\n")
        parts += [source.strip("\n") + "\n" for source in self.checks.values()]
        items = ", ".join(f'("{name}", {name})' for name in self.checks)
        parts.append(f"run([{items}])\n")
        return "\n\n".join(parts)

    def rubric(self) -> list[dict[str, Any]]:
        weight = 1 / len(self.checks)
        return [{"name": name, "weight": weight, "kind": "programmatic"} for name in self.checks]

    def files(self) -> dict[str, str | bytes]:
        tests: dict[str, str] = {
            "test.sh": BUILDER_TEST_SH,
            "checks.py": RUBRIC_RUNNER,
            "verify.py": self.verify_py(),
            "expected.json": json.dumps(self.expected, indent=2, sort_keys=True) + "\n",
            "rubric.json": json.dumps(self.rubric(), indent=2) + "\n",
            **self.tests,
        }
        return {
            "instruction.md": self.instruction,
            "environment/Dockerfile": self.dockerfile,
            **{f"environment/workspace/{rel}": data for rel, data in self.workspace.items()},
            **{f"environment/skills/{rel}": text for rel, text in self.skills.items()},
            **{f"tests/{rel}": text for rel, text in tests.items()},
            **{f"solution/{rel}": text for rel, text in self.solution.items()},
        }

    def write(self, root: Path) -> TaskDir:
        """The task directory at ``root`` (which must not exist yet)."""
        root.mkdir(parents=True)
        for rel, data in self.files().items():
            path = root / rel
            path.parent.mkdir(parents=True, exist_ok=True)
            if isinstance(data, bytes):
                path.write_bytes(data)
            else:
                path.write_text(data)
            path.chmod(0o755 if rel.endswith(".sh") else 0o644)
        (root / "environment" / "workspace").mkdir(parents=True, exist_ok=True)
        task = TaskDir(root)
        config = TaskConfig(
            task=TaskSection(name=f"skillgym/{root.name}", description=self.slug),
            metadata=SkillGymMetadata(
                task_id=f"task-{root.name}",
                skill_id=f"skill-{self.skill_name}",
                skill_name=self.skill_name,
                template="hand-made",
                labels=["hand-made"],
                protected_inputs=[
                    ProtectedInput(path=rel, sha256=hashlib.sha256((task.workspace / rel).read_bytes()).hexdigest())
                    for rel in sorted(self.protected)
                ],
            ),
            verifier=TimeoutSection(timeout_sec=self.verifier_timeout_s),
            agent=TimeoutSection(timeout_sec=self.agent_timeout_s),
            environment=EnvironmentSection(skills_dir="/skills", memory_mb=1024, storage_mb=256),
        )
        task.write_config(config)
        return task


def replaced(text: str, old: str, new: str) -> str:
    """``text`` with its one occurrence of ``old`` replaced; a planted edit never silently misses."""
    if text.count(old) != 1:
        raise ValueError(f"expected exactly one {old!r} in the text, found {text.count(old)}")
    return text.replace(old, new)
