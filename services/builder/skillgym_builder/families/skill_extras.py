"""The other authoring artifacts of skill-package: a function-calling tool manifest (JSON
Schema parameters) and prompt templates with declared variables, each with planted defects
and the fixed form the verifier expects."""

from __future__ import annotations

import json
import random
import re
from typing import Any

from skillgym_builder.families.skill_drafts import canon, digest, squash

ALIASES = {"integer": ["int", "Integer", "long"], "string": ["str", "String", "text"], "boolean": ["bool", "Boolean"],
           "number": ["float", "double"], "array": ["list", "Array"], "object": ["dict", "map"]}
PLACEHOLDER = re.compile(r"\{\{\s*([A-Za-z_][A-Za-z0-9_]*)\s*\}\}")
DANGLING = ["verbose", "page_token", "dry_run", "locale"]


def sorted_lists(value: Any) -> Any:
    """Lists of scalars sorted (their order carries no meaning in a schema), recursively."""
    if isinstance(value, dict):
        return {k: sorted_lists(v) for k, v in value.items()}
    if isinstance(value, list):
        items = [sorted_lists(v) for v in value]
        return sorted(items, key=canon) if all(not isinstance(v, dict | list) for v in items) else items
    return value


def tool_digest(tool: dict[str, Any]) -> str:
    return digest(json.dumps(sorted_lists(tool), sort_keys=True))


def _tool(spec: dict[str, Any]) -> dict[str, Any]:
    properties: dict[str, Any] = {}
    for name, (kind, text, *items) in spec["properties"].items():
        properties[name] = {"type": kind, "description": text, **({"items": {"type": items[0]}} if items else {})}
    schema = {"type": "object", "properties": properties, "required": list(spec["required"])}
    return {"name": spec["name"], "description": spec["description"], "input_schema": schema}


def manifest(toolset: dict[str, Any], rng: random.Random, noisy: bool) -> tuple[bytes, dict[str, str], list[str]]:
    """(the manifest as planted, digest of every fixed tool by name, the defects planted)."""
    fixed = [_tool(spec) for spec in toolset["tools"]]
    expected = {tool["name"]: tool_digest(tool) for tool in fixed}
    tools = json.loads(json.dumps(fixed))
    aliased = rng.sample([(t, p) for t in tools for p in t["input_schema"]["properties"]], 2)
    for tool, prop in aliased:
        schema = tool["input_schema"]["properties"][prop]
        schema["type"] = rng.choice(ALIASES[schema["type"]])
    holder = rng.choice([t for t in tools if len(t["input_schema"]["required"]) >= 1])
    moved = rng.choice(holder["input_schema"]["required"])
    holder["input_schema"]["required"].remove(moved)
    holder["input_schema"]["properties"][moved]["required"] = True
    dangling = rng.choice([t for t in tools if t is not holder])
    dangling["input_schema"]["required"].append(rng.choice(DANGLING))
    copy = rng.choice(tools)
    tools.insert(rng.randrange(tools.index(copy) + 1, len(tools) + 1), json.loads(json.dumps(copy)))
    indent = rng.choice([2, 4, None]) if noisy else 2
    data = (json.dumps({"tools": tools}, indent=indent) + "\n").encode()
    return data, expected, ["type_alias", "property_required", "dangling_required", "duplicate_tool"]


def prompt(template: dict[str, Any], spare: list[str], rng: random.Random, noisy: bool) -> tuple[bytes, dict[str, str]]:
    """(the template as planted, how its fixed form is judged)."""
    used = list(dict.fromkeys(PLACEHOLDER.findall(template["body"])))
    dropped = rng.choice(used)
    declared = [v for v in used if v != dropped] + [rng.choice(spare)]
    rng.shuffle(declared)
    listed = ("variables: [" + ", ".join(declared) + "]" if noisy and rng.random() < 0.5
              else "variables:\n" + "\n".join(f"  - {v}" for v in declared))
    text = f"---\nname: {template['name']}\ndescription: {template['description']}\n{listed}\n---\n\n{template['body']}"
    expected = {"variables": digest(json.dumps(sorted(used))), "body": digest(squash(template["body"])),
                "rest": digest(canon({"name": template["name"], "description": template["description"]}))}
    return text.encode(), expected
