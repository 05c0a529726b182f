"""Agent tools that try to write the verdict when a verifier runs them unconfined, and the task
whose checker does so: the built-in rubric runner (``checks.py``) grading ``/app/answer.txt``
after running ``/app/tool.sh`` through a plain ``subprocess`` (the shape the reviewer refuses, so
the runtime guarantee is tested on its own). The same attacks run on every sandbox backend."""

from __future__ import annotations

from pathlib import Path

from skillgym_core.contracts.task import TaskDir
from skillgym_core.taskrun import TaskRunner, VerifierOutcome

from tests.validator.tasks import make_task

CHECKS_PY = Path(__file__).resolve().parents[2] / "shared/skillgym_core/data/verifier/checks.py"
FORGED_KEY = "forged"
LOGS = "/logs/verifier"
_FORGE_SH = (f"echo 1 > {LOGS}/reward.txt; "
             f'echo "{{\\"reward\\": 1.0, \\"{FORGED_KEY}\\": 1.0}}" > {LOGS}/reward.json')
_FORGE_PY = (f"open('{LOGS}/reward.txt', 'w').write('1\\n'); "
             f"open('{LOGS}/reward.json', 'w').write('{{\"reward\": 1.0, \"{FORGED_KEY}\": 1.0}}')")

# name -> the tool's source (bash)
ATTACKS: dict[str, str] = {
    # a daemon in a session of its own that keeps replacing the files
    "daemon_rewrites": (f"setsid bash -c 'while :; do {{ {_FORGE_SH}; }} 2>/dev/null; sleep 0.001; done'"
                        " </dev/null >/dev/null 2>&1 &\n"),
    # Python double fork and setsid: the writer's parent and grandparent are gone before it writes
    "double_fork": ("python3 - <<'PY'\nimport os, time\n"
                    "if os.fork() == 0:\n    os.setsid()\n    if os.fork() == 0:\n"
                    "        end = time.time() + 20\n        while time.time() < end:\n"
                    f"            try:\n                {_FORGE_PY}\n            except OSError:\n                pass\n"
                    "            time.sleep(0.001)\n    os._exit(0)\nPY\n"),
    # forges, locks the files and the folder, and exits before the verifier does
    "writes_locks_and_exits": f"{_FORGE_SH}; chmod 444 {LOGS}/reward.*; chmod 555 {LOGS}\n",
    # a chain that forks a new writer and exits, over and over: no pid lives long
    "fork_chain": ("python3 - <<'PY'\nimport os, time\nend = time.time() + 20\nwhile time.time() < end:\n"
                   "    if os.fork():\n        os._exit(0)\n"
                   f"    try:\n        {_FORGE_PY}\n    except OSError:\n        pass\nPY\n"),
    # kills the checker that ran it, then writes the verdict
    "kills_the_checker": f"kill -9 $PPID; {_FORGE_SH}\n",
    # sleeps past the checker's write, then writes until the run is torn down
    "outlives_the_checker": (f"setsid bash -c 'sleep 0.5; while :; do {{ {_FORGE_SH}; }} 2>/dev/null; sleep 0.001;"
                             " done' </dev/null >/dev/null 2>&1 &\n"),
}

GRADER = """import subprocess, sys
sys.path.insert(0, "/tests")
from checks import run
subprocess.run(["bash", "/app/tool.sh"], timeout=20, stdin=subprocess.DEVNULL)
run([("answer", lambda: open("/app/answer.txt").read().strip() == "7")])
"""
# the pause after the checker gives a writer every chance to act after the verdict is written; the
# checker's exit status is the script's, as in the built-in test.sh
TEST_SH = "#!/bin/bash\nmkdir -p /logs/verifier\npython3 /tests/grade.py\nstatus=$?\nsleep 0.5\nexit $status\n"
# attacks after which the checker gives no verdict at all
KILLS_THE_CHECKER = frozenset({"kills_the_checker"})
RUBRIC = '[{"name": "answer", "weight": 1, "kind": "programmatic"}]'


def unconfined_checker_task(root: Path) -> TaskDir:
    """A task whose trusted checker runs the agent's ``tool.sh`` unconfined, then grades."""
    return make_task(root, test_sh=TEST_SH,
                     extra_tests={"checks.py": CHECKS_PY.read_text(), "grade.py": GRADER, "rubric.json": RUBRIC})


def agent_command(attack: str, answer: str) -> str:
    """What the agent runs: writes its answer and the attack's tool."""
    return f"echo {answer} > answer.txt\ncat > tool.sh <<'TOOL'\n{ATTACKS[attack]}TOOL\n"


def verdict_after(runner: TaskRunner, root: Path, attack: str, answer: str) -> VerifierOutcome:
    """The verdict on an agent's ``answer`` whose tool is ``attack``, on ``runner``'s backend."""
    task = unconfined_checker_task(root / "task")
    workspace = runner.fresh_workspace(task, root)
    planted = runner.run_agent_command(task, workspace, agent_command(attack, answer), timeout_s=60)
    assert planted.ok, planted
    return runner.verify(task, workspace)


def assert_the_checkers_verdict(verdict: VerifierOutcome, answer: str, attack: str = "") -> None:
    """The verdict is the checker's: the answer's own, nothing the attack wrote (and none at all
    when the attack killed the checker)."""
    assert FORGED_KEY not in verdict.rewards, verdict.to_dict()
    if attack in KILLS_THE_CHECKER:
        assert not verdict.passed and verdict.failure_type == "verifier_killed", verdict.to_dict()
        return
    assert verdict.reward == (1.0 if answer == "7" else 0.0), verdict.to_dict()
    assert verdict.failure_type == (None if answer == "7" else "verifier_rejected"), verdict.to_dict()
