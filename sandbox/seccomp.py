"""A small seccomp filter for the bubblewrap backend: what Docker's default profile denies
that matters for a real-uid-0 program without capabilities.

- the kernel keyrings (keyctl, add_key, request_key): keyrings follow the uid, not a
  namespace, so uid 0 in the sandbox would reach the host root's user keyring;
- new namespaces (unshare, setns, clone with CLONE_NEW*; clone3 answers ENOSYS so that
  libc falls back to clone, whose flags we can read): no user namespace to gain
  capabilities in, which is the usual way into kernel bugs;
- bpf, perf_event_open, userfaultfd, io_uring, kernel modules, kexec, file handles;
- any other ABI than x86_64 (i386 through int 0x80, x32): their numbers differ.

Classic BPF, built here so that no libseccomp is needed; bwrap loads it (``--seccomp FD``).
"""
from __future__ import annotations

import errno
import os
import struct

AUDIT_ARCH_X86_64 = 0xC000003E
X32_SYSCALL_BIT = 0x40000000
RET_ALLOW = 0x7FFF0000
RET_KILL_PROCESS = 0x80000000
RET_ERRNO = 0x00050000
LD_W_ABS, JEQ, JGE, JSET, RET = 0x20, 0x15, 0x35, 0x45, 0x06
OFFSET_NR, OFFSET_ARCH, OFFSET_ARG0 = 0, 4, 16

DENIED_X86_64 = {
    "add_key": 248, "request_key": 249, "keyctl": 250,
    "unshare": 272, "setns": 308,
    "bpf": 321, "perf_event_open": 298, "userfaultfd": 323,
    "io_uring_setup": 425, "io_uring_enter": 426, "io_uring_register": 427,
    "init_module": 175, "finit_module": 313, "delete_module": 176,
    "kexec_load": 246, "kexec_file_load": 320,
    "open_by_handle_at": 304, "name_to_handle_at": 303,
    "mount": 165, "umount2": 166, "pivot_root": 155, "swapon": 167, "swapoff": 168,
    "acct": 163, "reboot": 169, "syslog": 103, "lookup_dcookie": 212,
    "fsopen": 430, "fsconfig": 431, "fsmount": 432, "move_mount": 429, "open_tree": 428,
}
CLONE = 56
CLONE3 = 435
CLONE_NEW_ANY = 0x00020000 | 0x02000000 | 0x04000000 | 0x08000000 | 0x10000000 | 0x20000000 | 0x40000000
# CLONE_NEWNS | CLONE_NEWCGROUP | CLONE_NEWUTS | CLONE_NEWIPC | CLONE_NEWUSER | CLONE_NEWPID | CLONE_NEWNET


def supported() -> bool:
    return os.uname().machine == "x86_64"


def filter_program() -> bytes:
    """The compiled filter (struct sock_filter[]), as bwrap's ``--seccomp`` reads it."""
    deny, enosys = "deny", "enosys"
    code: list[tuple[int, int | str, int | str, int]] = [
        (LD_W_ABS, 0, 0, OFFSET_ARCH),
        (JEQ, 0, "kill", AUDIT_ARCH_X86_64),
        (LD_W_ABS, 0, 0, OFFSET_NR),
        (JGE, "kill", 0, X32_SYSCALL_BIT),
        (JEQ, enosys, 0, CLONE3),
    ]
    code += [(JEQ, deny, 0, number) for number in sorted(DENIED_X86_64.values())]
    code += [
        (JEQ, 0, "allow", CLONE),
        (LD_W_ABS, 0, 0, OFFSET_ARG0),  # clone's flags (low 32 bits)
        (JSET, deny, "allow", CLONE_NEW_ANY),
    ]
    returns = {
        "allow": (RET, 0, 0, RET_ALLOW),
        deny: (RET, 0, 0, RET_ERRNO | errno.EPERM),
        enosys: (RET, 0, 0, RET_ERRNO | errno.ENOSYS),
        "kill": (RET, 0, 0, RET_KILL_PROCESS),
    }
    where = {label: len(code) + i for i, label in enumerate(returns)}
    code += list(returns.values())

    def offset(target: int | str, at: int) -> int:
        if isinstance(target, int):
            return target
        jump = where[target] - at - 1
        assert 0 <= jump < 256, "seccomp jump out of range"
        return jump

    return b"".join(struct.pack("=HBBI", op, offset(jt, i), offset(jf, i), k) for i, (op, jt, jf, k) in enumerate(code))
