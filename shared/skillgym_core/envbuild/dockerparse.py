"""Reading a Dockerfile: logical instructions, their words, ``ENV`` pairs and ``pip install`` calls."""

from __future__ import annotations

import json
import posixpath
import re
import shlex
from dataclasses import dataclass

PIP_VALUE_OPTIONS = {
    "-i", "--index-url", "--extra-index-url", "-f", "--find-links", "-c", "--constraint", "-t", "--target",
    "--prefix", "--root", "--platform", "--python-version", "--implementation", "--abi", "--trusted-host",
    "--cache-dir", "--src", "--upgrade-strategy", "--progress-bar", "--log", "--timeout", "--retries",
}  # fmt: skip


@dataclass(frozen=True)
class Instruction:
    keyword: str
    args: str
    line: int


def parse_dockerfile(text: str) -> list[Instruction]:
    """Logical instructions (continuations joined, comments dropped), with their first line number."""
    instructions: list[Instruction] = []
    pending: list[str] = []
    start = 0
    for number, raw in enumerate(text.splitlines(), start=1):
        stripped = raw.strip()
        if not stripped or stripped.startswith("#"):
            continue
        if not pending:
            start = number
        continued = stripped.endswith("\\")
        pending.append(stripped[:-1].strip() if continued else stripped)
        if not continued:
            keyword, _, args = " ".join(pending).partition(" ")
            instructions.append(Instruction(keyword.upper(), args.strip(), start))
            pending = []
    if pending:
        keyword, _, args = " ".join(pending).partition(" ")
        instructions.append(Instruction(keyword.upper(), args.strip(), start))
    return instructions


def split_words(args: str) -> list[str]:
    if args.startswith("["):
        try:
            value = json.loads(args)
            if isinstance(value, list):
                return [str(v) for v in value]
        except json.JSONDecodeError:
            pass
    try:
        return shlex.split(args, comments=False)
    except ValueError:
        return args.split()


def substitute(value: str, args: dict[str, str]) -> str:
    return re.sub(r"\$\{(\w+)\}|\$(\w+)", lambda m: args.get(m.group(1) or m.group(2), m.group(0)), value)


def env_pairs(words: list[str]) -> list[tuple[str, str]]:
    if not words:
        return []
    if "=" not in words[0]:  # legacy form: ENV NAME value with spaces
        return [(words[0], " ".join(words[1:]))]
    return [(name, value) for name, _, value in (w.partition("=") for w in words)]


def pip_installs(command: str) -> list[tuple[list[str], list[str]]]:
    """(requirement files, package arguments) of every ``pip install`` in a shell command."""
    found = []
    for segment in re.split(r"&&|\|\||;|\|", command):
        words = split_words(segment.strip())
        for index, word in enumerate(words):
            is_pip = posixpath.basename(word) in ("pip", "pip3") or (
                word == "pip" and index > 0 and words[index - 1] == "-m"
            )
            if not is_pip or index + 1 >= len(words) or words[index + 1] != "install":
                continue
            files, packages, rest = [], [], iter(words[index + 2 :])
            for arg in rest:
                if arg in ("-r", "--requirement"):
                    files.append(next(rest, ""))
                elif arg.startswith("--requirement="):
                    files.append(arg.split("=", 1)[1])
                elif arg.startswith("-r") and len(arg) > 2:
                    files.append(arg[2:])
                elif arg in PIP_VALUE_OPTIONS:
                    next(rest, None)
                elif not arg.startswith("-"):
                    packages.append(arg)
            found.append((files, packages))
            break
    return found
