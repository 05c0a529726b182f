"""Stage commands that delegate to the services' own entry points."""

from __future__ import annotations

import argparse
from typing import Any


def register(sub: Any) -> None:
    """Attach the stage commands (validate, report, export, train, evaluate) to the parser."""
    _ = argparse
