"""Runs a skill's own script on generated inputs (inside the build sandbox): twice per input
to see that its result is deterministic, and once on a variant to see that it depends on the
input. Writes probe.json and each input's result under expected/; never fails itself, so the
builder can say why a script is unusable."""

import json
import os
import subprocess
import sys


def canonical(data):
    """The result with every list sorted: equal for two runs that differ only in order."""
    def sort(value):
        if isinstance(value, dict):
            return {k: sort(v) for k, v in value.items()}
        if isinstance(value, list):
            return sorted((sort(v) for v in value), key=lambda v: json.dumps(v, sort_keys=True))
        return value
    text = data.decode("utf-8", "replace")
    try:
        return json.dumps(sort(json.loads(text)), sort_keys=True)
    except ValueError:
        return "\n".join(sorted(" ".join(line.split()) for line in text.splitlines() if line.strip()))


def run(params, root, tag, item, reverse=False):
    """The script on one input, laid out as in the task (``data/...`` in, ``out/...`` out, paths
    relative to the working directory) so its result is what the same command gives there."""
    folder = os.path.join(root, "runs", tag)
    os.makedirs(os.path.join(folder, os.path.dirname(item["output"])), exist_ok=True)
    # The second run lays the files down in the other order: a result that follows directory
    # listing order is told apart from one that follows the data.
    for rel, text in sorted(item["files"].items(), reverse=reverse):
        os.makedirs(os.path.join(folder, os.path.dirname(rel)), exist_ok=True)
        with open(os.path.join(folder, rel), "w", encoding="utf-8", newline="") as handle:
            handle.write(text)
    target = os.path.join(folder, item["output"])
    script = os.path.join(root, "skill", params["script"])
    argv = [a.replace("{input}", item["input"]).replace("{output}", item["output"]) for a in params["argv"]]
    try:
        interpreter = sys.executable if params.get("interpreter", "python3") == "python3" else "bash"
        done = subprocess.run([interpreter, script, *argv], cwd=folder, capture_output=True,
                              timeout=params["timeout"], stdin=subprocess.DEVNULL)
    except subprocess.TimeoutExpired:
        return {"ok": False, "exit": None, "stderr": f"timed out after {params['timeout']} s"}, b""
    result = done.stdout
    if params["writes_file"]:
        result = b""
        if os.path.isfile(target):
            with open(target, "rb") as handle:
                result = handle.read()
    failed = done.returncode != 0 or not result.strip()
    return {"ok": not failed, "exit": done.returncode,
            "stderr": done.stderr.decode("utf-8", "replace")[-800:] if failed else ""}, result


def main():
    with open(sys.argv[1], encoding="utf-8") as handle:
        params = json.load(handle)
    out = sys.argv[2]
    root = os.path.join(out, "work")
    for rel, text in params["files"].items():
        path = os.path.join(root, "skill", rel)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w", encoding="utf-8") as handle:
            handle.write(text)
    os.makedirs(os.path.join(out, "expected"), exist_ok=True)
    report = {"inputs": []}
    first_result = None
    for index, item in enumerate(params["inputs"]):
        first, result = run(params, root, f"{index}-a", item)
        second, again = run(params, root, f"{index}-b", item, reverse=True)
        first["deterministic"] = first["ok"] and second["ok"] and result == again
        first["same_but_order"] = first["ok"] and second["ok"] and canonical(result) == canonical(again)
        report["inputs"].append(first)
        with open(os.path.join(out, "expected", f"{index}.out"), "wb") as handle:
            handle.write(result)
        if index == 0:
            first_result = result
    variant, varied = run(params, root, "variant", params["variant"])
    report["variant_ok"] = variant["ok"]
    report["variant_differs"] = variant["ok"] and varied != first_result
    with open(os.path.join(out, "probe.json"), "w", encoding="utf-8") as handle:
        json.dump(report, handle)


main()
