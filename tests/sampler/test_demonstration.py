"""Reference solutions become agent-shaped demonstrations: no step names the hidden solution."""

from __future__ import annotations

import base64
import subprocess
from pathlib import Path

import pytest
from skillgym_core.contracts.atif import Trajectory, VerificationRecord
from skillgym_core.contracts.events import Envelope, EnvValidated, TrajectoryVerified
from skillgym_core.hidden_paths import hidden_paths_in
from skillgym_core.store.base import get_json
from skillgym_sampler import SamplerService, SamplerSettings
from skillgym_sampler.harness.demonstration import plan_demonstration
from skillgym_sampler.harness.script_split import split_statements

from tests.sampler.tasks import SKILL_NAME, write_task

WORKDIR = "/tmp/work"
BINARY = b"\xff\x00\xfe"


def _solution(root: Path, solve: str, files: dict[str, bytes] | None = None) -> Path:
    solution = root / "solution"
    solution.mkdir(parents=True)
    (solution / "solve.sh").write_text(solve)
    for rel, data in (files or {}).items():
        (solution / rel).parent.mkdir(parents=True, exist_ok=True)
        (solution / rel).write_bytes(data)
    return solution


def _plan(solution: Path, skills: list[str] | None = None):  # -> Demonstration
    return plan_demonstration(solution, skill_dirs=skills or [], skills_mount="/skills", workdir=WORKDIR)


def test_statements_split_with_comments_and_a_state_preamble() -> None:
    split = split_statements("#!/bin/bash\n# header\nset -e\ncd /app\n# Sum\nawk 1 a > b\ncat b\n")
    assert split is not None and split.errexit and split.preamble == "set -e\ncd /app"
    assert [(c.comment, c.command) for c in split.commands] == [("Sum", "awk 1 a > b"), ("", "cat b")]
    assert split_statements("echo a\ncd sub\nmake\n") is None
    assert split_statements("set -e\n") is None


def test_helpers_under_solution_are_written_by_their_own_steps(tmp_path: Path) -> None:
    solution = _solution(
        tmp_path,
        "#!/usr/bin/env bash\n# Reference solution: one command per step.\nset -euo pipefail\ncd /app\n"
        "python3 /solution/repair.py --broad\n",
        {
            "repair.py": b"import json\nprint(json.load(open('/solution/data/conf.json')))\n",
            "data/conf.json": b'{"a": 1}\n',
            "unused.py": b"print('never run')\n",
            "alternatives/other.sh": b"python3 /solution/repair.py\n",
        },
    )
    demo = _plan(solution, ["index-skill"])
    assert [s.kind for s in demo.steps] == ["skill", "inspect", "write", "write", "run", "check"]
    assert demo.steps[0].command == "cat /skills/index-skill/SKILL.md"
    assert demo.steps[2].command == (
        "cat > /tmp/work/repair.py <<'PY'\nimport json\nprint(json.load(open('/tmp/work/data/conf.json')))\nPY"
    )
    assert demo.steps[3].command.startswith("mkdir -p /tmp/work/data && cat > /tmp/work/data/conf.json <<'EOF'\n")
    assert demo.steps[4].command == "python3 /tmp/work/repair.py --broad"
    assert demo.errexit
    assert hidden_paths_in([(s.message, s.command) for s in demo.steps]) == []
    assert "Reference solution" not in " ".join(s.message for s in demo.steps)


def test_a_script_that_reads_the_skill_itself_is_not_given_a_second_read(tmp_path: Path) -> None:
    script = (
        "#!/usr/bin/env bash\nset -euo pipefail\ncd /app\n"
        "if [ -f /skills/s/SKILL.md ]; then sed -n '1,40p' /skills/s/SKILL.md; fi\n"
        "mkdir -p /tmp/work\ncat > /tmp/work/solve.py <<'PY'\nprint('PY')\nPY\npython3 /tmp/work/solve.py\n"
    )
    demo = _plan(_solution(tmp_path, script), ["s"])
    assert [s.kind for s in demo.steps] == ["inspect", "skill", "run", "write", "run", "check"]
    assert demo.steps[3].message == "Write `/tmp/work/solve.py`."


def test_unsplittable_scripts_programs_and_binary_helpers_are_written_out(tmp_path: Path) -> None:
    demo = _plan(_solution(tmp_path / "a", "#!/bin/bash\necho a\ncd /solution\nbash run.sh\n"))
    write, run = demo.steps[1], demo.steps[2]
    assert write.command.startswith("cat > /tmp/work/solve.sh <<'EOF'\n") and "cd /tmp/work\n" in write.command
    assert run.command == "bash /tmp/work/solve.sh"

    demo = _plan(
        _solution(
            tmp_path / "b", "#!/usr/bin/env python3\nprint(open('/solution/k.bin','rb').read())\n", {"k.bin": BINARY}
        )
    )
    commands = [s.command for s in demo.steps]
    encoded = base64.b64encode(BINARY).decode()
    assert commands[1] == f"base64 -d > /tmp/work/k.bin <<'EOF'\n{encoded}\nEOF"
    assert commands[2].startswith("cat > /tmp/work/solve.py <<'PY'\n") and commands[3] == "python3 /tmp/work/solve.py"
    assert hidden_paths_in(commands) == []


def test_heredoc_delimiters_never_clash_with_the_content(tmp_path: Path) -> None:
    solution = _solution(tmp_path, "#!/bin/bash\nbash /solution/x.sh\n", {"x.sh": b"cat <<EOF\nhi\nEOF\n"})
    (solution / "x.sh").chmod(0o755)
    write = _plan(solution).steps[1].command
    assert write.startswith("cat > /tmp/work/x.sh <<'EOF_1'\n") and write.endswith("EOF_1\nchmod +x /tmp/work/x.sh")
    out = subprocess.run(
        [
            "bash",
            "-c",
            write.replace("/tmp/work", str(tmp_path / "w")).replace("cat >", f"mkdir -p {tmp_path / 'w'} && cat >", 1),
        ],
        capture_output=True,
        check=True,
    )
    assert out.returncode == 0 and (tmp_path / "w" / "x.sh").read_text() == "cat <<EOF\nhi\nEOF\n"


HELPER_SOLVE = "#!/bin/bash\nset -euo pipefail\ncd /app\n\n# Total the ledger\npython3 /solution/total.py\n"
HELPER_PY = (
    "import csv, json\n"
    "column = json.load(open('/solution/columns.json'))['amount']\n"
    "rows = list(csv.DictReader(open('ledger.csv')))\n"
    "open('total.txt', 'w').write(str(sum(int(r[column]) for r in rows)))\n"
    "print(open('total.txt').read())\n"
)


def _oracle_demonstration(ctx, task_id: str, task) -> Trajectory:
    """The oracle's demonstration of ``task``, which must pass."""
    event = Envelope.wrap(
        EnvValidated(task_id=task_id, skill_id="skill-ledger", package_key=ctx.save_task(task_id, task), valid=True),
        producer="validator", correlation_id="test",
    )  # fmt: skip
    outputs = SamplerService(ctx, SamplerSettings(harnesses=["oracle"])).handle(event)
    (run,) = [o for o in outputs if isinstance(o, TrajectoryVerified)]
    record = VerificationRecord.model_validate(get_json(ctx.store, run.verification_key))
    assert run.passed, record.agent_outcome
    return Trajectory.model_validate_json(ctx.store.get_bytes(run.atif_key))


@pytest.mark.integration
def test_oracle_solves_a_helper_based_task_without_the_solution_mounted(ctx, tmp_path: Path) -> None:
    task = write_task(tmp_path / "task-helper0001", task_id="task-helper0001")
    (task.solution / "solve.sh").write_text(HELPER_SOLVE)
    (task.solution / "total.py").write_text(HELPER_PY)
    (task.solution / "columns.json").write_text('{"amount": "amount"}\n')
    trajectory = _oracle_demonstration(ctx, "task-helper0001", task)
    assert trajectory.extra == {"source": "reference"}
    assert hidden_paths_in(trajectory.model_dump(mode="json")) == []
    commands = [c.arguments["command"] for s in trajectory.steps for c in s.tool_calls or []]
    assert commands[0] == f"cat /skills/{SKILL_NAME}/SKILL.md"
    assert any(c.startswith("cat > /tmp/work/total.py <<'PY'\n") for c in commands)
    assert "python3 /tmp/work/total.py" in commands
    outputs_seen = [r.content for s in trajectory.steps for r in (s.observation.results if s.observation else [])]
    assert outputs_seen[-2].strip().endswith("42") and outputs_seen[-1].strip().endswith("/app/total.txt")


ENV_SOLVE = """#!/bin/bash
echo "$COLUMN" > /logs/agent/column.txt
python3 -c "import csv; col = open('/logs/agent/column.txt').read().strip(); rows = list(csv.DictReader(open('ledger.csv'))); open('total.txt', 'w').write(str(sum(int(r[col]) for r in rows)))"
"""


@pytest.mark.integration
def test_the_oracle_demonstration_runs_as_the_validator_runs_the_solution(ctx, tmp_path: Path) -> None:
    """``[solution] env`` reaches its commands and ``/logs/agent`` lasts from one to the next."""
    import tomllib

    import tomli_w

    task = write_task(tmp_path / "task-envtab0001", task_id="task-envtab0001")
    data = tomllib.loads(task.config_path.read_text())
    data["solution"] = {"env": {"COLUMN": "amount"}}
    task.config_path.write_text(tomli_w.dumps(data))
    (task.solution / "solve.sh").write_text(ENV_SOLVE)
    trajectory = _oracle_demonstration(ctx, "task-envtab0001", task)
    commands = [c.arguments["command"] for s in trajectory.steps for c in s.tool_calls or []]
    assert sum("/logs/agent/column.txt" in c for c in commands) == 2  # two commands, two sandbox runs
