"""Turn a task's reference solution into the steps an agent could have taken.

An agent never sees ``/solution``: it reads the skill, looks at its inputs, writes every script
it runs (full content, by heredoc, into a working directory), runs it and checks what changed.
The plan below has exactly that shape. Files the solution keeps under ``/solution`` are written
into the working directory by their own step, and every mention of ``/solution`` is pointed
there, so no command of the demonstration depends on, or names, the hidden solution."""

from __future__ import annotations

import base64
import contextlib
import re
import shlex
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

from skillgym_core.contracts.task import AGENT_WORKDIR

from skillgym_sampler.harness.script_split import split_statements

SOLUTION_ROOT = "/solution"
_SOLUTION = re.compile(r"(?<![\w.~/$}-])/solution(?![\w-])")
_SHELLS = re.compile(r"(?:^|/)(?:env\s+)?(?:ba)?sh\b")
_HEREDOC_WRITE = re.compile(r"^\s*cat\s+>\s*(\S+)\s+<<-?\s*['\"]?\w+")
_SET_OPTIONS = r"set\s+-[-a-zA-Z\s]*(?:o\s+\w+\s*)*"


def _noop_preamble(task_workdir: str) -> re.Pattern[str]:
    """Preamble lines that change nothing where every command already starts: shell options, and
    ``cd`` into the task's working directory."""
    return re.compile(rf"^(?:{_SET_OPTIONS}|cd\s+{re.escape(task_workdir)}/?)$")
_SKIPPED_DIRS = ("alternatives",)


@dataclass(frozen=True)
class DemoStep:
    message: str
    command: str
    kind: str  # skill | inspect | write | run | check


@dataclass
class Demonstration:
    steps: list[DemoStep] = field(default_factory=list)
    errexit: bool = False
    notes: list[str] = field(default_factory=list)


def _heredoc(path: str, data: bytes, mode: int, *, existing: str = "") -> str:
    """A command writing ``data`` to ``path``: text by quoted heredoc, anything else base64;
    the parent directory is made unless it is ``existing``."""
    parent = str(PurePosixPath(path).parent)
    try:
        text = data.decode()
        writer, body = f"cat > {shlex.quote(path)}", text.rstrip("\n")
    except UnicodeDecodeError:
        writer, body = f"base64 -d > {shlex.quote(path)}", base64.encodebytes(data).decode().rstrip("\n")
    lines = set(body.splitlines())
    delimiter = "PY" if path.endswith(".py") else "EOF"
    suffix = 0
    while delimiter in lines:
        suffix += 1
        delimiter = f"{'PY' if path.endswith('.py') else 'EOF'}_{suffix}"
    mkdir = "" if parent == existing else f"mkdir -p {shlex.quote(parent)} && "
    command = f"{mkdir}{writer} <<'{delimiter}'\n{body}\n{delimiter}"
    return command + (f"\nchmod +x {shlex.quote(path)}" if mode & 0o111 else "")


def point_away(text: str, workdir: str) -> str:
    return _SOLUTION.sub(workdir, text)


def _solution_files(solution: Path) -> dict[str, Path]:
    files = {}
    for path in sorted(solution.rglob("*")):
        rel = path.relative_to(solution).as_posix()
        if path.is_file() and rel != "solve.sh" and not rel.startswith(tuple(f"{d}/" for d in _SKIPPED_DIRS)):
            files[rel] = path
    return files


def _needed_files(script: str, files: dict[str, Path], workdir: str) -> list[str]:
    """Solution files the script reaches, directly or through another needed file."""
    texts = [script]
    needed: list[str] = []
    changed = True
    while changed:
        changed = False
        for rel, path in files.items():
            if rel not in needed and any(f"{workdir}/{rel}" in text for text in texts):
                needed.append(rel)
                texts.append(point_away(path.read_bytes().decode(errors="replace"), workdir))
                changed = True
    return needed


def _run_message(command: str, comment: str) -> tuple[str, str]:
    if comment and not comment.lower().startswith("reference solution"):
        message = comment if comment.endswith((".", ":", "?", "!")) else f"{comment}."
        return message, "write" if _HEREDOC_WRITE.match(command) else "run"
    write = _HEREDOC_WRITE.match(command)
    if write:
        return f"Write `{write.group(1)}`.", "write"
    if "SKILL.md" in command:
        return "Read the skill's instructions.", "skill"
    first = command.strip().splitlines()[0]
    return f"Run `{first if len(first) <= 80 else first[:77] + '...'}`.", "run"


def _script_steps(script: str, workdir: str, task_workdir: str) -> tuple[list[DemoStep], bool, str]:
    """The script's own commands, or writing the script to a file and running it."""
    first = script.splitlines()[0] if script.startswith("#!") else ""
    interpreter = first[2:].strip()
    if first and not _SHELLS.search(interpreter):
        name = "solve.py" if "python" in interpreter else "solve"
        path = f"{workdir}/{name}"
        program = interpreter.removeprefix("/usr/bin/env ").strip()
        return (
            [DemoStep(f"Write the program to `{path}`.", _heredoc(path, script.encode(), 0, existing=workdir), "write"),
             DemoStep("Run it.", f"{program} {path}", "run")],
            True,
            "the solution is a program; written to a file and run",
        )  # fmt: skip
    split = split_statements(script)
    if split is None:
        path = f"{workdir}/solve.sh"
        return (
            [DemoStep(f"Write the whole procedure as `{path}`.", _heredoc(path, script.encode(), 0, existing=workdir), "write"),
             DemoStep("Run it.", f"bash {path}", "run")],
            True,
            "the solution keeps shell state between commands; written to a script and run",
        )  # fmt: skip
    noop = _noop_preamble(task_workdir)
    preamble = "\n".join(line for line in split.preamble.splitlines() if not noop.match(line.strip()))
    steps = []
    for command in split.commands:
        full = f"{preamble}\n{command.command}" if preamble else command.command
        message, kind = _run_message(command.command, command.comment)
        steps.append(DemoStep(message, full, kind))
    return steps, split.errexit, f"the solution split into {len(steps)} command(s)"


def plan_demonstration(solution: Path, *, skill_dirs: list[str], skills_mount: str, workdir: str,
                       task_workdir: str = AGENT_WORKDIR) -> Demonstration:  # fmt: skip
    """The steps for ``solution/solve.sh``; ``skill_dirs`` are the skills the agent is given,
    ``workdir`` the demonstration's scratch directory, ``task_workdir`` where the task's files are."""
    script = point_away((solution / "solve.sh").read_text(), workdir)
    files = _solution_files(solution)
    demo = Demonstration()
    for skill in skill_dirs:
        skill_file = f"{skills_mount}/{skill}/SKILL.md"
        if skill_file not in script:
            demo.steps.append(DemoStep("Read the skill's instructions first.", f"cat {skill_file}", "skill"))
    marker = f"{workdir}/.start"
    demo.steps.append(
        DemoStep("Look at the task's inputs.", f"mkdir -p {workdir} && touch {marker} && ls -la {task_workdir}",
                 "inspect")
    )  # fmt: skip
    for rel in _needed_files(script, files, workdir):
        path = files[rel]
        data = path.read_bytes()
        with contextlib.suppress(UnicodeDecodeError):
            data = point_away(data.decode(), workdir).encode()
        target = f"{workdir}/{rel}"
        demo.steps.append(
            DemoStep(f"Write `{target}`.", _heredoc(target, data, path.stat().st_mode, existing=workdir), "write")
        )
    steps, demo.errexit, note = _script_steps(script, workdir, task_workdir)
    demo.steps.extend(steps)
    demo.notes.append(note)
    demo.steps.append(
        DemoStep("Check which files the work created or changed.",
                 f"find {task_workdir} -newer {marker} -type f | sort | head -50", "check")
    )  # fmt: skip
    return demo
