"""The draft workspace the builder agent writes into, and the tools it is given.

Files may be written only under the task's own parts (instruction, workspace, tests, solution,
the plan); the skill is provided read-only. Commands run in the sandbox, never on the host."""

from __future__ import annotations

import json
import shutil
from pathlib import Path, PurePosixPath
from typing import Any

from skillgym_core.contracts.task import TaskDir
from skillgym_core.sandbox.base import Limits, Mount, Sandbox
from skillgym_core.sandbox.workspace import read_regular_file

from skillgym_builder.errors import BuildError

WRITABLE_ROOTS = (
    "instruction.md", "task_plan.json", "environment/workspace/", "environment/requirements.txt", "tests/", "solution/",
)
DRAFT_MOUNT = "/draft"
SEED_MOUNT = "/seed"
MAX_FILE_BYTES = 512 * 1024
OUTPUT_CHARS = 6000

TOOLS: list[dict[str, Any]] = [
    {"type": "function", "function": {
        "name": "write_file", "description": "Create or replace a file of the task draft.",
        "parameters": {"type": "object", "properties": {"path": {"type": "string"}, "content": {"type": "string"}},
                       "required": ["path", "content"]}}},
    {"type": "function", "function": {
        "name": "delete_file", "description": "Delete a file of the task draft.",
        "parameters": {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]}}},
    {"type": "function", "function": {
        "name": "read_file",
        "description": "Read a file of the draft, of the skill (skill/<path>) or of the family's seed task (seed/<path>).",
        "parameters": {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]}}},
    {"type": "function", "function": {
        "name": "list_files", "description": "List the draft's, the skill's and the seed task's files.",
        "parameters": {"type": "object", "properties": {}}}},
    {"type": "function", "function": {
        "name": "run_command",
        "description": "Run a bash command in the sandbox: the draft is at /draft (writable), the skill at /skills, "
                       "the seed task at /seed.",
        "parameters": {"type": "object", "properties": {"command": {"type": "string"}}, "required": ["command"]}}},
    {"type": "function", "function": {
        "name": "validate",
        "description": "Build the draft into a task and run it: the untouched workspace must fail, the reference "
                       "solution must pass. Returns the problems found.",
        "parameters": {"type": "object", "properties": {}}}},
    {"type": "function", "function": {
        "name": "skip", "description": "Declare the skill unsuitable for this kind of task, with the reason.",
        "parameters": {"type": "object", "properties": {"reason": {"type": "string"}}, "required": ["reason"]}}},
    {"type": "function", "function": {
        "name": "finish", "description": "Submit the draft for review.",
        "parameters": {"type": "object", "properties": {"summary": {"type": "string"}}}}},
]


class DraftPathError(BuildError):
    reason = "draft_path"


class Draft:
    def __init__(self, root: Path, skills: Path, sandbox: Sandbox, seed: Path | None = None) -> None:
        self.root = root
        self.skills = skills
        self.sandbox = sandbox
        self.seed = seed
        self.changes = 0  # writes and deletes so far, to tell whether a validation is still current
        self.root.mkdir(parents=True, exist_ok=True)

    def _target(self, rel: str, *, writing: bool) -> Path:
        path = PurePosixPath(rel.strip())
        if path.is_absolute() or ".." in path.parts or not path.parts:
            raise DraftPathError(f"path must be relative and stay inside the draft: {rel!r}")
        text = path.as_posix()
        if writing and not any(text == r or text.startswith(r) for r in WRITABLE_ROOTS):
            raise DraftPathError(f"{rel!r} is not writable; allowed: {', '.join(WRITABLE_ROOTS)}")
        if text.startswith("skill/"):
            return self.skills.joinpath(*path.parts[1:])
        if text.startswith("seed/") and self.seed is not None:
            return self.seed.joinpath(*path.parts[1:])
        return self.root.joinpath(*path.parts)

    def write(self, rel: str, content: str) -> str:
        target = self._target(rel, writing=True)
        if len(content.encode()) > MAX_FILE_BYTES:
            raise DraftPathError(f"{rel} is larger than {MAX_FILE_BYTES} bytes")
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(content)
        target.chmod(0o755 if rel.endswith(".sh") else 0o644)
        self.changes += 1
        return f"wrote {rel} ({len(content)} chars)"

    def delete(self, rel: str) -> str:
        target = self._target(rel, writing=True)
        if not target.is_file():
            return f"no such file: {rel}"
        target.unlink()
        self.changes += 1
        return f"deleted {rel}"

    def read(self, rel: str) -> str:
        data = read_regular_file(self._target(rel, writing=False), max_bytes=MAX_FILE_BYTES)
        if data is None:
            return f"no such file: {rel}"
        return data.decode("utf-8", "replace")

    def listing(self) -> str:
        draft = sorted(p.relative_to(self.root).as_posix() for p in self.root.rglob("*") if p.is_file())
        skill = sorted("skill/" + p.relative_to(self.skills).as_posix() for p in self.skills.rglob("*") if p.is_file())
        seed = sorted("seed/" + p.relative_to(self.seed).as_posix() for p in self.seed.rglob("*") if p.is_file()) \
            if self.seed is not None else []
        return "\n".join(draft + skill + seed)

    def run(self, command: str) -> str:
        result = self.sandbox.run(
            ["bash", "-lc", command],
            mounts=[Mount(self.root, DRAFT_MOUNT, writable=True), Mount(self.skills.parent, "/skills"),
                    *([Mount(self.seed, SEED_MOUNT)] if self.seed is not None else [])],
            workdir=DRAFT_MOUNT,
            limits=Limits(wall_s=60, memory_mb=1024),
        )
        output = (result.stdout + result.stderr)[-OUTPUT_CHARS:]
        return f"exit={result.exit_code} outcome={result.outcome.value}\n{output}"

    def files(self, prefix: str) -> dict[str, bytes]:
        base = self.root / prefix
        if not base.is_dir():
            return {}
        return {p.relative_to(base).as_posix(): p.read_bytes() for p in sorted(base.rglob("*")) if p.is_file()}

    def plan(self) -> dict[str, Any]:
        path = self.root / "task_plan.json"
        if not path.is_file():
            return {}
        try:
            value = json.loads(path.read_text())
        except json.JSONDecodeError as exc:
            raise BuildError(f"task_plan.json is not JSON: {exc}", reason="draft_invalid") from exc
        return value if isinstance(value, dict) else {}

    def seed_from(self, task_root: Path) -> None:
        """Start from a task's editable parts (the previous revision, or the family's instance),
        with its protected inputs listed in task_plan.json."""
        for part in ("instruction.md", "environment/workspace", "environment/requirements.txt", "tests", "solution"):
            source = task_root / part
            if source.is_dir():
                shutil.copytree(source, self.root / part, dirs_exist_ok=True)
            elif source.is_file():
                (self.root / part).parent.mkdir(parents=True, exist_ok=True)
                shutil.copy2(source, self.root / part)
        config = task_root / "task.toml"
        if config.is_file() and not (self.root / "task_plan.json").exists():
            metadata = TaskDir(task_root).config().metadata
            plan = {"protected": [item.path for item in metadata.protected_inputs], "blueprint": metadata.blueprint,
                    "skill_claim": getattr(metadata, "skill_claim", None)}
            (self.root / "task_plan.json").write_text(json.dumps(plan, indent=2))
