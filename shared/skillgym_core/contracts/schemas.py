"""The published JSON Schemas (draft 2020-12) of every payload, generated from the models.

A payload's schema is its model's ``model_json_schema()`` in validation mode (a field with a
default may be absent, as it is in events published before the field was added) with ``$schema``
and ``$id`` added, ``kind`` required, and ``additionalProperties`` left open: a consumer must
ignore fields it does not know, since a later revision of the same major version may add
optional ones. Files are rendered with sorted keys, so generating twice gives the same bytes.

The schemas of the current major version ship with the package (``schemas/v<major>/``) next to
the AsyncAPI document; ``skillgym events schemas --out DIR`` writes them afresh."""

from __future__ import annotations

import builtins
import json
from collections.abc import Callable
from importlib import resources
from importlib.resources.abc import Traversable
from pathlib import Path
from typing import Any

from skillgym_core.contracts.cloudevents import schema_folder, schema_id
from skillgym_core.contracts.events import Payload, kind_of, payload_types

SCHEMA_DIALECT = "https://json-schema.org/draft/2020-12/schema"
SCHEMA_SUFFIX = ".schema.json"
ASYNCAPI_FILE = "asyncapi.yaml"


def schema_file(kind: str) -> str:
    return kind + SCHEMA_SUFFIX


def payload_schema(model: builtins.type[Payload]) -> dict[str, Any]:
    schema = model.model_json_schema()
    schema.pop("additionalProperties", None)
    schema["required"] = ["kind", *(name for name in schema.get("required", []) if name != "kind")]
    return {"$schema": SCHEMA_DIALECT, "$id": schema_id(kind_of(model)), **schema}


def generated_schemas() -> dict[str, dict[str, Any]]:
    """File name -> schema, for every payload."""
    return {schema_file(kind_of(model)): payload_schema(model) for model in payload_types()}


def render_json(document: dict[str, Any]) -> str:
    return json.dumps(document, indent=2, sort_keys=True, ensure_ascii=False) + "\n"


def artifacts() -> dict[str, str]:
    """File name -> text of everything published for the current major version: one schema
    per payload and the AsyncAPI document."""
    from skillgym_core.contracts.asyncapi import asyncapi_document, render_yaml

    files = {name: render_json(schema) for name, schema in generated_schemas().items()}
    files[ASYNCAPI_FILE] = render_yaml(asyncapi_document())
    return files


def write_artifacts(directory: Path) -> list[Path]:
    directory.mkdir(parents=True, exist_ok=True)
    written = []
    for name, text in artifacts().items():
        path = directory / name
        path.write_text(text)
        written.append(path)
    return written


def published_dir(folder: str | None = None) -> Traversable:
    """The schemas shipped with the package for a major version (default: the current one)."""
    return resources.files("skillgym_core.contracts").joinpath("schemas", folder or schema_folder())


def load_schemas(directory: Traversable | Path) -> dict[str, dict[str, Any]]:
    """File name -> schema of every ``*.schema.json`` in ``directory`` (none when it is missing)."""
    if not directory.is_dir():
        return {}
    return {
        entry.name: json.loads(entry.read_text())
        for entry in sorted(directory.iterdir(), key=lambda e: e.name)
        if entry.name.endswith(SCHEMA_SUFFIX)
    }


def validator_for(schemas: dict[str, dict[str, Any]]) -> Callable[[str, Any], list[str]]:
    """``check(dataschema, data)``: the errors of ``data`` against the schema whose ``$id`` is
    ``dataschema`` (jsonschema must be installed)."""
    import jsonschema

    by_id = {schema["$id"]: jsonschema.Draft202012Validator(schema) for schema in schemas.values()}

    def check(dataschema: str, data: Any) -> list[str]:
        validator = by_id.get(dataschema)
        if validator is None:
            return [f"no published schema has the id {dataschema}"]
        return [f"{'/'.join(map(str, error.absolute_path)) or '(root)'}: {error.message}"
                for error in validator.iter_errors(data)]  # fmt: skip

    return check
