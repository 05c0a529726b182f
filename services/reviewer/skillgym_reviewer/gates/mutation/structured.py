"""Mutants of JSON, JSON Lines and YAML files, made on the parsed tree: one leaf nudged, a
boolean flipped, two list elements swapped, an element dropped or duplicated, a key renamed, a
leaf's type changed, near misses (see ``nearmiss``), a zero-valued record added; and, before
the random draws, one wrong value in every region (key path), an empty list included. The mutant is written back in the file's own style (indent, final newline)
so that only its meaning differs."""

from __future__ import annotations

import json
import random
import re
from collections.abc import Callable, Iterator
from typing import Any

import yaml

from skillgym_reviewer.gates.mutation.model import COVER, Effect, Mutant, pick, seeded
from skillgym_reviewer.gates.mutation.nearmiss import fine_nudge, other_case, recased, shortened_id, truncated
from skillgym_reviewer.gates.mutation.scalars import nudge_float, nudge_int, nudge_text, rename

TreePath = tuple[str | int, ...]
Change = tuple[str, TreePath, Any, Effect]  # operator, where, the new tree, effect
_IDENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


def render(path: TreePath) -> str:
    out = "$"
    for part in path:
        if isinstance(part, int):
            out += f"[{part}]"
        else:
            out += f".{part}" if _IDENT.match(part) else f"[{json.dumps(part)}]"
    return out


def walk(value: Any, path: TreePath = ()) -> Iterator[tuple[TreePath, Any]]:
    yield path, value
    if isinstance(value, dict):
        for key, item in value.items():
            yield from walk(item, (*path, key))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from walk(item, (*path, index))


def replace(tree: Any, path: TreePath, new: Any) -> Any:
    if not path:
        return new
    head, rest = path[0], path[1:]
    if isinstance(tree, dict):
        return {k: (replace(v, rest, new) if k == head else v) for k, v in tree.items()}
    copy = list(tree)
    copy[head] = replace(copy[head], rest, new)  # type: ignore[index]
    return copy


def _at(tree: Any, path: TreePath) -> Any:
    for part in path:
        tree = tree[part]
    return tree


def _leaf(value: Any) -> bool:
    return not isinstance(value, dict | list) and value is not None


def _key(value: Any) -> str:
    return json.dumps(value, sort_keys=True, default=str)


def _nudged(value: int | float | str, rng: random.Random) -> int | float | str:
    if isinstance(value, int):
        return nudge_int(value, rng)
    return nudge_float(value, rng) if isinstance(value, float) else nudge_text(value, rng)


def leaf_nudge(tree: Any, rng: random.Random) -> list[Change]:
    sites = [(p, v) for p, v in walk(tree) if _leaf(v) and not isinstance(v, bool) and isinstance(v, int | float | str)]
    changes: list[Change] = []
    for i in pick(rng, list(sites)):
        path, value = sites[i]
        changes.append(("leaf_nudge", path, replace(tree, path, _nudged(value, rng)), "value"))
    return changes


def region(path: TreePath) -> str:
    """A leaf's place with list positions left out: ``$.regions[*].revenue``."""
    return render(tuple("*" if isinstance(part, int) else part for part in path)).replace('["*"]', "[*]")


def region_nudges(tree: Any, rng: random.Random) -> list[Change]:
    """One wrong value in every region of the tree (each key path, list positions aside), so a
    check that reads only one field still meets a mutant however the other draws fall."""
    regions: dict[str, list[TreePath]] = {}
    for path, value in walk(tree):
        if path and _leaf(value) and isinstance(value, bool | int | float | str):
            regions.setdefault(region(path), []).append(path)
    changes: list[Change] = []
    for paths in regions.values():
        path = paths[rng.randrange(len(paths))]
        value = _at(tree, path)
        if isinstance(value, bool):
            changes.append(("bool_flip", path, replace(tree, path, not value), "value"))
        else:
            changes.append(("leaf_nudge", path, replace(tree, path, _nudged(value, rng)), "value"))
    return changes + filled_empty_lists(tree, rng)


def filled_empty_lists(tree: Any, rng: random.Random) -> list[Change]:
    """An empty list is a region too ("skipped": [] says no file was skipped): each gets one
    claim it does not make, a name the output uses elsewhere (a key naming a record, or a text
    value), as a result that wrongly lists one item there would."""
    empty = [path for path, value in walk(tree) if path and value == []]
    if not empty:
        return []
    names = sorted({key for _, value in walk(tree) if isinstance(value, dict) for key in value
                    if isinstance(key, str) and not _IDENT.match(key)}
                   | {value for _, value in walk(tree) if isinstance(value, str) and value.strip()})
    if not names:
        return []
    return [("fill_empty_list", path, replace(tree, path, [names[rng.randrange(len(names))]]), "shape")
            for path in empty]


def _near(tree: Any, rng: random.Random, name: str, change: Callable[[Any, random.Random], Any]) -> list[Change]:
    """Near misses at up to three regions, one site each: a near miss asks about the check of
    one field, so two at the same field say little more than one."""
    by_region: dict[str, list[tuple[TreePath, Any]]] = {}
    for p, v in walk(tree):
        if _leaf(v) and not isinstance(v, bool) and (new := change(v, rng)) is not None:
            by_region.setdefault(region(p), []).append((p, new))
    regions = list(by_region.values())
    sites = [regions[i][rng.randrange(len(regions[i]))] for i in pick(rng, list(regions))]
    return [(name, path, replace(tree, path, new), "value") for path, new in sites]


def fine_nudge_leaf(tree: Any, rng: random.Random) -> list[Change]:
    return _near(tree, rng, "fine_nudge", lambda v, r: fine_nudge(v, r) if isinstance(v, float) else None)


def truncate_leaf(tree: Any, rng: random.Random) -> list[Change]:
    return _near(tree, rng, "truncate_number", lambda v, r: truncated(v, r) if isinstance(v, float) else None)


def recase_leaf(tree: Any, rng: random.Random) -> list[Change]:
    return _near(tree, rng, "recase_identifier", lambda v, r: recased(v, r) if isinstance(v, str) else None)


def change_case_leaf(tree: Any, rng: random.Random) -> list[Change]:
    """Not drawn with the others: asked for only where the instruction makes case part of the
    answer (see :mod:`.lettercase`)."""
    return _near(tree, rng, "change_case", lambda v, r: other_case(v) if isinstance(v, str) else None)


def shorten_id_leaf(tree: Any, rng: random.Random) -> list[Change]:
    return _near(tree, rng, "shorten_id", lambda v, r: shortened_id(v, r) if isinstance(v, str) else None)


def _zeroed(value: Any, rng: random.Random) -> Any:
    """A record like ``value`` for another key whose measures are all zero."""
    if isinstance(value, dict):
        return {k: _zeroed(v, rng) for k, v in value.items()}
    if isinstance(value, list):
        return [_zeroed(v, rng) for v in value]
    if isinstance(value, bool) or value is None:
        return value
    if isinstance(value, int | float):
        return type(value)(0)
    return nudge_text(value, rng)


def add_zero_record(tree: Any, rng: random.Random) -> list[Change]:
    """A record added next to one of a list's records, for another key, with every number zero:
    the entry a filter (over a limit, non-empty, non-zero) should have left out."""
    lists = [(p, v) for p, v in walk(tree) if isinstance(v, list) and v
             and all(isinstance(e, dict) for e in v) and any(isinstance(x, int | float) and not isinstance(x, bool)
                                                             for e in v for _, x in walk(e))]
    changes: list[Change] = []
    for i in pick(rng, list(lists)):
        path, items = lists[i]
        index = rng.randrange(len(items))
        added = [*items[: index + 1], _zeroed(items[index], rng), *items[index + 1 :]]
        changes.append(("add_zero_record", (*path, index + 1), replace(tree, path, added), "shape"))
    return changes


def bool_flip(tree: Any, rng: random.Random) -> list[Change]:
    sites = [p for p, v in walk(tree) if isinstance(v, bool)]
    return [("bool_flip", sites[i], replace(tree, sites[i], not _at(tree, sites[i])), "value") for i in pick(rng, list(sites))]


def swap_elements(tree: Any, rng: random.Random) -> list[Change]:
    """Two neighbours swapped, in up to three lists: one swap per list, as every swap in a list
    asks the same question (does its order count?)."""
    lists: list[tuple[TreePath, list[int]]] = []
    for path, value in walk(tree):
        if isinstance(value, list):
            pairs = [i for i in range(len(value) - 1) if _key(value[i]) != _key(value[i + 1])]
            if pairs:
                lists.append((path, pairs))
    changes: list[Change] = []
    for i in pick(rng, list(lists)):
        path, pairs = lists[i]
        index = rng.choice(pairs)
        items = list(_at(tree, path))
        items[index], items[index + 1] = items[index + 1], items[index]
        changes.append(("swap_elements", (*path, index), replace(tree, path, items), "order"))
    return changes


def drop_element(tree: Any, rng: random.Random) -> list[Change]:
    sites = [(p, k) for p, v in walk(tree) if isinstance(v, dict | list) for k in (v if isinstance(v, dict) else range(len(v)))]
    changes: list[Change] = []
    for i in pick(rng, list(sites)):
        path, key = sites[i]
        container = _at(tree, path)
        if isinstance(container, dict):
            new: Any = {k: v for k, v in container.items() if k != key}
            changes.append(("drop_key", (*path, key), replace(tree, path, new), "shape"))
        else:
            new = [v for j, v in enumerate(container) if j != key]
            changes.append(("drop_element", (*path, key), replace(tree, path, new), "shape"))
    return changes


def duplicate_element(tree: Any, rng: random.Random) -> list[Change]:
    sites = [(p, i) for p, v in walk(tree) if isinstance(v, list) for i in range(len(v))]
    changes: list[Change] = []
    for i in pick(rng, list(sites)):
        path, index = sites[i]
        items = list(_at(tree, path))
        items.insert(index + 1, items[index])
        changes.append(("duplicate_element", (*path, index), replace(tree, path, items), "shape"))
    return changes


def rename_key(tree: Any, rng: random.Random) -> list[Change]:
    sites = [(p, k) for p, v in walk(tree) if isinstance(v, dict) for k in v if isinstance(k, str)]
    changes: list[Change] = []
    for i in pick(rng, list(sites)):
        path, key = sites[i]
        container = _at(tree, path)
        new_key = rename(key, set(container))
        renamed = {(new_key if k == key else k): v for k, v in container.items()}
        changes.append(("rename_key", (*path, key), replace(tree, path, renamed), "key"))
    return changes


def every_key_renamed(rel: str, text: str, kind: str, skip: set[str], limit: int) -> list[Mutant]:
    """Coverage mutants for a second look: one key renamed at every key path of a JSON or YAML
    output (list positions and record names aside), so a check of which fields or records are
    present meets a missing one wherever the drawn renames fell."""
    tree, dump = parsed_tree(text, kind)
    seen: set[str] = set()
    out: list[Mutant] = []
    for path, value in walk(tree):
        if not isinstance(value, dict):
            continue
        for key in value:
            if not isinstance(key, str):  # YAML may key by number, date or null
                continue
            # records keyed by name (ids, file names) share one place: their fields are alike
            place = render(tuple(part if isinstance(part, str) and _IDENT.match(part) else "*" for part in (*path, key)))
            if place in seen:
                continue
            seen.add(place)
            renamed = {(rename(key, set(value)) if k == key else k): v for k, v in value.items()}
            mutant = Mutant(rel, "rename_key", render((*path, key)), dump(replace(tree, path, renamed)).encode(), "key",
                            cover=True)
            if mutant.name not in skip:
                out.append(mutant)
    return out[:limit]


def change_type(tree: Any, rng: random.Random) -> list[Change]:
    """A leaf wrapped in a list: a type no lenient reader turns back into the value (a number
    written as a string often is, fairly, accepted)."""
    sites = [p for p, v in walk(tree) if _leaf(v) and p]
    return [("change_type", sites[i], replace(tree, sites[i], [_at(tree, sites[i])]), "type") for i in pick(rng, list(sites))]


OPERATORS: list[Callable[[Any, random.Random], list[Change]]] = [
    leaf_nudge, bool_flip, swap_elements, drop_element, duplicate_element, rename_key, change_type,
    fine_nudge_leaf, truncate_leaf, recase_leaf, shorten_id_leaf, add_zero_record,
]


def dump_json_like(original: str, tree: Any) -> str:
    """``tree`` serialised the way ``original`` was: same indent, separators, final newline."""
    body = original.strip()
    indent: int | str | None = None
    lines = body.splitlines()
    if len(lines) > 1:
        second = lines[1]
        width = len(second) - len(second.lstrip(" \t"))
        indent = second[:width] if second[:width].startswith("\t") else (width or None)
    separators = None if indent is not None or ": " in body or ", " in body else (",", ":")
    text = json.dumps(tree, indent=indent, separators=separators, ensure_ascii=original.isascii())
    return text + ("\n" if original.endswith("\n") else "")


def dump_yaml(tree: Any) -> str:
    return yaml.safe_dump(tree, sort_keys=False, allow_unicode=True, default_flow_style=False)


def parsed_tree(text: str, kind: str) -> tuple[Any, Callable[[Any], str]]:
    """A JSON or YAML output's tree, and how to write a changed tree back the way it was written."""
    if kind == "json":
        return json.loads(text), lambda new: dump_json_like(text, new)
    return yaml.safe_load(text), dump_yaml


def tree_mutants(rel: str, text: str, tree: Any, dump: Callable[[Any], str], seed: int) -> dict[str, list[Mutant]]:
    """Mutants of one parsed file, grouped by operator; no-op changes are left out."""
    original = _key(tree)
    grouped: dict[str, list[Mutant]] = {}
    for operator in [region_nudges, *OPERATORS]:
        group = COVER if operator is region_nudges else None
        for name, path, new, effect in operator(tree, seeded(seed, rel, operator.__name__)):
            if _key(new) == original:
                continue
            grouped.setdefault(group or name, []).append(Mutant(rel, name, render(path), dump(new).encode(), effect))
    return grouped


def json_mutants(rel: str, text: str, seed: int) -> dict[str, list[Mutant]]:
    tree = json.loads(text)
    return tree_mutants(rel, text, tree, lambda new: dump_json_like(text, new), seed)


def yaml_mutants(rel: str, text: str, seed: int) -> dict[str, list[Mutant]]:
    tree = yaml.safe_load(text)
    return tree_mutants(rel, text, tree, dump_yaml, seed)


def jsonl_mutants(rel: str, text: str, seed: int) -> dict[str, list[Mutant]]:
    """Leaf changes inside the records of a JSON Lines file (line-level changes come from the
    text operators)."""
    lines = text.splitlines(keepends=True)
    records = [i for i, line in enumerate(lines) if line.strip()]
    grouped: dict[str, list[Mutant]] = {}
    rng = seeded(seed, rel, "records")
    for index in pick(rng, list(records), 2):
        number = records[index]
        line = lines[number]
        for operator in (leaf_nudge, change_type):
            record = json.loads(line)
            for name, path, new, effect in operator(record, seeded(seed, rel, str(number), operator.__name__))[:1]:
                rewritten = dump_json_like(line, new)
                content = "".join([*lines[:number], rewritten, *lines[number + 1 :]])
                grouped.setdefault(name, []).append(
                    Mutant(rel, name, f"line {number + 1}{render(path)[1:]}", content.encode(), effect)
                )
    return grouped
