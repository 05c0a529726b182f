"""Runs the agent's function on the given inputs (under run-untrusted) and prints the results."""

import importlib
import json
import sys

project, package, module, function, inputs, marker = sys.argv[1:7]
sys.path.insert(0, project)
with open(inputs, encoding="utf-8") as handle:
    cases = json.load(handle)
target = getattr(importlib.import_module(f"{package}.{module}"), function)
results = []
for args in cases:
    try:
        results.append({"ok": target(*args)})
    except Exception as exc:  # the verifier compares which exception, not only that one happened
        results.append({"error": [cls.__name__ for cls in type(exc).__mro__]})
print(marker + json.dumps(results, default=repr))
