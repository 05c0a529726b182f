"""The order test modules are handed to the workers: by group, then longest first."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.schedule import group_of, module_order, read_durations, write_durations

REPO = Path(__file__).resolve().parents[2]


def test_groups_follow_the_services_a_module_waits_for() -> None:
    assert group_of(["tmp_path"], []) == 0
    assert group_of(["kafka"], ["integration"]) == 1
    assert group_of(["s3", "kafka"], ["integration"]) == 3
    assert group_of(["llama"], []) == 5
    assert group_of([], ["deferred_service"]) == 5


def test_longest_modules_first_within_a_group_and_groups_in_order() -> None:
    modules = {"a.py": (0, 10), "b.py": (0, 2), "c.py": (1, 50), "d.py": (0, 3), "e.py": (3, 1)}
    # b: 2 tests of 150 s; a: 10 of 0.2 s; d never ran here, 3 tests guessed at a second each
    assert module_order(modules, {"b.py": 150.0, "a.py": 0.2}) == ["b.py", "d.py", "a.py", "c.py", "e.py"]
    # nothing recorded: by number of tests
    assert module_order(modules, {}) == ["a.py", "d.py", "b.py", "c.py", "e.py"]


def test_recorded_times_merge_and_bad_files_read_as_nothing(tmp_path: Path) -> None:
    path = tmp_path / "cache" / "durations.json"
    assert read_durations(path) == {}
    write_durations(path, {"a.py": 1.2345})
    write_durations(path, {"b.py": 2.0})
    assert read_durations(path) == {"a.py": 1.234, "b.py": 2.0}
    path.write_text("[not a mapping", encoding="utf-8")
    assert read_durations(path) == {}
    path.write_text(json.dumps({"a.py": "slow", "b.py": -1, "c.py": 3}), encoding="utf-8")
    assert read_durations(path) == {"c.py": 3.0}


def _pytest(folder: Path, record: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "SKILLGYM_TEST_DURATIONS": str(record), "PYTHONPATH": str(REPO)}
    env.pop("PYTEST_ADDOPTS", None)
    command = [sys.executable, "-m", "pytest", "-p", "tests.support.schedule", "--no-loadscope-reorder",
               "-p", "no:cacheprovider", "-q", *args]
    return subprocess.run(command, cwd=folder, env=env, capture_output=True, text=True, timeout=120, check=False)


@pytest.mark.slow
def test_a_run_records_its_modules_and_the_next_run_starts_with_the_longest(tmp_path: Path) -> None:
    folder, record = tmp_path / "suite", tmp_path / "durations.json"
    folder.mkdir()
    (folder / "test_quick.py").write_text("def test_one():\n    pass\n\n\ndef test_two():\n    pass\n")
    (folder / "test_long.py").write_text("import time\n\n\ndef test_one():\n    time.sleep(0.5)\n")
    # two worker processes: the times come back to the controlling process, which writes them
    ran = _pytest(folder, record, "-n", "2", "--dist", "loadfile")
    assert ran.returncode == 0, ran.stdout + ran.stderr
    per_test = read_durations(record)
    assert per_test["test_long.py"] > 0.4 > per_test["test_quick.py"]
    # the recorded times, not the names or the number of tests, decide; the workers get the same order
    for first, second in (("test_long.py", "test_quick.py"), ("test_quick.py", "test_long.py")):
        record.write_text(json.dumps({first: 9.0, second: 0.1}), encoding="utf-8")
        listed = [line for line in _pytest(folder, record, "--collect-only").stdout.split("\n") if "::" in line]
        assert [line.split("::")[0] for line in listed][:1] == [first]
