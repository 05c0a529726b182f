"""Agent Skills spec checks on parsed front matter. Every violation is a Diagnostic."""

from __future__ import annotations

import re
from typing import Any, Literal

from skillgym_core.contracts.skill import Diagnostic

NAME_PATTERN = re.compile(r"^[a-z0-9]+(?:-[a-z0-9]+)*$")
NAME_MAX = 64
DESCRIPTION_MAX = 1024
COMPATIBILITY_MAX = 500
KNOWN_FIELDS = frozenset({"name", "description", "license", "compatibility", "metadata", "allowed-tools"})


def check_front_matter(front: dict[str, Any], folder_name: str, file: str = "SKILL.md") -> list[Diagnostic]:
    out: list[Diagnostic] = []

    def add(code: str, message: str, severity: Literal["error", "warning", "info"] = "error") -> None:
        out.append(Diagnostic(code=code, message=message, severity=severity, file=file))

    name = front.get("name")
    if name is None:
        add("name_missing", "front matter has no 'name'")
    elif not isinstance(name, str):
        add("name_not_string", f"'name' is a {type(name).__name__}, not a string")
    else:
        if not name:
            add("name_empty", "'name' is empty")
        elif len(name) > NAME_MAX:
            add("name_too_long", f"'name' has {len(name)} characters (max {NAME_MAX})")
        if name and not NAME_PATTERN.match(name):
            if name != name.lower():
                add("name_uppercase", "'name' must be lowercase")
            if "--" in name:
                add("name_consecutive_hyphens", "'name' must not contain '--'")
            if name.startswith("-") or name.endswith("-"):
                add("name_edge_hyphen", "'name' must not start or end with '-'")
            if re.search(r"[^a-zA-Z0-9-]", name):
                add("name_invalid_chars", "'name' may hold only lowercase letters, digits and hyphens")
        if name and folder_name and name != folder_name:
            add("name_folder_mismatch", f"'name' {name!r} does not match the folder {folder_name!r}", "warning")

    description = front.get("description")
    if description is None:
        add("description_missing", "front matter has no 'description'")
    elif not isinstance(description, str):
        add("description_not_string", f"'description' is a {type(description).__name__}, not a string")
    elif not description.strip():
        add("description_empty", "'description' is empty")
    elif len(description) > DESCRIPTION_MAX:
        add("description_too_long", f"'description' has {len(description)} characters (max {DESCRIPTION_MAX})")

    if "license" in front and not isinstance(front["license"], str):
        add("license_not_string", "'license' must be a string")

    if "compatibility" in front:
        compat = front["compatibility"]
        if not isinstance(compat, str):
            add("compatibility_not_string", "'compatibility' must be a string")
        elif not compat.strip() or len(compat) > COMPATIBILITY_MAX:
            add("compatibility_length", f"'compatibility' must be 1-{COMPATIBILITY_MAX} characters")

    if "metadata" in front:
        meta = front["metadata"]
        if not isinstance(meta, dict):
            add("metadata_not_mapping", "'metadata' must be a mapping of string keys to string values")
        elif any(not isinstance(v, str) for v in meta.values()):
            add("metadata_values_not_strings", "'metadata' values should be strings", "warning")

    if "allowed-tools" in front:
        tools = front["allowed-tools"]
        if isinstance(tools, list):
            add("allowed_tools_list", "'allowed-tools' should be a space-delimited string", "warning")
        elif not isinstance(tools, str):
            add("allowed_tools_invalid", "'allowed-tools' must be a space-delimited string")

    for key in sorted(set(front) - KNOWN_FIELDS):
        add("unknown_field", f"front matter field {key!r} is not in the spec", "info")
    return out


def allowed_tools(front: dict[str, Any]) -> list[str]:
    tools = front.get("allowed-tools")
    if isinstance(tools, str):
        return tools.split()
    if isinstance(tools, list):
        return [str(t) for t in tools]
    return []
