"""``skillgym validate`` on tasks whose reference solution plays a malicious agent: every attack
that would forge the verdict or leave the sandbox must leave the task invalid (the verifier
never saw a right answer), every task must get its own typed record, and the host must be as
it was."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from skillgym.cli import main
from tests.validator.tasks import make_task

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="checks the root-started sandbox")

ATTACKS = {
    "forge-reward-file": "mkdir -p /logs/verifier; echo 1 > /logs/verifier/reward.txt; echo 1 > reward.txt",
    "link-to-expected": "ln -s /tests/test.sh answer.txt; ln -s /logs/verifier/reward.txt r.txt",
    "sysctl": "cat /proc/sys/kernel/core_pattern > /proc/sys/kernel/core_pattern; echo 7 > /app/forged || true",
    "keyring": "python3 -c \"import ctypes; ctypes.CDLL(None).syscall(248, b'user', b'k', b'7', 1, -4)\"",
    "daemon-writer": "setsid bash -c 'sleep 0.3; while true; do echo 1 > /app/answer.txt; done' & disown",
    "fsmonitor": (
        "git init -q . && git config core.fsmonitor 'echo 1 > /logs/verifier/reward.txt' &&"
        " printf '#!/bin/sh\\necho 1 > /logs/verifier/reward.txt\\n' > .git/hooks/post-checkout"
    ),
    "disk-fill": "dd if=/dev/zero of=fill bs=1M count=2048 2>/dev/null; true",
    "deep-tree": "python3 -c \"import os\nfor _ in range(1500): os.mkdir('d'); os.chdir('d')\"",
    "env-secrets": "cat /proc/1/environ /proc/self/environ | tr '\\0' '\\n' | grep -i secret > answer.txt || true",
}


def test_hostile_reference_solutions_never_validate(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SKILLGYM_S3_SECRET_KEY", "host-secret-value")
    tasks = []
    for name, attack in ATTACKS.items():
        task = make_task(tmp_path / name, name=name, solve_sh=f"#!/bin/bash\ncd /app\n{attack}\n", memory_mb=512)
        config = task.config()
        config.environment.storage_mb = 64
        task.write_config(config)
        tasks.append(task)
    core_pattern = Path("/proc/sys/kernel/core_pattern").read_text()
    code = main(["validate", *[str(t.root) for t in tasks], str(tmp_path / "missing"), "--json"])
    records = [json.loads(line) for line in capsys.readouterr().out.splitlines() if line.startswith("{")]
    assert code != 0
    assert len(records) == len(ATTACKS) + 1
    assert not any(record["valid"] for record in records)
    by_task = {record.get("task_id"): record for record in records}
    for name in ATTACKS:
        reasons = by_task[f"task-{name}"]["reasons"]
        assert any(reason.startswith("oracle_") for reason in reasons), (name, reasons)
    assert Path("/proc/sys/kernel/core_pattern").read_text() == core_pattern
