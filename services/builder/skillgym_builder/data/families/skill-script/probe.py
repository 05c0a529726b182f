"""Runs a skill's own script on generated inputs (inside the build sandbox): twice per input
to see that its result is deterministic, and on inputs drawn again to see that it depends on the
input. Writes probe.json and each input's result under expected/; never fails itself, so the
builder can say why a script is unusable.

A result is taken as the same command gives it in the task: the run's own folder reads as the
task's working directory, and a stamp of the moment it ran is masked (the verifier masks the
agent's the same way). Exit status 1 with a result and no traceback is a checker's verdict
("issues found"), not a failure, when both runs agree on it; a checker that prints nothing and
reports on standard error gives that report as its result."""

import base64
import json
import os
import subprocess
import sys

WORKDIR = b"/app"
VERDICT_EXIT = 1


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
        data = base64.b64decode(text["base64"]) if isinstance(text, dict) else text.encode("utf-8")
        with open(os.path.join(folder, rel), "wb") as handle:
            handle.write(data)
    target = os.path.join(folder, item["output"])
    before = listing(folder)
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
    stream = "stdout"
    if (not params["writes_file"] and not result.strip() and done.returncode == VERDICT_EXIT
            and is_verdict(done.stderr, b"") and len(done.stderr.strip().splitlines()) >= 2):
        # a checker that reports its findings on standard error, as validators do (one line is
        # the message a script stops with)
        result, stream = done.stderr, "stderr"
    result = as_in_task(result, folder)
    verdict = done.returncode == VERDICT_EXIT and is_verdict(result, done.stderr)
    failed = (done.returncode != 0 and not verdict) or not result.strip()
    report = {"ok": not failed, "exit": done.returncode, "stream": stream, "quiet": not done.stderr.strip(),
              "stderr": done.stderr.decode("utf-8", "replace")[-800:] if failed else ""}
    side = side_file(folder, before, item, target)
    if side is not None and not params["writes_file"]:
        with open(os.path.join(folder, side), "rb") as handle:
            report["side"], report["side_result"] = side, as_in_task(handle.read(), folder)
    return report, result


def listing(folder):
    return {os.path.relpath(os.path.join(top, name), folder) for top, _, names in os.walk(folder) for name in names}


def side_file(folder, before, item, target):
    """The one new file named after the input that the script wrote beside it (``x_report.md``
    for ``data/x.csv``): a script that writes its result there rather than printing it."""
    stem = os.path.splitext(os.path.basename(item["input"].rstrip("/")))[0]
    made = [rel for rel in listing(folder) - before
            if stem in os.path.basename(rel) and rel not in item["files"] and os.path.join(folder, rel) != target]
    return made[0] if len(made) == 1 else None


def as_in_task(result, folder):
    """The result as the task's working directory gives it, with the moment it ran masked."""
    from clock import mask_bytes

    for path in {os.path.realpath(folder), os.path.abspath(folder)}:
        result = result.replace(path.encode(), WORKDIR)
    return mask_bytes(result)


def is_verdict(result, stderr):
    first = result.strip().split(b"\n", 1)[0].lower()
    return (b"Traceback (most recent call last)" not in stderr and bool(result.strip())
            and not first.startswith((b"error", b"usage", b"fatal", b"no such", b"cannot", b"can't")))


def main():
    with open(sys.argv[1], encoding="utf-8") as handle:
        params = json.load(handle)
    out = sys.argv[2]
    root = os.path.join(out, "work")
    helpers = os.path.join(out, "helpers")
    os.makedirs(helpers, exist_ok=True)
    for name, text in params.get("helpers", {}).items():
        with open(os.path.join(helpers, name), "w", encoding="utf-8") as handle:
            handle.write(text)
    sys.path.insert(0, helpers)
    for rel, text in params["files"].items():
        path = os.path.join(root, "skill", rel)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w", encoding="utf-8") as handle:
            handle.write(text)
    os.makedirs(os.path.join(out, "expected"), exist_ok=True)
    runs = []
    for item in params["inputs"]:
        # the inputs one after another in one folder, as the reference solution runs them in the task
        runs.append((run(params, root, "a", item), run(params, root, "b", item, reverse=True)))
    # inputs drawn again: a result that follows the input differs on one of them (a check whose
    # result takes few values may agree with the first input on one draw)
    variants = [run(params, root, f"variant-{index}", item) for index, item in enumerate(params["variants"])]
    report = judge(runs, variants, "printed")
    if not report["variant_differs"] and all(first.get("side") and second.get("side") for (first, _), (second, _) in runs):
        # what it prints does not follow the input, the file it writes beside it does: that file is the result
        sides = [(beside_run(first), beside_run(second)) for (first, _), (second, _) in runs]
        beside = judge(sides, [beside_run(variant) for variant, _ in variants], "beside")
        if beside["variant_differs"]:
            report, runs = beside, sides
    for index, ((_, result), _) in enumerate(runs):
        with open(os.path.join(out, "expected", f"{index}.out"), "wb") as handle:
            handle.write(result)
    with open(os.path.join(out, "probe.json"), "w", encoding="utf-8") as handle:
        json.dump(report, handle)


def beside_run(report):
    """A run judged by the file it wrote beside its input: done when the script exited cleanly."""
    result = report.get("side_result", b"")
    return dict(report, ok=report["exit"] == 0 and bool(result.strip()), stream="beside"), result


def judge(runs, variants, result_from):
    report = {"inputs": [], "result_from": result_from, "variant_differs": False}
    for (first, result), (second, again) in runs:
        first = dict(first)
        first["deterministic"] = (first["ok"] and second["ok"] and result == again and first["exit"] == second["exit"]
                                  and first["stream"] == second["stream"])
        first["same_but_order"] = first["ok"] and second["ok"] and canonical(result) == canonical(again)
        report["inputs"].append({k: v for k, v in first.items() if k != "side_result"})
    first_result = runs[0][0][1]
    for variant, varied in variants:
        report["variant_ok"], report["variant_run"] = variant["ok"], {k: v for k, v in variant.items() if k != "side_result"}
        if variant["ok"] and varied and varied != first_result:
            report["variant_differs"] = True
            break
    return report


main()
