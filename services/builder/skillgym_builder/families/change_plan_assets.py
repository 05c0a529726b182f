"""The inputs of a change-plan instance: a small Python repository whose change request touches
one function (its definition, its callers, the tests that use it) next to decoy modules with
look-alike names, and a work breakdown whose schedule follows by the critical path method."""

from __future__ import annotations

import itertools
import random
from dataclasses import dataclass, field

PACKAGES = ["ledgerly", "parcelhub", "tidewater", "quillstack", "harborline", "mintpath"]
TARGETS = [  # (function, the module stem that defines it, the parameter the request adds)
    ("compute_late_fee", "fees", "grace_days"), ("normalize_postcode", "postcodes", "country"),
    ("parse_delimiter", "delimiters", "allow_tab"), ("resolve_timezone", "timezones", "fallback"),
    ("apply_discount", "discounts", "cap"), ("format_invoice_number", "invoice_numbers", "prefix"),
    ("estimate_shipping_zone", "zones", "carrier"), ("compute_retry_delay", "retries", "jitter"),
    ("validate_sku", "skus", "strict"), ("round_tax_amount", "tax", "mode"),
]
FILLERS = ["orders", "customers", "inventory", "reports", "notifications", "audit", "pricing", "catalog", "exports",
           "imports", "scheduler", "payments", "refunds", "users", "sessions", "warehouses", "carriers", "webhooks",
           "metrics", "settings", "billing", "returns", "coupons", "ledger", "search", "emails", "uploads", "quotes"]
VERBS = ["load", "save", "list", "count", "summarize", "merge", "filter", "rank", "group", "check"]
TEST_COMMANDS = ["python -m pytest -q tests", "pytest --maxfail=1 -q", "make check", "tox -e py311",
                 "nox -s tests", "python -m unittest discover -s tests -v"]
STALE_COMMANDS = ["make test", "python setup.py test", "pytest", "./run_tests.sh"]
OWNERS = ["Ada", "Bruno", "Chiara", "Dev", "Elif", "Femi", "Grete", "Hiro"]
WORK = ["Spike", "Design", "Implement", "Review", "Test", "Document", "Migrate", "Benchmark", "Release", "Monitor"]


@dataclass
class Repo:
    files: dict[str, str]
    function: str
    affected: list[str]  # repository-relative paths that reference the function
    decoys: list[str]  # look-alike paths (and a stale path named in the request) the change does not touch
    test_command: str
    request: str


@dataclass
class Breakdown:
    rows: list[dict[str, str]]
    durations: dict[str, int]
    deps: dict[str, list[str]] = field(default_factory=dict)


def _filler(rng: random.Random, package: str, name: str, call: str | None) -> tuple[str, str]:
    """(module text, the name of its first function)."""
    verbs = rng.sample(VERBS, 3)
    lines = [f'"""{name.capitalize()} helpers of {package}."""', ""]
    if call:
        lines += [f"from {package}.{call.split(':')[0]} import {call.split(':')[1]}", ""]
    for verb in verbs:
        lines += ["", f"def {verb}_{name}(records):", f'    """{verb.capitalize()} {name} records."""',
                  f"    return [r for r in records if r.get({name!r}) is not None]", ""]
    if call:
        function = call.split(":")[1]
        lines += ["", f"def prepare_{name}(record, value):", f"    record[{name!r}] = {function}(value)",
                  "    return record", ""]
    return "\n".join(lines).rstrip() + "\n", f"{verbs[0]}_{name}"


def _definition(package: str, stem: str, function: str, body_hint: str) -> str:
    return (f'"""{stem.replace("_", " ").capitalize()} rules of {package}."""\n\n\n'
            f"def {function}(value):\n"
            f'    """{body_hint}"""\n'
            "    if value is None:\n        raise ValueError(\"missing value\")\n"
            "    return value\n")


def _test(package: str, module: str, names: list[str]) -> str:
    imports = ", ".join(names)
    body = "\n\n".join(f"def test_{n}_keeps_known_values():\n    assert {n} is not None\n" for n in names)
    return f"from {package}.{module} import {imports}\n\n\n{body}"


def make_repo(rng: random.Random, *, modules: int, callers: int, decoys: int, noise: bool, stale_path: bool) -> Repo:
    package = rng.choice(PACKAGES)
    function, stem, parameter = rng.choice(TARGETS)
    fillers = rng.sample(FILLERS, modules)
    calling = fillers[:callers]
    files: dict[str, str] = {}
    src, tests = f"src/{package}", "tests"
    files[f"{src}/__init__.py"] = f'"""{package}."""\n'
    files[f"{src}/{stem}.py"] = _definition(package, stem, function, f"{function.replace('_', ' ').capitalize()}.")
    files[f"{tests}/test_{stem}.py"] = _test(package, stem, [function])
    affected = [f"{src}/{stem}.py", f"{tests}/test_{stem}.py"]
    for name in fillers:
        call = f"{stem}:{function}" if name in calling else None
        files[f"{src}/{name}.py"], first = _filler(rng, package, name, call)
        files[f"{tests}/test_{name}.py"] = _test(package, name, [first])
        if call:
            affected.append(f"{src}/{name}.py")
    if callers > 1:
        flow = calling[0]
        files[f"{tests}/test_{flow}_flow.py"] = (
            f"from {package}.{stem} import {function}\nfrom {package}.{flow} import prepare_{flow}\n\n\n"
            f"def test_{flow}_flow_uses_{stem}():\n    record = prepare_{flow}({{}}, 1)\n"
            f"    assert record[{flow!r}] == {function}(1)\n")
        affected.append(f"{tests}/test_{flow}_flow.py")
    lookalikes = []
    for variant in [f"{stem}_legacy", f"old_{stem}", f"{stem}_v1", f"{stem}_rules"][:decoys]:
        twin = f"{function}_{variant.split('_')[-1] if variant != f'old_{stem}' else 'old'}"
        files[f"{src}/{variant}.py"] = _definition(package, variant, twin, f"Earlier rules kept for {stem} imports.")
        files[f"{tests}/test_{variant}.py"] = _test(package, variant, [twin])
        lookalikes += [f"{src}/{variant}.py", f"{tests}/test_{variant}.py"]
    stale = f"src/{package}/core/{stem}_impl.py"
    if stale_path:
        lookalikes.append(stale)
    command = rng.choice(TEST_COMMANDS)
    files.update(_project_files(rng, package, stem, function, command, noise, stale if stale_path else None,
                                [f"{src}/{name}.py" for name in fillers]))
    request = _request(function, parameter, stale if stale_path else None)
    return Repo(files, function, sorted(affected), sorted(lookalikes), command, request)


def _project_files(rng: random.Random, package: str, stem: str, function: str, command: str, noise: bool,
                   stale: str | None, modules: list[str]) -> dict[str, str]:
    readme_command = rng.choice([c for c in STALE_COMMANDS if c != command]) if noise else command
    layout = "\n".join(f"- `{path}`" for path in sorted(modules))
    readme = (f"# {package}\n\nSmall back-office service. Code lives under `src/{package}/`, tests under `tests/`.\n\n"
              f"## Layout\n\n{layout}\n\n## Development\n\nRun the test suite with `{readme_command}`.\n")
    ci = ("name: ci\non: [push, pull_request]\njobs:\n  test:\n    runs-on: ubuntu-latest\n    steps:\n"
          "      - uses: actions/checkout@v4\n      - name: Install\n        run: pip install -e .[test]\n"
          + ("      - name: Lint\n        run: ruff check src tests\n" if noise else "")
          + f"      - name: Run tests\n        run: {command}\n")
    architecture = (f"# Architecture\n\n`{package}.{stem}` owns the `{stem.replace('_', ' ')}` rules; other modules "
                    "import what they need from it.\n" + ("\nModules whose names end in `_legacy`, `_v1` or start with "
                                                          "`old_` keep earlier behaviour for archived data.\n"
                                                          if noise else ""))
    files = {"README.md": readme, ".github/workflows/ci.yml": ci, "docs/architecture.md": architecture,
             "pyproject.toml": f'[project]\nname = "{package}"\nversion = "0.{rng.randint(1, 9)}.0"\n'}
    if stale:
        files["docs/CHANGELOG.md"] = (f"# Changelog\n\n## 0.4.0\n\n- Moved `{function}` from `{stale}` to "
                                      f"`src/{package}/{stem}.py`; the old module is gone.\n")
    return files


def _request(function: str, parameter: str, stale: str | None) -> str:
    where = f" (it lives in `{stale}`)" if stale else ""
    return (f"# Change request\n\n`{function}`{where} must take a new keyword argument `{parameter}`. Every caller "
            f"has to pass it explicitly, so no call keeps relying on the old behaviour, and the tests that use "
            f"`{function}` must cover both settings.\n\nPlease plan the change before anyone starts coding.\n")


def schedule(durations: dict[str, int], deps: dict[str, list[str]]) -> dict[str, object]:
    """Critical path method over ``deps`` (missing dependencies dropped, cycles and everything
    downstream of them left unscheduled): earliest start/finish, the zero-slack chain, the total."""
    known = set(durations)
    errors: list[dict[str, object]] = [{"kind": "missing_task", "task": t, "dependency": d}
                                       for t in sorted(deps) for d in deps[t] if d not in known]
    edges = {t: sorted(d for d in deps.get(t, []) if d in known) for t in sorted(known)}
    for cycle in _cycles(edges):
        errors.append({"kind": "cycle", "tasks": cycle})
    start: dict[str, int] = {}
    pending = dict(edges)
    while True:
        ready = [t for t, ds in pending.items() if all(d in start for d in ds)]
        if not ready:
            break
        for t in ready:
            start[t] = max((start[d] + durations[d] for d in edges[t]), default=0)
            del pending[t]
    finish = {t: start[t] + durations[t] for t in start}
    total = max(finish.values(), default=0)
    late_finish = {t: total for t in start}
    for t in sorted(start, key=lambda t: -start[t]):
        for d in edges[t]:
            late_finish[d] = min(late_finish[d], late_finish[t] - durations[t])
    critical = sorted((t for t in start if late_finish[t] == finish[t]), key=lambda t: (start[t], t))
    return {"tasks": {t: {"earliest_start": start[t], "earliest_finish": finish[t]} for t in sorted(start)},
            "critical_path": critical, "total_duration": total, "errors": errors, "unscheduled": sorted(pending)}


def _cycles(edges: dict[str, list[str]]) -> list[list[str]]:
    """Strongly connected components with more than one task (or a task depending on itself)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        for nxt in edges[node]:
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            component = []
            while True:
                item = stack.pop()
                component.append(item)
                if item == node:
                    break
            if len(component) > 1 or node in edges[node]:
                found.append(sorted(component))

    for node in sorted(edges):
        if node not in index:
            visit(node)
    return sorted(found)


def _single_chain(result: dict[str, object]) -> bool:
    """The zero-slack tasks form one chain, so the critical path is unique."""
    tasks = result["tasks"]
    chain = result["critical_path"]
    assert isinstance(tasks, dict) and isinstance(chain, list)
    if not chain or tasks[chain[0]]["earliest_start"] != 0:
        return False
    starts = [tasks[t]["earliest_start"] for t in chain]
    return len(set(starts)) == len(starts) and all(
        tasks[a]["earliest_finish"] == tasks[b]["earliest_start"] for a, b in itertools.pairwise(chain))


def make_breakdown(rng: random.Random, count: int, *, faults: bool) -> Breakdown:
    """Tasks with durations, owners and dependencies on earlier tasks; with ``faults`` one
    dependency names a task that does not exist and the last two tasks depend on each other."""
    ids = [f"T{i + 1:02d}" for i in range(count)]
    for _ in range(500):
        deps = {t: sorted(rng.sample(ids[:i], min(i, rng.choice([1, 1, 2, 3])))) for i, t in enumerate(ids)}
        durations = {t: rng.randint(1, 9) for t in ids}
        if faults:
            deps[ids[rng.randint(1, count - 1)]].append(f"T{count + rng.randint(5, 40):02d}")
            last, before = ids[-1], ids[-2]
            deps[last] = sorted({*deps[last], before})
            deps[before] = sorted({*deps[before], last})
        if _single_chain(schedule(durations, deps)):
            break
    else:  # pragma: no cover - the retries above find a unique path for every size used
        raise RuntimeError("no work breakdown with a single critical path")
    rows = [{"id": t, "task": f"{rng.choice(WORK)} {rng.choice(FILLERS)}", "owner": rng.choice(OWNERS),
             "duration_days": str(durations[t]), "depends_on": ";".join(deps[t])} for t in ids]
    return Breakdown(rows, durations, deps)


def breakdown_csv(breakdown: Breakdown) -> str:
    header = ["id", "task", "owner", "duration_days", "depends_on"]
    lines = [",".join(header)] + [",".join(row[h] for h in header) for row in breakdown.rows]
    return "\n".join(lines) + "\n"
