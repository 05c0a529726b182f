"""Runs the fixed function on the recorded cases (run confined; its output is only compared)."""
import importlib
import json
import sys

source_root, module_name, function_name, cases_path = sys.argv[1:5]
with open(cases_path, encoding="utf-8") as handle:
    cases = json.load(handle)
sys.path.insert(0, source_root)
function = getattr(importlib.import_module(module_name), function_name)
results = []
for args in cases:
    try:
        results.append(function(*args))
    except Exception as exc:  # a crash on one case is a wrong result, not a harness failure
        results.append(f"error: {type(exc).__name__}")
print("HARNESS-RESULT " + json.dumps(results))
