# --- resolving the layered configuration through flattened paths ---
import json
import os
import re
import sys

from skillfacts import layer_order, null_deletes

TASK = json.loads(sys.argv[1])
ORDER = layer_order() if TASK["order_from_skill"] else TASK["order"]
NULL_DELETES = null_deletes() if TASK["null_rule_from_skill"] else False
EMPTY = object()


def load(path):
    with open(path, encoding="utf-8") as handle:
        text = handle.read()
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        return json.loads(re.sub(r",(\s*[}\]])", r"\1", text))


def flatten(value, prefix=()):
    """{path tuple: leaf} where leaves are scalars, lists, nulls and empty objects."""
    if isinstance(value, dict) and value:
        out = {}
        for key, inner in value.items():
            out.update(flatten(inner, (*prefix, key)))
        return out
    return {prefix: EMPTY if value == {} else value}


def build(leaves):
    root = {}
    for path, value in leaves.items():
        node = root
        for key in path[:-1]:
            node = node.setdefault(key, {})
        node[path[-1]] = {} if value is EMPTY else value
    return root


effective, provenance = {}, {}
for service in TASK["services"]:
    leaves, origin = {}, {}
    for name in ORDER:
        path = os.path.join("services", service, "config", name)
        if not os.path.exists(path):
            continue
        for key, value in flatten(load(path)).items():
            for other in [p for p in leaves if p[: len(key)] == key or key[: len(p)] == p]:
                del leaves[other]
            if value is None and NULL_DELETES:
                continue
            leaves[key] = value
            origin[key] = name
    effective[service] = build(leaves)
    provenance[service] = {q: origin[tuple(q.split("."))] for q in TASK["queries"][service]}
os.makedirs("out", exist_ok=True)
with open("out/effective.json", "w", encoding="utf-8") as handle:
    handle.write(json.dumps(effective, sort_keys=True))
with open("out/provenance.json", "w", encoding="utf-8") as handle:
    handle.write(json.dumps(provenance, sort_keys=True))
