"""The escape suite: every class of attack a hostile agent was found to try, as real tasks
through the real local sandbox and the trusted verifier runtime. Each attack must fail, leave
the host as it was, and never earn a reward the verifier did not write.

Attacks that would change the host if they succeeded write back the value already there, so
a broken protection fails the test without damaging the machine running it."""

from __future__ import annotations

import os
import stat
import subprocess
import tempfile
import time
from pathlib import Path

import pytest
from skillgym_core.contracts.task import TaskDir
from skillgym_core.sandbox import Limits, Mount, Outcome
from skillgym_core.sandbox.janitor import remove_tree, wait_idle
from skillgym_core.sandbox.local import LocalSandbox
from skillgym_core.taskrun import TaskRunner

from tests.support import verdict_attacks
from tests.validator.tasks import make_task

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="the suite checks the root-started sandbox")

SECRET = "sk-live-host-secret-5f1e2d"


@pytest.fixture(scope="module")
def sandbox() -> LocalSandbox:
    return LocalSandbox()


@pytest.fixture(scope="module")
def runner(sandbox: LocalSandbox) -> TaskRunner:
    return TaskRunner(sandbox, environment=None, judge=None)


def _task(tmp_path: Path, *, storage_mb: int | None = None, **kwargs: object) -> TaskDir:
    task = make_task(tmp_path / "task", **kwargs)  # type: ignore[arg-type]
    if storage_mb is not None:
        config = task.config()
        config.environment.storage_mb = storage_mb
        task.write_config(config)
    return task


def _agent(runner: TaskRunner, task: TaskDir, tmp_path: Path, command: str, timeout_s: float = 30):
    workspace = runner.fresh_workspace(task, tmp_path)
    result = runner.run_agent_command(task, workspace, command, timeout_s=timeout_s)
    return workspace, result


def _python(code: str) -> str:
    return "python3 - <<'PY'\n" + code.strip() + "\nPY\n"


# -- 1. host code execution -------------------------------------------------------------------


def test_sysctl_writes_and_the_core_pattern_chain_are_refused(runner: TaskRunner, tmp_path: Path) -> None:
    task = _task(tmp_path)
    before = Path("/proc/sys/kernel/core_pattern").read_text()
    command = (
        "printf '#!/bin/sh\\nid > /tmp/owned\\n' > /app/handler.sh; chmod +x /app/handler.sh\n"
        # writing the value already there: harmless if the protection were broken, refused if not
        "cat /proc/sys/kernel/core_pattern > /tmp/current\n"
        "{ cat /tmp/current > /proc/sys/kernel/core_pattern; } 2>/app/core_pattern.err && echo written > /app/pwned\n"
        "{ cat /proc/sys/kernel/printk_ratelimit > /proc/sys/kernel/printk_ratelimit; } 2>>/app/core_pattern.err"
        " && echo written >> /app/pwned\n"
        "ls /sys >/app/sys.txt 2>&1; touch /sys/kernel/x 2>>/app/sys.txt; true\n"
    )
    workspace, result = _agent(runner, task, tmp_path, command)
    assert result.ok, result
    assert not (workspace / "pwned").exists()
    assert "Permission denied" in (workspace / "core_pattern.err").read_text()
    assert Path("/proc/sys/kernel/core_pattern").read_text() == before


def test_runs_as_an_unprivileged_user_without_capabilities(sandbox: LocalSandbox, tmp_path: Path) -> None:
    result = sandbox.run(["bash", "-c", "id -u; grep -E '^(CapEff|CapBnd|NoNewPrivs|Seccomp):' /proc/self/status"],
                         mounts=[])  # fmt: skip
    assert result.ok, result
    lines = result.stdout.split("\n")
    assert lines[0] == "1000"
    status = dict(line.split(":\t") for line in lines[1:] if line)
    assert status == {"CapEff": "0000000000000000", "CapBnd": "0000000000000000", "NoNewPrivs": "1", "Seccomp": "2"}
    processes = subprocess.run(["ps", "-eo", "uid,args"], capture_output=True, text=True).stdout
    assert not any(line.split()[0] == "0" and "bwrap --args" in line for line in processes.splitlines())


# -- 2. secrets ---------------------------------------------------------------------------------


def test_host_environment_and_memory_hold_no_secret(
    runner: TaskRunner, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SKILLGYM_S3_SECRET_KEY", SECRET)
    monkeypatch.setenv("SKILLGYM_SAMPLER_LLM_API_KEY", SECRET)
    task = _task(tmp_path)
    encoded = SECRET[::-1]  # the command itself must not hold the secret it looks for
    command = _python(
        f"""
import os
secret = {encoded!r}[::-1].encode()
found = []
for pid in [p for p in os.listdir('/proc') if p.isdigit() and p != str(os.getpid())]:
    for name in ('environ', 'cmdline'):
        try:
            if secret in open(f'/proc/{{pid}}/{{name}}', 'rb').read():
                found.append(f'{{pid}}/{{name}}')
        except OSError:
            pass
    try:
        maps = open(f'/proc/{{pid}}/maps').read().splitlines()
        mem = open(f'/proc/{{pid}}/mem', 'rb')
        for line in maps:
            start, end = (int(x, 16) for x in line.split()[0].split('-'))
            if 'r' in line.split()[1] and end - start < 64 << 20:
                try:
                    mem.seek(start)
                    if secret in mem.read(end - start):
                        found.append(f'{{pid}}/mem')
                except OSError:
                    pass
    except OSError:
        pass
print('found', found)
"""
    )
    _, result = _agent(runner, task, tmp_path, command)
    assert result.ok, result
    assert "found []" in result.stdout
    assert SECRET not in result.stdout + result.stderr


def test_root_only_files_are_unreadable(tmp_path: Path) -> None:
    secrets = tmp_path / "etc-like"
    secrets.mkdir()
    (secrets / "credentials").write_text(SECRET)
    os.chmod(secrets / "credentials", 0o600)
    os.chmod(secrets, 0o755)
    os.chmod(tmp_path, 0o755)
    sandbox = LocalSandbox(extra_ro_paths=[str(secrets)])
    result = sandbox.run(
        ["bash", "-c", f"cat {secrets}/credentials /etc/shadow /etc/gshadow; ls -la /etc/ssh"], mounts=[]
    )
    assert SECRET not in result.stdout
    assert result.stderr.count("Permission denied") >= 1
    assert "root:" not in result.stdout


# -- 3. kernel keyrings -------------------------------------------------------------------------

KEYRING_CALLS = """
import ctypes, os
libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long
KEY_SPEC_USER_KEYRING, KEY_SPEC_SESSION_KEYRING = -4, -3
def call(nr, *args):
    result = libc.syscall(nr, *args)
    return result, os.strerror(ctypes.get_errno()) if result < 0 else ''
print('add_key', *call(248, b'user', b'skillgym-marker', b'payload', 7, KEY_SPEC_USER_KEYRING))
print('request_key', *call(249, b'user', b'skillgym-marker', None, 0))
print('keyctl_describe', *call(250, 6, KEY_SPEC_USER_KEYRING, None, 0))
print('keyctl_join', *call(250, 1, None))
"""


def test_keyrings_are_out_of_reach_within_and_across_runs(runner: TaskRunner, tmp_path: Path) -> None:
    task = _task(tmp_path)
    first = _agent(runner, task, tmp_path, _python(KEYRING_CALLS))[1]
    second = _agent(runner, task, tmp_path, _python(KEYRING_CALLS))[1]
    for result in (first, second):
        assert result.ok, result
        lines = result.stdout.splitlines()
        assert len(lines) == 4
        assert all(line.split()[1] == "-1" and "Operation not permitted" in line for line in lines), lines


# -- 4. outputs are data ------------------------------------------------------------------------


def test_output_links_into_tests_and_logs_earn_nothing(runner: TaskRunner, tmp_path: Path) -> None:
    task = _task(tmp_path, extra_tests={"expected.txt": "7\n"})
    command = (
        "ln -s /tests/expected.txt answer.txt; mkdir -p d; ln -s /logs/verifier/reward.txt d/reward;"
        " ln -s ../../../../tests/expected.txt rel.txt; ln -s /tests tests-dir;"
        " ln /etc/passwd hard.txt 2>/dev/null; ln /tests/expected.txt hard2.txt 2>/dev/null; true"
    )
    workspace, result = _agent(runner, task, tmp_path, command)
    assert result.ok, result
    verdict = runner.verify(task, workspace)
    assert not verdict.passed and verdict.reward == 0.0
    dropped = {item["path"]: item["reason"] for item in verdict.dropped_files}
    assert {"answer.txt", "tests-dir", "rel.txt"} <= set(dropped)
    assert all(reason.startswith("link_") for reason in dropped.values())


def test_links_inside_the_workspace_are_materialised(runner: TaskRunner, tmp_path: Path) -> None:
    task = _task(tmp_path)
    workspace, result = _agent(runner, task, tmp_path, "echo 7 > real.txt; ln -s /app/real.txt answer.txt")
    assert result.ok
    verdict = runner.verify(task, workspace)
    assert verdict.passed, verdict.to_dict()


# -- 5. the verdict -----------------------------------------------------------------------------

NAIVE_VERIFIER = """#!/bin/bash
cd /app
bash /app/check.sh >/dev/null 2>&1
{after}
if [ "$(cat /app/answer.txt 2>/dev/null)" = "7" ]; then echo 1 > /logs/verifier/reward.txt; else echo 0 > /logs/verifier/reward.txt; fi
"""
CONFINED_VERIFIER = """#!/bin/bash
cd /app
"$SKILLGYM_RUN_UNTRUSTED" --timeout 10 -- bash /app/check.sh >/dev/null 2>&1
sleep 0.5
if [ "$(cat /app/answer.txt 2>/dev/null)" = "7" ]; then echo 1 > /logs/verifier/reward.txt; else echo 0 > /logs/verifier/reward.txt; fi
ls /logs/verifier
"""
WRITER = (
    "cat > check.sh <<'SH'\n"
    "(for i in $(seq 1 200); do echo 1 > /logs/verifier/reward.txt 2>/dev/null;"
    " echo '{\"reward\": 1}' > /logs/verifier/reward.json 2>/dev/null; sleep 0.01; done) &\n"
    "disown\n"
    "SH\n"
)


def test_a_writer_left_by_agent_code_cannot_outlive_the_verifier(runner: TaskRunner, tmp_path: Path) -> None:
    task = _task(tmp_path, test_sh=NAIVE_VERIFIER.format(after=""))
    late_writer = (
        "cat > check.sh <<'SH'\n"
        "setsid bash -c 'sleep 0.5; for i in $(seq 1 100); do echo 1 > /logs/verifier/reward.txt; sleep 0.01; done' &\n"
        "SH\n"
    )
    workspace, result = _agent(runner, task, tmp_path, late_writer)
    assert result.ok, result
    started = time.monotonic()
    verdict = runner.verify(task, workspace)
    assert time.monotonic() - started < 5  # returned without waiting for the writer
    # the verifier exited first; the sandbox killed the writer before the reward was read
    assert verdict.failure_type == "verifier_rejected" and verdict.reward == 0.0, verdict.to_dict()


def test_reward_json_written_by_agent_code_never_outranks_the_verifier(runner: TaskRunner, tmp_path: Path) -> None:
    task = _task(tmp_path, test_sh=NAIVE_VERIFIER.format(after=""))
    forger = "printf '%s\\n' 'echo \"{\\\"reward\\\": 1}\" > /logs/verifier/reward.json' > check.sh"
    workspace, result = _agent(runner, task, tmp_path, forger)
    assert result.ok, result
    assert "reward.json" in (workspace / "check.sh").read_text()
    verdict = runner.verify(task, workspace)
    assert verdict.failure_type == "reward_conflict" and verdict.reward == 0.0, verdict.to_dict()


def test_agent_code_run_through_the_runner_cannot_touch_the_verdict(runner: TaskRunner, tmp_path: Path) -> None:
    task = _task(tmp_path, test_sh=CONFINED_VERIFIER)
    workspace, _ = _agent(runner, task, tmp_path, WRITER)
    verdict = runner.verify(task, workspace)
    assert verdict.failure_type == "verifier_rejected" and verdict.reward == 0.0, verdict.to_dict()
    assert verdict.result is not None and verdict.result.stdout.split() == ["reward.txt"]


def test_git_config_of_the_agent_runs_nothing_in_the_verifier(runner: TaskRunner, tmp_path: Path) -> None:
    test_sh = NAIVE_VERIFIER.replace(
        "bash /app/check.sh >/dev/null 2>&1",
        "git status >/dev/null 2>&1; git log -1 >/dev/null 2>&1; git commit --allow-empty -m x >/dev/null 2>&1",
    ).format(after="")
    task = _task(tmp_path, test_sh=test_sh)
    command = (
        "git init -q . && git -c user.email=a@b -c user.name=a commit -q --allow-empty -m init;"
        " git config core.fsmonitor 'echo 7 > /app/answer.txt; echo 1 > /logs/verifier/reward.txt; false';"
        " git config core.pager 'echo 7 > /app/answer.txt'; git config user.email a@b; git config user.name a;"
        " printf '#!/bin/sh\\necho 7 > /app/answer.txt\\n' > .git/hooks/pre-commit; chmod +x .git/hooks/pre-commit;"
        " cp .git/hooks/pre-commit .git/hooks/post-commit; true"
    )
    workspace, result = _agent(runner, task, tmp_path, command)
    assert result.ok, result
    assert not (workspace / "answer.txt").exists()
    verdict = runner.verify(task, workspace)
    assert not verdict.passed and verdict.reward == 0.0, verdict.to_dict()


@pytest.mark.parametrize(
    ("content", "name", "failure"),
    [
        ("1" + "0" * 400, "reward.json", "bad_reward"),
        ('{"reward": ' + "1" * 400 + "}", "reward.json", "bad_reward"),
        ("[" * 5000 + "]" * 5000, "reward.json", "bad_reward"),
        ('{"reward": NaN}', "reward.json", "bad_reward"),
        ("nan", "reward.txt", "bad_reward"),
        ("one", "reward.txt", "bad_reward"),
        ("1.5", "reward.txt", "bad_reward"),
        ("-0.5", "reward.txt", "bad_reward"),
        ('{"reward": "1"}', "reward.json", "bad_reward"),
    ],
)
def test_hostile_reward_files_are_typed_failures(
    runner: TaskRunner, tmp_path: Path, content: str, name: str, failure: str
) -> None:
    (tmp_path / "payload").write_text(content)
    os.chmod(tmp_path / "payload", 0o644)
    task = _task(tmp_path, extra_tests={"payload": content},
                 test_sh=f"#!/bin/bash\ncat /tests/payload > /logs/verifier/{name}\n")  # fmt: skip
    verdict = runner.verify(task, runner.fresh_workspace(task, tmp_path))
    assert verdict.failure_type == failure and not verdict.passed and verdict.reward == 0.0


# -- 6. waste and crashes -----------------------------------------------------------------------


def test_deep_trees_are_handed_over_and_cleaned_up(
    runner: TaskRunner, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    task = _task(tmp_path)
    command = (
        _python(
            """
import os
os.chdir('/app')
for _ in range(1200):
    os.mkdir('d'); os.chdir('d')
open('leaf', 'w').write('x')
"""
        )
        + "echo 7 > /app/answer.txt\n"
    )
    workspace, result = _agent(runner, task, tmp_path, command)
    assert result.ok, result
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(scratch))  # the verifier's scratch lands here
    verdict = runner.verify(task, workspace)
    assert verdict.passed, verdict.to_dict()
    wait_idle()
    # only this process's (empty) directory for verifier scratch remains
    assert [(entry.name.startswith("skillgym-verify-"), list(entry.iterdir())) for entry in scratch.iterdir()] == [
        (True, [])
    ]
    assert remove_tree(workspace)


def test_storage_is_enforced_while_the_agent_writes(runner: TaskRunner, tmp_path: Path) -> None:
    task = _task(tmp_path, storage_mb=16)
    command = "dd if=/dev/zero of=big bs=1M count=64; echo rc=$?"
    workspace, result = _agent(runner, task, tmp_path, command)
    assert result.outcome is Outcome.OK, result
    assert "No space left on device" in result.stderr and "rc=1" in result.stdout
    used = sum(os.lstat(p).st_blocks * 512 for p in workspace.rglob("*"))
    assert used <= 16 * 1024 * 1024


def test_sparse_files_stay_sparse(runner: TaskRunner, tmp_path: Path) -> None:
    task = _task(tmp_path, storage_mb=16)
    # 200 MiB apparent, one page of data: beyond storage_mb if holes were copied as zeros
    command = (
        "truncate -s 200M sparse.bin && printf data | dd of=sparse.bin bs=1 seek=4096 conv=notrunc 2>/dev/null;"
        " echo 7 > answer.txt"
    )
    workspace, result = _agent(runner, task, tmp_path, command)
    assert result.ok, result
    info = os.lstat(workspace / "sparse.bin")
    assert stat.S_ISREG(info.st_mode) and info.st_size == 200 << 20 and info.st_blocks * 512 < 1 << 20
    started = time.monotonic()
    verdict = runner.verify(task, workspace)
    assert verdict.passed, verdict.to_dict()
    assert time.monotonic() - started < 20


def test_no_host_path_is_discoverable_from_the_agent_phase(
    runner: TaskRunner, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    task = _task(tmp_path)
    host_paths = [str(tmp_path), str(Path.cwd()), str(task.root), "/root/", "pytest-of"]
    command = (
        "cat /proc/1/cmdline /proc/self/cmdline /proc/1/environ /proc/self/environ /proc/self/mountinfo"
        " /proc/self/cgroup 2>/dev/null | tr '\\0' '\\n'; env; pwd; readlink /proc/self/cwd /proc/1/cwd"
    )
    _, result = _agent(runner, task, tmp_path, command)
    assert result.ok, result
    python_prefix = str(Path(os.__file__).resolve().parents[2])
    seen = result.stdout.replace(python_prefix, "<python>")
    leaks = [path for path in host_paths if path in seen]
    assert leaks == [], seen


def test_a_verifier_batch_survives_every_hostile_workspace(runner: TaskRunner, tmp_path: Path) -> None:
    """Crashed or refused verifications are records, never exceptions."""
    task = _task(tmp_path)
    commands = [
        "mkfifo answer.txt",
        "ln -s answer.txt answer.txt",
        "mkdir -p a && cd a && ln -s .. loop",
        "python3 -c \"open('answer.txt','wb').write(b'\\xff\\xfe' * 10)\"",
        "ln -s /proc/self/root/etc/passwd answer.txt",
    ]
    for command in commands:
        workspace, _ = _agent(runner, task, tmp_path, command)
        verdict = runner.verify(task, workspace)
        assert not verdict.passed and verdict.failure_type is not None


def test_mounts_under_root_only_directories_are_reached(sandbox: LocalSandbox, tmp_path: Path) -> None:
    private = tmp_path / "private"
    private.mkdir(mode=0o700)
    os.chmod(private, 0o700)
    inputs = private / "inputs"
    inputs.mkdir()
    (inputs / "data.txt").write_text("42\n")
    result = sandbox.run(["cat", "/data/data.txt"], mounts=[Mount(inputs, "/data")], limits=Limits(wall_s=20))
    assert result.ok and result.stdout == "42\n", result


CHECKS_PY = Path(__file__).resolve().parents[3] / "shared/skillgym_core/data/verifier/checks.py"
GRADER = """import sys
sys.path.insert(0, "/tests")
from checks import git, run, run_untrusted
ran = run_untrusted(["bash", "/app/check.sh"], timeout=10)
try:
    git("status", "--short")
except RuntimeError:
    pass
run([("answer", lambda: open("/app/answer.txt").read().strip() == "7")])
"""


@pytest.mark.parametrize("answer", ["7", "8"])
def test_the_built_in_checker_confines_agent_code(runner: TaskRunner, tmp_path: Path, answer: str) -> None:
    task = _task(
        tmp_path,
        test_sh="#!/bin/bash\npython3 /tests/grade.py\n",
        extra_tests={
            "checks.py": CHECKS_PY.read_text(),
            "grade.py": GRADER,
            "rubric.json": '[{"name": "answer", "weight": 1, "kind": "programmatic"}]',
        },
    )
    command = (
        WRITER + f"echo {answer} > answer.txt; git init -q .;"
        " git config core.fsmonitor 'echo 1 > /logs/verifier/reward.txt'"
    )
    workspace, result = _agent(runner, task, tmp_path, command)
    assert result.ok, result
    verdict = runner.verify(task, workspace)
    assert verdict.passed is (answer == "7"), verdict.to_dict()
    assert verdict.reward == (1.0 if answer == "7" else 0.0)


@pytest.mark.parametrize("attack", sorted(verdict_attacks.ATTACKS))
@pytest.mark.parametrize("answer", ["7", "8"])
def test_code_a_checker_runs_unconfined_cannot_write_the_verdict(
    runner: TaskRunner, tmp_path: Path, attack: str, answer: str
) -> None:
    verdict_attacks.assert_the_checkers_verdict(verdict_attacks.verdict_after(runner, tmp_path, attack, answer), answer,
                                                attack)


def test_without_the_seal_the_same_daemon_forges_the_verdict(runner: TaskRunner, tmp_path: Path) -> None:
    """The attack above is real: with the checker's seal switched off, the daemon's verdict wins."""
    task = verdict_attacks.unconfined_checker_task(tmp_path / "task")
    workspace, _ = _agent(runner, task, tmp_path, verdict_attacks.agent_command("daemon_rewrites", "8"))
    verdict = runner.verify(task, workspace, extra_env={"SKILLGYM_VERIFIER_SEAL": "0"})
    # the daemon's files win (or, killed mid-write, leave a broken pair): not the checker's 0 either way
    assert verdict_attacks.FORGED_KEY in verdict.rewards or verdict.failure_type in {"bad_reward", "reward_conflict"}, (
        verdict.to_dict())
