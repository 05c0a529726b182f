"""The static confinement gate: a verifier whose own code runs the agent's code outside
``run-untrusted`` is refused as too lax; the built-in runner and code it runs confined are not."""

from __future__ import annotations

from pathlib import Path

import pytest
from skillgym_core.verifier_code import unconfined_agent_code

DATA = Path(__file__).resolve().parents[2] / "shared/skillgym_core/data/verifier"
HEAD = "import os, sys\nsys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))\nfrom checks import run, run_untrusted\n"


def _tests(tmp_path: Path, verify: str, *, test_sh: str | None = None, **extra: str) -> Path:
    tests = tmp_path / "tests"
    tests.mkdir()
    (tests / "test.sh").write_text(test_sh or (DATA / "test.sh").read_text())
    (tests / "checks.py").write_text((DATA / "checks.py").read_text())
    (tests / "verify.py").write_text(HEAD + verify)
    for name, text in extra.items():
        (tests / name).write_text(text)
    return tests


def _found(tests: Path) -> list[str]:
    return [f"{finding.path}:{finding.line}: {finding.what}" for finding in unconfined_agent_code(tests)]


def test_the_built_in_runner_and_confined_runs_pass(tmp_path: Path) -> None:
    verify = ('done = run_untrusted(["python3", "-m", "pytest", "-q"], timeout=60)\n'
              'run([("tests", lambda: done.returncode == 0)])\n')
    assert _found(_tests(tmp_path, verify)) == []


@pytest.mark.parametrize(("code", "what"), [
    ("import subprocess\nsubprocess.run(['python3', '/app/tool.py'])\n", "subprocess.run()"),
    ("from subprocess import check_output as out\nout(['bash', 'x.sh'])\n", "subprocess.check_output()"),
    ("import subprocess as sp\nsp.Popen(['node', 'app.js'])\n", "subprocess.Popen()"),
    ("os.system('bash /app/run.sh')\n", "os.system()"),
    ("os.execvp('bash', ['bash'])\n", "os.execvp()"),
    ("import runpy\nrunpy.run_path('/app/solution.py')\n", "runpy.run_path()"),
    ("import importlib\nimportlib.import_module('solution')\n", "importlib.import_module()"),
    ("sys.path.insert(0, '/app')\nimport solution\n", "sys.path.insert() of a folder outside the tests"),
    ("sys.path.append(APP)\n", "sys.path.append() of a folder outside the tests"),
    ("sys.path = ['/app', *sys.path]\n", "an assignment to sys.path of a folder outside the tests"),
    ("exec(open('/app/answer.py').read())\n", "exec() of the agent's text"),
])
def test_agent_code_run_with_the_verifier_s_rights_is_found(tmp_path: Path, code: str, what: str) -> None:
    found = _found(_tests(tmp_path, code))
    assert len(found) == 1 and found[0].startswith("tests/verify.py:") and found[0].endswith(what), found


def test_a_module_the_verifier_imports_is_read_too(tmp_path: Path) -> None:
    helper = "import subprocess\n\ndef grade():\n    return subprocess.run(['bash', '/app/x.sh']).returncode == 0\n"
    found = _found(_tests(tmp_path, "import helper\nrun([('x', helper.grade)])\n", **{"helper.py": helper}))
    assert found == ["tests/helper.py:4: subprocess.run()"]


def test_code_run_only_through_the_runner_may_load_the_agent_s_module(tmp_path: Path) -> None:
    harness = "import importlib, sys\nsys.path.insert(0, sys.argv[1])\nimportlib.import_module('solution')\n"
    verify = "run_untrusted(['python3', '/tests/harness.py', '/app'])\n"
    assert _found(_tests(tmp_path, verify, **{"harness.py": harness})) == []


def test_the_verifier_s_own_reference_may_be_run(tmp_path: Path) -> None:
    assert _found(_tests(tmp_path, "namespace = {}\nexec(EXPECTED['source'], namespace)\n")) == []


def test_a_run_untrusted_function_that_does_not_use_the_runner_is_not_confined(tmp_path: Path) -> None:
    fake = "import subprocess\n\ndef run_untrusted(argv):\n    return subprocess.run(argv)\n"
    assert _found(_tests(tmp_path, fake)) == ["tests/verify.py:7: subprocess.run()"]


@pytest.mark.parametrize("line", ["pytest /app/tests", "python3 -m pytest -q", "bash /app/run.sh", "cd /app && ./check",
                                  "python3 /app/solution.py > out.txt", "npm test"])
def test_a_test_script_that_runs_agent_code_is_found(tmp_path: Path, line: str) -> None:
    script = f"#!/bin/bash\nmkdir -p /logs/verifier\n{line}\necho $? > /logs/verifier/reward.txt\n"
    assert _found(_tests(tmp_path, "", test_sh=script)) == [f"tests/test.sh:3: `{line}`"]


def test_a_test_script_that_runs_agent_code_through_the_runner_passes(tmp_path: Path) -> None:
    script = ('#!/bin/bash\n"$SKILLGYM_RUN_UNTRUSTED" --timeout 60 -- python3 -m pytest /app/tests\n'
              "python3 /tests/verify.py\n")
    assert _found(_tests(tmp_path, "run([])\n", test_sh=script)) == []
