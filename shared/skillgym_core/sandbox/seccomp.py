"""The seccomp filter every sandboxed process runs under, compiled with the system's libseccomp.

The filter allows by default and denies (``EPERM``) the calls a task never needs and an escape
usually does: kernel keyrings (shared across runs of one uid), tracing and cross-process
memory access, every mount and namespace call, BPF, perf, userfaultfd, io_uring, module and
kexec loading. ``clone`` with a namespace flag is denied; ``clone3`` (whose flags live in
memory a filter cannot read) answers ``ENOSYS`` so libc falls back to ``clone``. A call made
through another ABI (i386, x32) does not match the native architecture and kills the process.

The BPF program is built once per process and handed to bwrap (``--seccomp FD``), which
installs it, with ``no_new_privs``, right before it executes the command."""

from __future__ import annotations

import ctypes
import ctypes.util
import errno
import os
from functools import lru_cache

from skillgym_core.errors import SandboxError

DENIED_SYSCALLS = (
    # kernel keyrings
    "keyctl", "add_key", "request_key",
    # tracing and other processes' memory
    "ptrace", "process_vm_readv", "process_vm_writev", "kcmp", "pidfd_getfd",
    # mounts and namespaces
    "mount", "umount2", "pivot_root", "chroot", "setns", "unshare", "open_tree", "move_mount",
    "fsopen", "fsconfig", "fsmount", "fspick", "mount_setattr", "open_by_handle_at", "name_to_handle_at",
    # kernel attack surface a task never needs
    "bpf", "perf_event_open", "userfaultfd", "io_uring_setup", "io_uring_enter", "io_uring_register",
    "kexec_load", "kexec_file_load", "init_module", "finit_module", "delete_module",
    "swapon", "swapoff", "reboot", "syslog", "acct", "quotactl", "lookup_dcookie", "iopl", "ioperm",
    "fanotify_init", "vhangup",
)  # fmt: skip
NAMESPACE_CLONE_FLAGS = {
    "CLONE_NEWNS": 0x00020000,
    "CLONE_NEWCGROUP": 0x02000000,
    "CLONE_NEWUTS": 0x04000000,
    "CLONE_NEWIPC": 0x08000000,
    "CLONE_NEWUSER": 0x10000000,
    "CLONE_NEWPID": 0x20000000,
    "CLONE_NEWNET": 0x40000000,
}
SCMP_ACT_ALLOW = 0x7FFF0000
SCMP_CMP_MASKED_EQ = 7


def _act_errno(code: int) -> int:
    return 0x00050000 | (code & 0xFFFF)


class _ArgCmp(ctypes.Structure):
    _fields_ = [
        ("arg", ctypes.c_uint),
        ("op", ctypes.c_int),
        ("datum_a", ctypes.c_uint64),
        ("datum_b", ctypes.c_uint64),
    ]


class SeccompUnavailable(SandboxError):
    reason = "seccomp_unavailable"


@lru_cache(maxsize=1)
def _library() -> ctypes.CDLL:
    name = ctypes.util.find_library("seccomp") or "libseccomp.so.2"
    try:
        lib = ctypes.CDLL(name, use_errno=True)
    except OSError as exc:
        raise SeccompUnavailable(f"libseccomp is not installed: {exc}") from exc
    lib.seccomp_init.restype = ctypes.c_void_p
    lib.seccomp_init.argtypes = [ctypes.c_uint32]
    lib.seccomp_release.argtypes = [ctypes.c_void_p]
    lib.seccomp_syscall_resolve_name.argtypes = [ctypes.c_char_p]
    lib.seccomp_syscall_resolve_name.restype = ctypes.c_int
    lib.seccomp_rule_add_array.argtypes = [
        ctypes.c_void_p, ctypes.c_uint32, ctypes.c_int, ctypes.c_uint, ctypes.POINTER(_ArgCmp)
    ]  # fmt: skip
    lib.seccomp_export_bpf.argtypes = [ctypes.c_void_p, ctypes.c_int]
    return lib


def _rule(lib: ctypes.CDLL, ctx: int, action: int, name: str, *comparisons: _ArgCmp) -> bool:
    number = lib.seccomp_syscall_resolve_name(name.encode())
    if number < 0:  # not a call on this architecture
        return False
    array = (_ArgCmp * len(comparisons))(*comparisons) if comparisons else None
    status = lib.seccomp_rule_add_array(ctx, action, number, len(comparisons), array)
    if status != 0:
        raise SeccompUnavailable(f"libseccomp refused the rule for {name}: {os.strerror(-status)}")
    return True


@lru_cache(maxsize=1)
def filter_program() -> bytes:
    """The compiled BPF program (raises :class:`SeccompUnavailable` without libseccomp)."""
    lib = _library()
    ctx = lib.seccomp_init(SCMP_ACT_ALLOW)
    if not ctx:
        raise SeccompUnavailable("seccomp_init failed")
    try:
        for name in DENIED_SYSCALLS:
            _rule(lib, ctx, _act_errno(errno.EPERM), name)
        for flag in NAMESPACE_CLONE_FLAGS.values():
            _rule(lib, ctx, _act_errno(errno.EPERM), "clone", _ArgCmp(0, SCMP_CMP_MASKED_EQ, flag, flag))
        _rule(lib, ctx, _act_errno(errno.ENOSYS), "clone3")
        fd = os.memfd_create("seccomp-export", os.MFD_CLOEXEC)
        try:
            status = lib.seccomp_export_bpf(ctx, fd)
            if status != 0:
                raise SeccompUnavailable(f"seccomp_export_bpf failed: {os.strerror(-status)}")
            os.lseek(fd, 0, os.SEEK_SET)
            chunks = []
            while chunk := os.read(fd, 65536):
                chunks.append(chunk)
            return b"".join(chunks)
        finally:
            os.close(fd)
    finally:
        lib.seccomp_release(ctx)


def available() -> bool:
    try:
        filter_program()
    except SeccompUnavailable:
        return False
    return True


def program_fd() -> int:
    """A fresh readable descriptor holding the program, for bwrap's ``--seccomp``."""
    fd = os.memfd_create("seccomp", 0)
    program = filter_program()
    view = memoryview(program)
    while view:
        view = view[os.write(fd, view) :]
    os.lseek(fd, 0, os.SEEK_SET)
    return fd
