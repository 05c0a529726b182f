"""The built-in verifier runner that family and template tasks ship in ``tests/``: ``test.sh``
(the entry point) and ``checks.py`` (the rubric runner their ``verify.py`` calls)."""

from __future__ import annotations

from functools import cache
from importlib import resources
from pathlib import Path

RUNNER_FILES = ("test.sh", "checks.py")


@cache
def runner_text(name: str) -> str:
    """One of :data:`RUNNER_FILES`, as shipped."""
    if name not in RUNNER_FILES:
        raise ValueError(f"not a file of the built-in verifier runner: {name}")
    return resources.files("skillgym_core").joinpath("data", "verifier", name).read_text(encoding="utf-8")


def uses_builtin_runner(tests: Path) -> bool:
    """Whether ``tests/`` is the built-in runner byte for byte with a ``verify.py`` and no judged
    rubric (``eval_spec.json``)."""
    try:
        return (all((tests / name).read_bytes() == runner_text(name).encode() for name in RUNNER_FILES)
                and (tests / "verify.py").is_file() and not (tests / "eval_spec.json").exists())
    except OSError:
        return False
