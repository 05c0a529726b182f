"""A generated project history with planted, checkable properties: the commit that introduced a
regression (bisectable from a known-good tag), a secret committed and later removed, a feature
branch merged with a conflict resolved by hand, a revert, tags, and (by knob) commits that do
not import at all and look-alike commits touching the broken module."""

from __future__ import annotations

import random
import re
from dataclasses import dataclass, field

from skillgym_builder.families.git_objects import ObjectStore, Person, repository
from skillgym_builder.families.git_project import (
    CORE,
    FEATURES,
    MODULE_NOTES,
    PACKAGES,
    Args,
    CoreModule,
    cases,
    feature_source,
    init_source,
    initial_files,
    module_source,
    readme,
    test_source,
)

PEOPLE = [("Amara Okafor", "amara.okafor", "+0100"), ("Tomasz Wieczorek", "t.wieczorek", "+0200"),
          ("Priya Raghunathan", "priya.r", "+0530"), ("Diego Alvarez", "dalvarez", "-0500"),
          ("Hannah Fischer", "hfischer", "+0100"), ("Kenji Morita", "kenji.morita", "+0900")]
DOMAINS = ["example.com", "example.org"]
CONVENTIONAL = re.compile(r"^([a-z]+)(\([^)]*\))?!?: ")
START = 1704704400  # 2024-01-08 09:00 UTC


@dataclass
class Commit:
    oid: str
    subject: str
    parents: list[str]
    author: Person
    changed: list[str]
    bad: bool
    testable: bool


@dataclass
class History:
    package: str
    target: CoreModule
    commits: dict[str, Commit]
    main: list[str]
    refs: dict[str, str]
    tags: dict[str, str]
    first_bad: str
    leak: dict[str, str]
    feature_branch: str
    workspace: dict[str, bytes]
    protected: list[str]
    visible: list[tuple[Args, int]]
    hidden: list[tuple[Args, int]]
    broken: list[str] = field(default_factory=list)

    def reachable(self, tip: str) -> set[str]:
        seen, todo = set(), [tip]
        while todo:
            oid = todo.pop()
            if oid not in seen:
                seen.add(oid)
                todo += self.commits[oid].parents
        return seen

    def changelog(self, start: str, end: str) -> dict[str, list[str]]:
        """Commits in ``start..end`` (tags), merges left out, grouped by Conventional type or ``other``."""
        groups: dict[str, list[str]] = {}
        for oid in self.reachable(self.tags[end]) - self.reachable(self.tags[start]):
            commit = self.commits[oid]
            if len(commit.parents) < 2:
                match = CONVENTIONAL.match(commit.subject)
                groups.setdefault(match.group(1) if match else "other", []).append(oid)
        return {kind: sorted(oids) for kind, oids in sorted(groups.items())}


class _Slots:
    def __init__(self, rng: random.Random, size: int) -> None:
        self.rng, self.size, self.used = rng, size, {0: "initial"}

    def take(self, lo: int, hi: int, event: str) -> int:
        free = [i for i in range(max(1, lo), min(hi, self.size - 1) + 1) if i not in self.used]
        if not free:
            raise ValueError(f"no room for {event} between {lo} and {hi}")
        index = self.rng.choice(free)
        self.used[index] = event
        return index

    def pair(self, lo: int, hi: int, within: int, events: tuple[str, str]) -> tuple[int, int]:
        """Two free slots, the second at most ``within`` after the first."""
        starts = [i for i in range(lo, hi + 1) if i not in self.used
                  and any(j not in self.used for j in range(i + 1, min(i + within, self.size - 1) + 1))]
        if not starts:
            raise ValueError(f"no room for {events}")
        first = self.rng.choice(starts)
        self.used[first] = events[0]
        return first, self.take(first + 1, first + within, events[1])


class _Builder:
    def __init__(self, rng: random.Random, package: str, target: CoreModule) -> None:
        self.rng, self.package, self.target = rng, package, target
        self.store = ObjectStore()
        self.commits: dict[str, Commit] = {}
        self.clock = START + rng.randint(0, 40) * 86400
        self.people = rng.sample(PEOPLE, 5)
        self.snapshots: dict[str, dict[str, str]] = {}

    def person(self) -> Person:
        name, user, offset = self.rng.choice(self.people)
        self.clock += self.rng.randint(2, 30) * 3600 + self.rng.randint(0, 3599)
        return Person(name, f"{user}@{DOMAINS[len(name) % 2]}", self.clock, offset)

    def commit(self, files: dict[str, str], parents: list[str], subject: str, body: str = "") -> str:
        author = self.person()
        tree = self.store.tree({path: text.encode() for path, text in files.items()})
        oid = self.store.commit(tree, parents, author, author, subject + (f"\n\n{body}" if body else ""))
        before = self.snapshots[parents[0]] if parents else {}
        changed = sorted(p for p in set(files) | set(before) if files.get(p) != before.get(p))
        module = files[f"src/{self.package}/{self.target.name}.py"]
        testable = not ("from .settings" in files[f"src/{self.package}/__init__.py"]
                        and f"src/{self.package}/settings.py" not in files)
        self.commits[oid] = Commit(oid, subject, parents, author, changed, self.target.bad in module, testable)
        self.snapshots[oid] = dict(files)
        return oid


def build_history(rng: random.Random, knobs: dict[str, float]) -> History:
    size = int(knobs["record_count"])
    package, target = rng.choice(PACKAGES), rng.choice(CORE)
    builder = _Builder(rng, package, target)
    notes = {m.name: rng.choice(MODULE_NOTES[m.name]) for m in CORE}
    visible = {m.name: cases(m, rng, 6, 2 if m is target else 0) for m in CORE}
    tests = {m.name: test_source(package, m, visible[m.name]) for m in CORE}
    slots = _Slots(rng, size)
    regression = slots.take(int(size * 0.45), int(size * 0.7), "regression")
    if knobs["error_recovery"]:
        broken_at = slots.take(3, regression - 2, "broken")
        slots.used[broken_at + 1] = "repair"
    conflict, _ = slots.pair(4, size - 2, 3, ("conflict", "merge"))
    fork = rng.choice([i for i in range(2, conflict) if slots.used.get(i) != "broken"])
    leak, unleak = slots.pair(1, size - 2, 8, ("leak", "unleak"))
    revert = slots.take(5, size - 1, "revert")
    slots.take(1, revert - 2, "reverted")
    for _ in range(int(knobs["noise_level"])):
        slots.take(3, size - 1, "decoy")
    tag_points = {"v1.0.0": 2, "v1.1.0": rng.randint(int(size * 0.3), int(size * 0.5)),
                  "v1.2.0": rng.randint(int(size * 0.75), size - 2)}
    files = initial_files(package, notes, tests)
    main = [builder.commit(files, [], "chore: initial project layout")]
    version, used_features, leak_path, secret = [0, 9], rng.sample(FEATURES, len(FEATURES)), "", ""
    feature_tip, topic, lines = "", used_features.pop(), {"main": "", "feature": ""}
    kept_for_revert = used_features.pop()
    reverted_path, reverted_commit = "", ""
    for index in range(1, size):
        event = slots.used.get(index, "filler")
        files = dict(builder.snapshots[main[-1]])
        parents, body = [main[-1]], ""
        init = f"src/{package}/__init__.py"
        if event == "regression":
            files[f"src/{package}/{target.name}.py"] = module_source(target, notes[target.name], True)
            if rng.random() < 0.5:
                files["docs/notes.md"] += f"- Simplified `{target.function}`.\n"
            subject = rng.choice([f"perf({target.name}): simplify {target.function} arithmetic",
                                  f"refactor({target.name}): tidy up {target.function}"])
        elif event == "broken":
            files[init] = init_source(package, f"{version[0]}.{version[1]}.0", True)
            subject = "refactor: load shared defaults when the package is imported"
        elif event == "repair":
            files[f"src/{package}/settings.py"] = 'DEFAULTS = {"currency": "EUR", "page_size": 20}\n'
            subject = "fix: add the settings module the package imports"
        elif event == "conflict":
            lines["main"] = f"- Install for development with `pip install -e .` and import `{package}`."
            files["README.md"] = readme(package, [lines["main"]])
            subject = "docs: explain the development install"
        elif event == "merge":
            files[f"src/{package}/{topic}.py"] = builder.snapshots[feature_tip][f"src/{package}/{topic}.py"]
            files["README.md"] = readme(package, [lines["main"], lines["feature"]])
            parents, subject = [main[-1], feature_tip], f"Merge branch 'feature/{topic}'"
            body = "Conflicts:\n\tREADME.md"
        elif event == "leak":
            leak_path = f"deploy/{rng.choice(['staging', 'production', 'preview'])}.env"
            secret = "tok_live_" + "".join(rng.choice("0123456789abcdef") for _ in range(32))
            files[leak_path] = f"SERVICE_URL=https://api.internal.test\nPAYMENT_API_TOKEN={secret}\n"
            subject = "chore: add deployment settings"
        elif event == "unleak":
            del files[leak_path]
            files[".gitignore"] += "deploy/*.env\n"
            subject = rng.choice(["chore: stop tracking deployment settings", "chore: remove env file"])
        elif event == "revert":
            del files[reverted_path]
            subject = f"revert: {builder.commits[reverted_commit].subject}"
            body = f"This reverts commit {reverted_commit}."
        elif event == "decoy":
            notes[target.name] = rng.choice([n for n in MODULE_NOTES[target.name] if n != notes[target.name]])
            bad = builder.commits[main[-1]].bad
            files[f"src/{package}/{target.name}.py"] = module_source(target, notes[target.name], bad)
            subject = rng.choice([f"fix({target.name}): clarify the module summary",
                                  f"docs({target.name}): reword {target.function} notes"])
        else:
            subject = _filler(rng, files, package, target, notes, version,
                              [kept_for_revert] if event == "reverted" else used_features,
                              force_feature=event == "reverted")
            if event == "reverted":
                reverted_path = next(p for p in files if p not in builder.snapshots[main[-1]])
        oid = builder.commit(files, parents, subject, body)
        main.append(oid)
        if event == "reverted":
            reverted_commit = oid
        if index == fork:
            branch = dict(files)
            branch[f"src/{package}/{topic}.py"] = feature_source(topic, rng.randint(2, 9))
            first = builder.commit(branch, [oid], f"feat({topic}): add {topic} helpers")
            lines["feature"] = f"- Use `{package}.{topic}` for {topic} totals."
            branch["README.md"] = readme(package, [lines["feature"]])
            feature_tip = builder.commit(branch, [first], f"docs({topic}): document the {topic} helpers")
    refs = {"refs/heads/main": main[-1], f"refs/heads/feature/{topic}": feature_tip,
            **{f"refs/tags/{tag}": main[i] for tag, i in tag_points.items()}}
    history = History(package, target, builder.commits, main, refs, {t: main[i] for t, i in tag_points.items()},
                      main[regression], {"path": leak_path, "added_in": main[leak], "removed_in": main[unleak],
                                         "secret": secret},
                      f"feature/{topic}", {}, [], visible[target.name], cases(target, rng, 24, 8),
                      [oid for oid in builder.commits if not builder.commits[oid].testable])
    _check_bisectable(history)
    workspace, protected = repository(builder.store, refs, "main", {p: t.encode() for p, t in builder.snapshots[main[-1]].items()}, "repo")
    history.workspace, history.protected = workspace, protected
    return history


def _filler(rng: random.Random, files: dict[str, str], package: str, target: CoreModule, notes: dict[str, str],
            version: list[int], features: list[str], *, force_feature: bool) -> str:
    kind = "feat" if force_feature else rng.choice(["feat", "docs", "docs", "chore", "refactor", "test", "other"])
    if kind == "feat" and features:
        name = features.pop()
        files[f"src/{package}/{name}.py"] = feature_source(name, rng.randint(2, 9))
        return rng.choice([f"feat({name}): add {name} helpers", f"feat: add {name} totals"])
    if kind == "chore":
        version[1] += 1
        text = f"{version[0]}.{version[1]}.0"
        files["pyproject.toml"] = re.sub(r'version = "[^"]+"', f'version = "{text}"', files["pyproject.toml"])
        init = f"src/{package}/__init__.py"
        files[init] = re.sub(r'__version__ = "[^"]+"', f'__version__ = "{text}"', files[init])
        return f"chore(release): bump version to {text}"
    others = [m for m in CORE if m is not target]
    module = rng.choice(others)
    if kind == "refactor":
        notes[module.name] = rng.choice([n for n in MODULE_NOTES[module.name] if n != notes[module.name]])
        files[f"src/{package}/{module.name}.py"] = module_source(module, notes[module.name], False)
        return f"refactor({module.name}): reword the module summary"
    if kind == "test":
        path = f"tests/test_{module.name}.py"
        args = module.inputs(rng)
        files[path] = files[path].replace("\n]\n", f"\n    ({args!r}, {module.correct(*args)}),\n]\n", 1)
        return f"test({module.name}): cover one more case"
    line = rng.choice(["Release checklist lives in the wiki.", "Amounts are integer cents everywhere.",
                       "Keep helpers free of I/O.", "Prefer small pure functions."])
    files["docs/notes.md"] += f"- {line}\n"
    return "docs: extend the working notes" if kind == "docs" else rng.choice(["Update notes", "notes tweak"])


def _check_bisectable(history: History) -> None:
    """Exactly one commit is bad while every parent is good: the planted regression."""
    firsts = [oid for oid, c in history.commits.items()
              if c.bad and all(not history.commits[p].bad for p in c.parents)]
    tip = history.commits[history.main[-1]]
    good = history.commits[history.tags["v1.0.0"]]
    if firsts != [history.first_bad] or not tip.bad or good.bad or not good.testable:
        raise ValueError("the planted regression is not uniquely bisectable")
    parent = history.commits[history.commits[history.first_bad].parents[0]]
    if not parent.testable:
        raise ValueError("the regression's parent must be testable")
