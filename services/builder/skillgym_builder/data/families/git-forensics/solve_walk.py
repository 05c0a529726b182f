# --- test every commit since the good tag in its own checkout, fix with a three-way merge ---
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

from conventions import commit_fix, fix_plan, write_report

TASK = json.loads(sys.argv[1])
os.environ["PYTHONDONTWRITEBYTECODE"] = "1"
os.chdir("/app/repo")


def git(*args, data=None):
    return subprocess.run(["git", *args], capture_output=True, text=data is None, check=True).stdout


def status(commit):
    """good, bad, or untestable, judged in a throwaway copy of the commit's tree."""
    tree = tempfile.mkdtemp(prefix="walk-")
    try:
        subprocess.run(["tar", "-x", "-C", tree], input=git("archive", commit, data=True), check=True)
        done = subprocess.run([sys.executable, "-m", "unittest", TASK["test"]], cwd=tree, capture_output=True,
                              text=True)
        text = done.stdout + done.stderr
        if done.returncode == 0:
            return "good"
        return "bad" if re.search(r"FAILED \(failures=\d+\)", text) else "untestable"
    finally:
        shutil.rmtree(tree)


def first_bad():
    commits = git("rev-list", "--topo-order", "main", f"^{TASK['good']}").split()
    states = {commit: status(commit) for commit in commits}
    parents = {c: git("rev-list", "--parents", "-n", "1", c).split()[1:] for c in commits}
    firsts = [c for c, s in states.items() if s == "bad" and all(states.get(p, "good") == "good" for p in parents[c])]
    print({s: sum(1 for v in states.values() if v == s) for s in ("good", "bad", "untestable")}, firsts)
    assert len(firsts) == 1, firsts
    return firsts[0]


def details(commit):
    fields = git("log", "-1", "--format=%an%x00%ae%x00%ad", "--date=iso-strict", commit).rstrip("\n").split("\0")
    changed = git("show", "--format=", "--name-only", commit).split()
    return {"commit": commit, "author_name": fields[0], "author_email": fields[1], "author_date": fields[2],
            "files": changed}


def fix(bad):
    path = TASK["module_path"]
    branch, message, signoff = fix_plan(TASK, "undo the broken computation",
                                        f"Reverses the change {bad[:10]} made to {path}.")
    git("switch", "-q", "-c", branch, "main")
    scratch = tempfile.mkdtemp(prefix="merge-")
    for name, rev in (("broken", bad), ("working", f"{bad}^")):
        with open(os.path.join(scratch, name), "wb") as handle:
            handle.write(git("show", f"{rev}:{path}", data=True))
    merged = subprocess.run(["git", "merge-file", "-p", path, os.path.join(scratch, "broken"),
                             os.path.join(scratch, "working")], capture_output=True, check=True).stdout
    with open(path, "wb") as handle:
        handle.write(merged)
    return {"branch": branch, "commit": commit_fix(TASK, [path], message, signoff)}


def leak():
    found = {}
    for commit in git("rev-list", "--all", "--no-merges", "--reverse", "--topo-order").split():
        for line in git("diff-tree", "-r", "--root", "--no-commit-id", "--name-status", commit).splitlines():
            change, path = line.split("\t", 1)
            if not path.endswith(".env"):
                continue
            if change == "A" and "TOKEN=" in git("show", f"{commit}:{path}") and "path" not in found:
                found.update(path=path, added_in=commit)
            elif change == "D" and path == found.get("path"):
                found["removed_in"] = commit
    return found


def changelog(start, end):
    groups = {}
    for commit in git("rev-list", "--no-merges", end, f"^{start}").split():
        subject = git("log", "-1", "--format=%s", commit).strip()
        match = re.match(r"([a-z]+)(\([^)]*\))?!?: ", subject)
        groups.setdefault(match.group(1) if match else "other", []).append(commit)
    return {"from": start, "to": end, "groups": groups}


bad = first_bad()
report = {"first_bad": details(bad), "fix": fix(bad)}
if TASK["leak"]:
    report["leak"] = leak()
if TASK["changelog"]:
    report["changelog"] = changelog(*TASK["changelog"])
write_report(report)
print(json.dumps(report, indent=2))
