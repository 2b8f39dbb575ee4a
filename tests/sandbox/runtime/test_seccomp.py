"""The syscall filter (sandbox/runtime/zygote.py), loaded into a real process, denies what it
says and allows the rest."""
from __future__ import annotations

import json
import subprocess
import sys

from sandbox.runtime import zygote as seccomp

# Loads the filter (no_new_privs first, as bwrap does), then tries each call by number.
PROBE = r"""
import ctypes, json, os, sys
libc = ctypes.CDLL(None, use_errno=True)
program = sys.stdin.buffer.read()
class Prog(ctypes.Structure):
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_char_p)]
prog = Prog(len(program) // 8, program)
assert libc.prctl(38, 1, 0, 0, 0) == 0                       # PR_SET_NO_NEW_PRIVS
assert libc.prctl(22, 2, ctypes.byref(prog), 0, 0) == 0, ctypes.get_errno()  # PR_SET_SECCOMP, FILTER
def errno_of(number, *args):
    result = libc.syscall(number, *args)
    return 0 if result >= 0 else ctypes.get_errno()
results = {
    "unshare_user": errno_of(272, 0x10000000),
    "keyctl": errno_of(250, 0, 0, 0, 0),
    "clone3": errno_of(435, 0, 0),
    "bpf": errno_of(321, 0, 0, 0),
    "mount": errno_of(165, 0, 0, 0, 0, 0),
    "shmget": errno_of(29, 0, 4096, 0o1600),
    "mq_open": errno_of(240, b"/q", 0o100, 0o600, 0),
    "getpid": errno_of(39),
}
pid = os.fork()  # clone without CLONE_NEW* flags stays allowed
if pid == 0:
    os._exit(7)
results["fork"] = os.waitpid(pid, 0)[1] >> 8
print(json.dumps(results))
"""


def test_the_program_is_whole_instructions_with_jumps_in_range():
    program = seccomp.filter_program()
    assert len(program) % 8 == 0 and 0 < len(program) // 8 < 4096
    assert program[-32:-28] == (0x06).to_bytes(2, "little") + b"\0\0"  # ends in RET instructions


def test_a_process_under_the_filter_is_denied_exactly_what_it_names(requires):
    requires("x86_64, where the filter applies", seccomp.filter_supported(), "run on x86_64")
    done = subprocess.run([sys.executable, "-I", "-c", PROBE], input=seccomp.filter_program(),
                          capture_output=True, timeout=30)
    assert done.returncode == 0, done.stderr.decode()
    results = json.loads(done.stdout)
    eperm, enosys = 1, 38
    assert results == {"unshare_user": eperm, "keyctl": eperm, "clone3": enosys, "bpf": eperm, "mount": eperm,
                       "shmget": eperm, "mq_open": eperm,
                       "getpid": 0, "fork": 7}


def test_every_denied_name_is_a_distinct_syscall_number():
    numbers = list(seccomp.DENIED_X86_64.values())
    assert len(numbers) == len(set(numbers)) and seccomp.CLONE not in numbers and seccomp.CLONE3 not in numbers
