"""Verifier for git-forensics: the reported first bad commit and its details, the fix commit's
place in the graph and its conventions, the fix making the tests pass (run confined), the
leaked credential's commits and the changelog, against the history planted at build time.
Every git command on the solver's repository runs through ``checks.git`` (confined, its hooks
and config neutralised); the work tree is compared with the fix commit in this process."""

import datetime
import hashlib
import json
import os
import re
import shutil
import stat
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import checks
from checks import TESTS, app_path, load_expected, run, run_untrusted

E = load_expected()
REPORT = "out/forensics.json"
MAX_REPORT = 256 * 1024
MAX_TRACKED = 2 * 1024 * 1024
HEX40 = re.compile(r"[0-9a-f]{40}")
_cache = {}
REFS = dict(reversed(line.split(" ", 1)) for line in E["refs"].splitlines())
MAIN_TIP = REFS["refs/heads/main"]


def report():
    if "report" not in _cache:
        if os.path.getsize(app_path(REPORT)) > MAX_REPORT:
            raise ValueError("report too large")
        _cache["report"] = checks.read_json(REPORT)
    return _cache["report"]


def git(*args):
    return checks.git("-C", "repo", *args)


def commit_id(value):
    text = str(value).strip().lower()
    if not HEX40.fullmatch(text):
        raise ValueError(f"not a full commit id: {text!r}")
    return text


def same_instant(value, timestamp):
    moment = datetime.datetime.fromisoformat(str(value).strip().replace("Z", "+00:00"))
    if moment.tzinfo is None:
        raise ValueError("the date needs its UTC offset")
    return int(moment.timestamp()) == timestamp


def first_bad():
    got, want = report()["first_bad"], E["first_bad"]
    files = {str(p).strip() for p in got["files"]}
    return (commit_id(got["commit"]) == want["commit"] and str(got["author_name"]).strip() == want["author_name"]
            and str(got["author_email"]).strip().casefold() == want["author_email"].casefold()
            and same_instant(got["author_date"], want["timestamp"]) and files == set(want["files"])
            and len(got["files"]) == len(files))


def refs_intact():
    lines = git("for-each-ref", "--format=%(objectname) %(refname)", "refs/heads", "refs/tags").splitlines()
    current = {ref: oid for oid, _, ref in (line.partition(" ") for line in lines)}
    return all(current.get(ref) == oid for ref, oid in REFS.items())


def parse_commit(raw):
    header, _, message = raw.partition("\n\n")
    fields = [line.split(" ", 1) for line in header.splitlines() if " " in line]
    return fields, message


def fix_target():
    got = report()["fix"]
    branch, commit = str(got["branch"]).strip(), commit_id(got["commit"])
    if not branch or branch.startswith("-") or not re.fullmatch(r"[\w./-]+", branch):
        raise ValueError(f"unusable branch name {branch!r}")
    return branch, commit


def message_follows(message, rule):
    lines = [line.rstrip() for line in message.strip("\n").splitlines()]
    if not lines or not re.fullmatch(rule["header_regex"], lines[0]) or len(lines[0]) > 100:
        return False
    if len(lines) > 1 and lines[1].strip():
        return False  # the header stands alone on its line
    body = lines[1:]
    if rule["footer"] and not any(line.casefold() == rule["footer"].casefold() for line in body):
        return False
    signoff = f"Signed-off-by: {E['identity']}"
    return not rule["signoff"] or signoff in body


def blob_id(data):
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


def read_tracked(rel):
    fd = os.open(app_path(os.path.join("repo", rel)), os.O_RDONLY | os.O_NOFOLLOW)
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode) or os.fstat(fd).st_size > MAX_TRACKED:
            raise ValueError(f"{rel} is not a small regular file")
        with os.fdopen(fd, "rb", closefd=False) as handle:
            return handle.read(MAX_TRACKED + 1)
    finally:
        os.close(fd)


def work_tree_matches(commit):
    """The checked-out files are exactly the fix commit's (compiled caches aside)."""
    tracked = {}
    for entry in git("ls-tree", "-r", "-z", "--full-tree", commit).split("\0"):
        if entry:
            meta, _, path = entry.partition("\t")
            tracked[path] = meta.split()[2]
    root = app_path("repo")
    for directory, dirs, names in os.walk(root, followlinks=False):
        dirs[:] = [d for d in dirs if not (directory == root and d == ".git") and d != "__pycache__"]
        for name in names:
            rel = os.path.relpath(os.path.join(directory, name), root)
            if rel not in tracked and not name.endswith(".pyc"):
                return False
    return all(blob_id(read_tracked(path)) == oid for path, oid in tracked.items())


def fix_commit():
    branch, commit = fix_target()
    rule = E["convention"]
    if not re.fullmatch(rule["branch_regex"], branch):
        return False
    if git("symbolic-ref", "-q", "HEAD").strip() != f"refs/heads/{branch}":
        return False
    if git("rev-parse", "--verify", "-q", f"refs/heads/{branch}^{{commit}}").strip() != commit:
        return False
    fields, message = parse_commit(git("cat-file", "commit", commit))
    parents = [value for key, value in fields if key == "parent"]
    author = next(value for key, value in fields if key == "author")
    if parents != [MAIN_TIP] or not author.startswith(f"{E['identity']} "):
        return False
    changed = git("diff-tree", "-r", "--name-only", "--no-commit-id", MAIN_TIP, commit).split()
    if not changed or not all(path.startswith("src/") for path in changed):
        return False
    return message_follows(message, rule) and refs_intact() and work_tree_matches(commit)


def fix_works():
    """The fix commit's tree, extracted and run confined: the repository's own test passes and
    the function gives the right result on the recorded and the hidden cases."""
    _, commit = fix_target()
    trusted = tempfile.mkdtemp(prefix="trusted-")
    shutil.copy(os.path.join(TESTS, "harness.py"), os.path.join(trusted, "harness.py"))
    with open(os.path.join(trusted, "cases.json"), "w", encoding="utf-8") as handle:
        json.dump([args for args, _ in E["cases"]], handle)
    tree = tempfile.mkdtemp(prefix="fixtree-")
    extract = ('git -c core.hooksPath=/dev/null -c core.fsmonitor=false archive --format=tar "$2" '
               '| tar -x -C "$1"')
    if run_untrusted(["sh", "-c", extract, "sh", tree, commit], cwd=app_path("repo")).returncode != 0:
        return False
    suite = run_untrusted(["env", "-u", "PYTHONSAFEPATH", sys.executable, "-m", "unittest", E["test_module"]],
                          cwd=tree, timeout=120)
    if suite.returncode != 0:
        return False
    harness = run_untrusted([sys.executable, os.path.join(trusted, "harness.py"), os.path.join(tree, "src"),
                             E["module"], E["function"], os.path.join(trusted, "cases.json")], timeout=120)
    marked = [line for line in harness.stdout.splitlines() if line.startswith("HARNESS-RESULT ")]
    return bool(marked) and json.loads(marked[-1].split(" ", 1)[1]) == [result for _, result in E["cases"]]


def leak():
    got, want = report()["leak"], E["leak"]
    with open(app_path(REPORT), encoding="utf-8", errors="replace") as handle:
        if want["secret"] in handle.read(MAX_REPORT):
            return False  # the credential itself must not be copied
    return (str(got["path"]).strip() == want["path"] and commit_id(got["added_in"]) == want["added_in"]
            and commit_id(got["removed_in"]) == want["removed_in"])


def changelog():
    got, want = report()["changelog"], E["changelog"]
    if (str(got["from"]).strip(), str(got["to"]).strip()) != (want["from"], want["to"]):
        return False
    groups = {}
    for kind, ids in got["groups"].items():
        listed = [commit_id(i) for i in ids]
        if listed:
            groups[str(kind).strip()] = sorted(listed)
    return groups == want["groups"]


CHECKS = {"first_bad": first_bad, "fix_commit": fix_commit, "fix_works": fix_works, "leak": leak,
          "changelog": changelog}
run([(name, CHECKS[name]) for name in checks.load_rubric()])
