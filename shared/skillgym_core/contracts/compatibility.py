"""The compatibility promise, checked: within a major version a payload changes only by adding
optional fields (and enum values). Comparing the schemas generated from the models now with the
ones published for the current major version names every field that breaks it: a field removed,
its type or constant changed, an enum value removed, a field that became required or no longer
is, a new field that is required. A breaking change needs a new major version (a new schema
folder and ``.v<major>`` types), never an edit of the published one."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from skillgym_core.errors import ContractError

Schema = Mapping[str, Any]
JSON_TYPES = {bool: "boolean", int: "integer", float: "number", str: "string", type(None): "null",
              list: "array", dict: "object"}  # fmt: skip


@dataclass(frozen=True)
class BreakingChange:
    schema: str  # the schema's file name
    field: str  # dotted path of the field; "[]" stands for an array's items
    change: str  # removed, type_changed, const_changed, enum_value_removed, now_required, ...
    detail: str

    def __str__(self) -> str:
        return f"{self.schema}: field '{self.field}' {self.detail}"


class IncompatibleSchemaError(ContractError):
    """Payload models changed in a way the published schemas of their major version forbid."""

    reason = "incompatible_schema"


def breaking_changes(published: Schema, current: Schema, schema: str = "") -> list[BreakingChange]:
    """What in ``current`` breaks a consumer written against ``published``."""
    return list(_compare(_Side(published), _Side(current), schema, ""))


def compare_schema_sets(published: Mapping[str, Schema], current: Mapping[str, Schema]) -> list[BreakingChange]:
    changes: list[BreakingChange] = []
    for name, schema in sorted(published.items()):
        if name not in current:
            changes.append(BreakingChange(name, "(schema)", "schema_removed", "is gone: its payload no longer exists"))
            continue
        changes.extend(breaking_changes(schema, current[name], name))
    return changes


def check_published() -> list[BreakingChange]:
    """The models against the schemas shipped for the current major version."""
    from skillgym_core.contracts.schemas import generated_schemas, load_schemas, published_dir

    return compare_schema_sets(load_schemas(published_dir()), generated_schemas())


def raise_if_breaking(changes: list[BreakingChange]) -> None:
    if changes:
        raise IncompatibleSchemaError(
            f"{len(changes)} breaking change(s) within a major version: " + "; ".join(map(str, changes)),
            changes=[str(change) for change in changes],
            fields=sorted({change.field for change in changes}),
        )


class _Side:
    """One schema document, so that ``$ref``s resolve against their own root."""

    def __init__(self, root: Schema) -> None:
        self.root = root

    def resolve(self, node: Schema) -> Schema:
        seen = 0
        while "$ref" in node and str(node["$ref"]).startswith("#/") and seen < 32:
            target: Any = self.root
            for part in str(node["$ref"])[2:].split("/"):
                target = target.get(part, {}) if isinstance(target, Mapping) else {}
            node, seen = target, seen + 1
        return node

    def types(self, node: Schema) -> set[str]:
        node = self.resolve(node)
        if "type" in node:
            declared = node["type"]
            return set(declared) if isinstance(declared, list) else {str(declared)}
        for combinator in ("anyOf", "oneOf"):
            if combinator in node:
                return set().union(*(self.types(member) for member in node[combinator]))
        if "const" in node:
            return {JSON_TYPES.get(type(node["const"]), "string")}
        if "enum" in node:
            return {JSON_TYPES.get(type(value), "string") for value in node["enum"]}
        return set()

    def enum(self, node: Schema) -> list[Any] | None:
        """The values an enumeration allows (None: not an enumeration)."""
        node = self.resolve(node)
        if "enum" in node:
            return list(node["enum"])
        if "const" in node:
            return [node["const"]]
        for combinator in ("anyOf", "oneOf"):
            members = [self.enum(member) for member in node.get(combinator, [])]
            if any(values is not None for values in members):
                return [value for values in members if values is not None for value in values]
        return None


def _compare(old: _Side, new: _Side, schema: str, path: str, old_node: Schema | None = None,
             new_node: Schema | None = None) -> Iterator[BreakingChange]:  # fmt: skip
    before = old.resolve(old.root if old_node is None else old_node)
    after = new.resolve(new.root if new_node is None else new_node)
    field = path or "(root)"
    old_types, new_types = old.types(before), new.types(after)
    if old_types and old_types != new_types:
        shown = ", ".join(sorted(new_types)) or "unconstrained"
        yield BreakingChange(schema, field, "type_changed", f"changed type from {', '.join(sorted(old_types))} to {shown}")
        return
    old_values, new_values = old.enum(before), new.enum(after)
    if "const" in before:
        if after.get("const") != before["const"]:
            yield BreakingChange(schema, field, "const_changed", f"changed its constant {before['const']!r}")
    elif old_values is not None and new_values is not None:
        for value in old_values:
            if value not in new_values:
                yield BreakingChange(schema, field, "enum_value_removed", f"lost the enum value {value!r}")
    yield from _compare_properties(old, new, schema, path, before, after)
    if "items" in before and "items" in after:
        yield from _compare(old, new, schema, f"{path}[]", before["items"], after["items"])


def _compare_properties(old: _Side, new: _Side, schema: str, path: str, before: Schema,
                        after: Schema) -> Iterator[BreakingChange]:  # fmt: skip
    old_properties, new_properties = before.get("properties", {}), after.get("properties", {})
    old_required, new_required = set(before.get("required", [])), set(after.get("required", []))
    for name, node in old_properties.items():
        field = f"{path}.{name}" if path else name
        if name not in new_properties:
            yield BreakingChange(schema, field, "removed", "was removed")
            continue
        if name in old_required and name not in new_required:
            yield BreakingChange(schema, field, "no_longer_required", "is no longer required: consumers rely on it")
        yield from _compare(old, new, schema, field, node, new_properties[name])
    for name in sorted(new_required - old_required):
        field = f"{path}.{name}" if path else name
        if name in old_properties:
            yield BreakingChange(schema, field, "now_required", "became required: older events lack it")
        else:
            yield BreakingChange(schema, field, "new_required", "is new and required: older events lack it")
