"""The small Python project whose history a git-forensics instance investigates: core modules,
each a pure function with a known regression (one line), its unittest file, and the filler
content later commits add (feature modules, notes, version bumps)."""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass

Args = tuple[int, ...]


@dataclass(frozen=True)
class CoreModule:
    name: str
    function: str
    body: str  # the function's source; ``good`` occurs in it exactly once
    good: str
    bad: str
    correct: Callable[..., int]
    broken: Callable[..., int]
    inputs: Callable[[random.Random], Args]


def _paging_inputs(rng: random.Random) -> Args:
    per_page = rng.randint(2, 40)
    return per_page * rng.randint(0, 20) + rng.choice([0, 0, rng.randint(1, per_page - 1)]), per_page


CORE = (
    CoreModule(
        "pricing", "apply_discount",
        '''def apply_discount(amount_cents, percent):
    """Price in cents after a percentage discount, rounded half up."""
    if not 0 <= percent <= 100:
        raise ValueError("percent must be between 0 and 100")
    return (amount_cents * (100 - percent) + 50) // 100
''',
        "return (amount_cents * (100 - percent) + 50) // 100", "return amount_cents * (100 - percent) // 100",
        lambda a, p: (a * (100 - p) + 50) // 100, lambda a, p: a * (100 - p) // 100,
        lambda rng: (rng.randint(101, 99999), rng.randint(1, 60)),
    ),
    CoreModule(
        "paging", "page_count",
        '''def page_count(total, per_page):
    """Pages needed to list ``total`` items, ``per_page`` to a page."""
    if per_page <= 0:
        raise ValueError("per_page must be positive")
    return (total + per_page - 1) // per_page
''',
        "return (total + per_page - 1) // per_page", "return total // per_page + 1",
        lambda t, p: (t + p - 1) // p, lambda t, p: t // p + 1,
        lambda rng: _paging_inputs(rng),
    ),
    CoreModule(
        "backoff", "retry_delay",
        '''def retry_delay(attempt, base_ms, cap_ms):
    """Milliseconds to wait before retry ``attempt`` (0-based): doubling from ``base_ms``, capped."""
    if attempt < 0:
        raise ValueError("attempt must not be negative")
    return min(cap_ms, base_ms * 2 ** attempt)
''',
        "return min(cap_ms, base_ms * 2 ** attempt)", "return min(cap_ms, base_ms * 2 ** (attempt + 1))",
        lambda a, b, c: min(c, b * 2**a), lambda a, b, c: min(c, b * 2 ** (a + 1)),
        lambda rng: (rng.randint(0, 8), rng.choice([50, 100, 200, 250, 500]), rng.choice([2000, 5000, 30000, 60000])),
    ),
    CoreModule(
        "stock", "reorder_quantity",
        '''def reorder_quantity(on_hand, target, pack_size):
    """Units to order, in whole packs, to bring stock up to ``target``."""
    if pack_size <= 0:
        raise ValueError("pack_size must be positive")
    need = max(0, target - on_hand)
    return -(-need // pack_size) * pack_size
''',
        "return -(-need // pack_size) * pack_size", "return need // pack_size * pack_size",
        lambda h, t, p: -(-max(0, t - h) // p) * p, lambda h, t, p: max(0, t - h) // p * p,
        lambda rng: (rng.randint(0, 200), rng.randint(0, 320), rng.randint(2, 24)),
    ),
)
MODULE_NOTES = {
    "pricing": ["Discount arithmetic, kept in integer cents.", "Price helpers; all amounts are integer cents.",
                "Discounts applied to integer cent amounts."],
    "paging": ["Pagination arithmetic for list views.", "How many pages a listing needs.", "Page maths for listings."],
    "backoff": ["Retry timing for outbound calls.", "Exponential backoff for flaky services.", "Retry delays."],
    "stock": ["Reordering rules for the warehouse.", "Stock top-up arithmetic.", "Purchase quantities in packs."],
}
FEATURES = ["currency", "slugs", "weights", "schedule", "labels", "receipts", "quotas", "vouchers", "regions",
            "barcodes", "invoices", "shipping"]
PACKAGES = ["shopkit", "tillroll", "cartwise", "parcelpy", "stockroom"]
BASE_USAGE = "- Usage notes will follow once the API settles."


def module_source(module: CoreModule, note: str, bad: bool) -> str:
    body = module.body.replace(module.good, module.bad) if bad else module.body
    return f'"""{note}"""\n\nSTRICT = True\n\n\n{body}'


def cases(module: CoreModule, rng: random.Random, count: int, differing: int) -> list[tuple[Args, int]]:
    """``count`` (arguments, correct result) pairs, ``differing`` of which the regression gets wrong."""
    chosen: list[tuple[Args, int]] = []
    wrong = 0
    for _ in range(5000):
        if len(chosen) == count:
            break
        args = module.inputs(rng)
        exposes = module.correct(*args) != module.broken(*args)
        if (exposes and wrong < differing) or (not exposes and len(chosen) - wrong < count - differing):
            chosen.append((args, module.correct(*args)))
            wrong += exposes
    if len(chosen) != count:
        raise ValueError(f"could not draw cases for {module.name}")
    return chosen


def test_source(package: str, module: CoreModule, known: list[tuple[Args, int]]) -> str:
    rows = "\n".join(f"    ({args!r}, {result})," for args, result in known)
    title = "".join(part.title() for part in module.name.split("_"))
    return f'''import os
import sys
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir, "src"))

from {package}.{module.name} import {module.function}  # noqa: E402

CASES = [
{rows}
]


class {title}Test(unittest.TestCase):
    def test_known_values(self):
        for args, expected in CASES:
            with self.subTest(args=args):
                self.assertEqual({module.function}(*args), expected)


if __name__ == "__main__":
    unittest.main()
'''


def feature_source(feature: str, factor: int) -> str:
    return f'''"""{feature.title()} helpers."""

FACTOR = {factor}


def {feature}_total(values):
    """The sum of ``values`` scaled by FACTOR."""
    return sum(values) * FACTOR
'''


def init_source(package: str, version: str, with_settings: bool) -> str:
    extra = "\nfrom .settings import DEFAULTS  # noqa: F401\n" if with_settings else ""
    return f'"""{package}: small helpers for the shop backend."""\n\n__version__ = "{version}"\n{extra}'


def readme(package: str, usage: list[str]) -> str:
    return (f"# {package}\n\nSmall arithmetic helpers shared by the shop services.\n\n## Usage\n\n"
            + "\n".join(usage) + "\n\n## Tests\n\nRun `python3 -m unittest discover -s tests -t .` from the "
            "repository root.\n")


def initial_files(package: str, notes: dict[str, str], tests: dict[str, str]) -> dict[str, str]:
    files = {
        "README.md": readme(package, [BASE_USAGE]),
        ".gitignore": "__pycache__/\n*.pyc\n",
        "pyproject.toml": f'[project]\nname = "{package}"\nversion = "0.9.0"\nrequires-python = ">=3.9"\n',
        f"src/{package}/__init__.py": init_source(package, "0.9.0", False),
        "tests/__init__.py": "",
        "docs/notes.md": "# Working notes\n",
    }
    for module in CORE:
        files[f"src/{package}/{module.name}.py"] = module_source(module, notes[module.name], False)
        files[f"tests/test_{module.name}.py"] = tests[module.name]
    return files
