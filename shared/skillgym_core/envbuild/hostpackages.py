"""System packages a task's Dockerfile installs with apt, and whether this host already has
them: the local sandbox runs on the host's own system tree, so a SkillGym task whose family
declares a package the host lacks cannot run there (it runs on the container sandbox)."""

from __future__ import annotations

import re
import shutil
import subprocess
from collections.abc import Iterable
from functools import lru_cache

from skillgym_core.envbuild.dockerparse import Instruction

_INSTALL = re.compile(r"\bapt(?:-get)?\s+(?:-\S+\s+)*install\b(?P<rest>[^;&|]*)")
_PACKAGE = re.compile(r"^[a-z0-9][a-z0-9+.-]+(?:[:=][\w.+~:-]+)?$")


def apt_packages(instructions: Iterable[Instruction]) -> list[str]:
    """The package names ``RUN apt-get install`` lines name (options and versions left out)."""
    names: list[str] = []
    for instruction in instructions:
        if instruction.keyword != "RUN":
            continue
        for match in _INSTALL.finditer(instruction.args):
            for token in match.group("rest").split():
                if not token.startswith("-") and _PACKAGE.match(token):
                    names.append(re.split(r"[:=]", token, maxsplit=1)[0])
    return sorted(set(names))


@lru_cache(maxsize=256)
def on_host(package: str) -> bool:
    """Whether the host has ``package``: dpkg's word where the host has dpkg, else a program of
    that name on PATH."""
    if shutil.which("dpkg-query"):
        done = subprocess.run(["dpkg-query", "-W", "-f=${Status}", package], capture_output=True, text=True,
                              timeout=30, check=False)  # fmt: skip
        return done.returncode == 0 and done.stdout.strip().endswith(" installed")
    return shutil.which(package) is not None


def missing_on_host(packages: Iterable[str]) -> list[str]:
    return [package for package in packages if not on_host(package)]
