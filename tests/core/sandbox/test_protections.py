"""What the local sandbox promises about itself: which protections are active, a refusal where a
mandatory one is missing, and the pieces (seccomp program, host mounts) that provide them."""

from __future__ import annotations

import dataclasses
import os
from pathlib import Path

import pytest
from skillgym_core.sandbox import Outcome, seccomp
from skillgym_core.sandbox.hostmounts import mount_volume, reachable_by, staged, unmount
from skillgym_core.sandbox.local import LocalSandbox
from skillgym_core.sandbox.protections import SandboxUnsafeError, probe_protections, require
from skillgym_core.sandbox.untrusted import landlock_abi
from skillgym_core.settings import CommonSettings

root_only = pytest.mark.skipif(os.geteuid() != 0, reason="needs root")


def test_describe_lists_every_protection() -> None:
    info = LocalSandbox().describe()
    protections = info["protections"]
    assert protections["missing"] == []
    assert protections["unprivileged_uid"] and protections["user_namespace"] and protections["seccomp"]
    assert "keyctl" in protections["seccomp_denied"] and "ptrace" in protections["seccomp_denied"]
    assert info["enforcement"]["storage_mb"] in ("tmpfs volume", "copy budget only")
    assert protections["landlock_abi"] == landlock_abi()


@root_only
def test_a_sandbox_that_would_run_as_root_refuses() -> None:
    unsafe = LocalSandbox(uid=0, allow_unsafe=False)
    with pytest.raises(SandboxUnsafeError) as caught:
        unsafe.require_protections()
    assert caught.value.reason == "sandbox_unsafe" and "unprivileged_uid" in caught.value.details["missing"]
    result = unsafe.run(["true"], mounts=[])
    assert result.outcome is Outcome.SANDBOX_ERROR and result.detail["reason"] == "sandbox_unsafe"


def test_missing_protections_refuse_unless_explicitly_allowed() -> None:
    present = probe_protections(LocalSandbox().identity)
    without_seccomp = dataclasses.replace(present, seccomp=False)
    with pytest.raises(SandboxUnsafeError, match="seccomp"):
        require(without_seccomp, allow_unsafe=False)
    require(without_seccomp, allow_unsafe=True)
    require(present, allow_unsafe=False)


def test_settings_choose_the_uid_and_the_unsafe_flag(monkeypatch: pytest.MonkeyPatch) -> None:
    from skillgym_core.sandbox.factory import make_sandbox

    monkeypatch.setenv("SKILLGYM_SANDBOX_UID", "2000123")
    sandbox = make_sandbox(CommonSettings())
    assert isinstance(sandbox, LocalSandbox)
    if os.geteuid() == 0:
        assert sandbox.workspace_owner == (2000123, 2000123)
    assert sandbox.allow_unsafe is False


def test_the_seccomp_program_is_compiled_once_and_covers_the_deny_list() -> None:
    program = seccomp.filter_program()
    assert program is seccomp.filter_program()
    assert len(program) % 8 == 0 and len(program) > 8 * len(seccomp.DENIED_SYSCALLS)
    fd = seccomp.program_fd()
    try:
        assert os.read(fd, len(program) + 1) == program
    finally:
        os.close(fd)


SYSCALLS = """
import ctypes, errno, os
libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long
def errno_of(nr, *args):
    return 0 if libc.syscall(nr, *args) >= 0 else ctypes.get_errno()
checks = {
    "ptrace": errno_of(101, 16, 1, 0, 0), "process_vm_readv": errno_of(310, 1, 0, 0, 0, 0, 0),
    "mount": errno_of(165, b"none", b"/tmp", b"tmpfs", 0, 0), "umount2": errno_of(166, b"/tmp", 2),
    "pivot_root": errno_of(155, b"/tmp", b"/tmp"), "bpf": errno_of(321, 0, 0, 0),
    "perf_event_open": errno_of(298, 0, 0, -1, -1, 0), "userfaultfd": errno_of(323, 0),
    "kexec_load": errno_of(246, 0, 0, 0, 0), "init_module": errno_of(175, 0, 0, b""),
    "unshare_user": errno_of(272, 0x10000000), "setns": errno_of(308, 0, 0),
    "clone_newns": errno_of(56, 0x00020000 | 17, 0, 0, 0, 0), "clone3": errno_of(435, 0, 0),
    "io_uring_setup": errno_of(425, 1, 0), "keyctl": errno_of(250, 0, -4, 0, 0, 0),
}
print(" ".join(f"{name}={errno.errorcode.get(code, code)}" for name, code in checks.items()))
"""


def test_denied_calls_answer_eperm_inside(tmp_path: Path) -> None:
    result = LocalSandbox().run(["python3", "-c", SYSCALLS], mounts=[])
    assert result.ok, result
    seen = dict(item.split("=") for item in result.stdout.split())
    assert seen.pop("clone3") == "ENOSYS"
    assert set(seen.values()) == {"EPERM"}, seen


@root_only
def test_reachability_and_staging_of_root_only_directories(tmp_path: Path) -> None:
    private = tmp_path / "private"
    (private / "inner").mkdir(parents=True)
    os.chmod(private, 0o700)
    (private / "inner" / "f").write_text("x")
    uid = LocalSandbox().identity.host_uid
    assert not reachable_by(private / "inner", uid, uid)
    with staged(uid, uid) as staging:
        reached = staging.reach(private / "inner")
        assert reached != private / "inner" and reachable_by(reached, uid, uid)
        assert (reached / "f").read_text() == "x"
    assert not reached.exists()


@root_only
def test_workspace_volumes_cap_what_is_stored(tmp_path: Path) -> None:
    volume = tmp_path / "volume"
    volume.mkdir()
    mount_volume(volume, size_mb=1, owner=(2000000, 2000000))
    try:
        assert os.path.ismount(volume) and os.stat(volume).st_uid == 2000000
        with pytest.raises(OSError, match="No space left"), open(volume / "big", "wb") as handle:
            handle.write(b"x" * (2 << 20))
            handle.flush()
    finally:
        assert unmount(volume)
    assert not os.path.ismount(volume)
