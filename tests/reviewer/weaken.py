"""Weakened verifiers, generated: the task's ``verify.py`` with one rubric item's check replaced
by ``lambda: True`` in its ``run([(name, check), ...])`` call, or one check inside a composite
item (``share("item", [(name, check), ...])``, reported as ``item:name``) likewise."""

from __future__ import annotations

import ast
from pathlib import Path


def _check_list(tree: ast.Module) -> ast.List:
    for node in ast.walk(tree):
        if (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "run"
                and node.args and isinstance(node.args[0], ast.List)):
            return node.args[0]
    raise LookupError("verify.py has no run([...]) call")


def rubric_checks(source: str) -> list[str]:
    """The rubric item names of ``verify.py``'s check list, in order."""
    names = []
    for entry in _check_list(ast.parse(source)).elts:
        assert isinstance(entry, ast.Tuple) and isinstance(entry.elts[0], ast.Constant)
        names.append(str(entry.elts[0].value))
    return names


def weakened(source: str, item: str) -> str:
    """``source`` with the check of rubric item ``item`` always passing."""
    tree = ast.parse(source)
    for entry in _check_list(tree).elts:
        assert isinstance(entry, ast.Tuple)
        name = entry.elts[0]
        if isinstance(name, ast.Constant) and name.value == item:
            entry.elts[1] = ast.Lambda(
                args=ast.arguments(posonlyargs=[], args=[], kwonlyargs=[], kw_defaults=[], defaults=[]),
                body=ast.Constant(True),
            )
            return ast.unparse(ast.fix_missing_locations(tree)) + "\n"
    raise LookupError(f"no check named {item!r}")


def weaken_task(task_root: Path, item: str) -> None:
    verify = task_root / "tests" / "verify.py"
    verify.write_text(weakened(verify.read_text(), item))


RUNNER_OVERRIDE = '''

_unweakened_run = run
_unweakened_share = share


def run(checks):
    """This copy of the runner scores {target!r} as passed whatever its check says."""
    return _unweakened_run([(name, (lambda: True) if name == {target!r} else check) for name, check in checks])


def share(composite, checks):
    return _unweakened_share(composite, [(name, (lambda: True) if composite + PART + name == {target!r} else check)
                                         for name, check in checks])
'''


def weaken_runner(task_root: Path, target: str) -> None:
    """The same weakening for verifiers of any shape: the task's copy of the rubric runner
    (``tests/checks.py``) replaces the check of rubric item ``target``, or of the check
    ``item:name`` inside a composite item, with one that always passes."""
    runner = task_root / "tests" / "checks.py"
    runner.write_text(runner.read_text() + RUNNER_OVERRIDE.format(target=target))


def composite_checks(source: str) -> list[str]:
    """The checks inside composite items of ``verify.py``: ``item:name`` for each literal
    ``share("item", [("name", check), ...])`` call, or ``share("item", stated([...], unstated))``."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "share"
                and len(node.args) == 2 and isinstance(node.args[0], ast.Constant)):
            continue
        listed = node.args[1]
        if isinstance(listed, ast.Call) and listed.args:  # stated([...], unstated)
            listed = listed.args[0]
        if isinstance(listed, ast.List):
            for entry in listed.elts:
                if isinstance(entry, ast.Tuple) and isinstance(entry.elts[0], ast.Constant):
                    found.append(f"{node.args[0].value}:{entry.elts[0].value}")
    return found


def rubric_items(task_root: Path) -> list[str]:
    """The programmatic rubric items of a task (``tests/rubric.json``)."""
    import json

    items = json.loads((task_root / "tests" / "rubric.json").read_text())
    return [item["name"] for item in items if item.get("kind", "programmatic") == "programmatic"]
