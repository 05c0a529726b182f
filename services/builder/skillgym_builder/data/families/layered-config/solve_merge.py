# --- resolving the layered configuration ---
import copy
import json
import os
import re
import sys

from skillfacts import layer_order, null_deletes

TASK = json.loads(sys.argv[1])
ORDER = layer_order() if TASK["order_from_skill"] else TASK["order"]
NULL_DELETES = null_deletes() if TASK["null_rule_from_skill"] else False


def load(path):
    with open(path, encoding="utf-8") as handle:
        text = handle.read()
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        repaired = re.sub(r",(\s*[}\]])", r"\1", text)  # a trailing comma is the usual culprit
        print(f"repaired {path}")
        with open(path, "w", encoding="utf-8") as handle:
            handle.write(repaired)
        return json.loads(repaired)


def merge(base, layer, name, source, prefix=""):
    for key, value in layer.items():
        path = f"{prefix}.{key}" if prefix else key
        if value is None and NULL_DELETES:
            base.pop(key, None)
            source.pop(path, None)
        elif isinstance(value, dict) and isinstance(base.get(key), dict):
            merge(base[key], value, name, source, path)
        else:
            base[key] = copy.deepcopy(value)
            source[path] = name
            for stale in [p for p in source if p.startswith(path + ".")]:
                del source[stale]
            if isinstance(value, dict):
                mark(value, name, source, path)


def mark(value, name, source, prefix):
    for key, inner in value.items():
        path = f"{prefix}.{key}"
        source[path] = name
        if isinstance(inner, dict):
            mark(inner, name, source, path)


effective, provenance = {}, {}
for service in TASK["services"]:
    result, source = {}, {}
    for name in ORDER:
        path = os.path.join("services", service, "config", name)
        if os.path.exists(path):
            merge(result, load(path), name, source)
    effective[service] = result
    provenance[service] = {key: source[key] for key in TASK["queries"][service]}
os.makedirs("out", exist_ok=True)
with open("out/effective.json", "w", encoding="utf-8") as handle:
    json.dump(effective, handle, indent=2)
with open("out/provenance.json", "w", encoding="utf-8") as handle:
    json.dump(provenance, handle, indent=2)
