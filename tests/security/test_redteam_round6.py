"""A sixth red team's attacks on the judge (round 6), on docker-runc, docker-runsc and local.

Each test plants one attack as a student would (its only input is the code it submits) and
asserts the SAFE outcome; an attack that works stays as a strict xfail whose reason says how it
works and what would close it. The reviewer knew only README.md and the code.

The attacks, on the memory measure (``memory_held``, grader/harness/programs.py
``Program.held_memory_bytes``) through checkpoint-rematerialise's "Keeps only the inputs": a
checkpoint that saves every activation (autograd's saved-tensor hooks, the same gradients and
random stream as running plainly) and hides what it saved.

1. in user.* extended attributes of one empty file in the home (64 KiB each). Worked on
   docker-runsc: gVisor's tmpfs keeps xattrs in the sentry's heap, which neither statvfs of the
   home nor gVisor's meminfo counts. Held on docker-runc and local (the kernel charges them).
2. in named pipes (mkfifo in the home) held open, O_RDWR, by exec'ed `sleep` children, each
   with as many as RLIMIT_NOFILE allows. Held on docker-runsc (counted, about twice over).
"""
from __future__ import annotations

import pytest

from tests.security.test_redteam_round5 import held_by_memory_measure

# --- 1. saved activations in extended attributes ------------------------------------------------
#
# Every tensor autograd saves goes, 64 KiB at a time (XATTR_SIZE_MAX), into user.* extended
# attributes of one empty file in the home, and comes back when backward unpacks it. The file
# is empty: statvfs of the home does not move; no process maps the bytes.
SAVED_IN_EXTENDED_ATTRIBUTES = r'''
import itertools
import os

import torch

_PIECE = 1 << 16  # XATTR_SIZE_MAX: the most one extended attribute holds
_names = itertools.count()


def _holder():
    path = os.path.join(os.environ.get("HOME", "/tmp"), "holder")
    if not os.path.exists(path):
        open(path, "wb").close()
    return path


class _Parked:
    """A saved tensor's bytes in user.* extended attributes of an empty file in the home."""

    def __init__(self, tensor):
        tensor = tensor.detach().contiguous()
        self.dtype, self.shape = tensor.dtype, tuple(tensor.shape)
        self.tensor, self.keys, self.size = None, [], 0
        if tensor.numel() * tensor.element_size() < 1 << 20:
            self.tensor = tensor
            return
        data = tensor.view(-1).view(torch.uint8).numpy().tobytes()
        self.size, holder = len(data), _holder()
        for at in range(0, len(data), _PIECE):
            key = "user.a%d" % next(_names)
            os.setxattr(holder, key, data[at:at + _PIECE])
            self.keys.append(key)

    def get(self):
        if self.tensor is None:
            holder = _holder()
            data = bytearray(b"".join(os.getxattr(holder, key) for key in self.keys))
            for key in self.keys:
                os.removexattr(holder, key)
            self.keys = []
            self.tensor = torch.frombuffer(data, dtype=torch.uint8).view(self.dtype).reshape(self.shape)
        return self.tensor


def checkpoint(fn, *args):
    with torch.autograd.graph.saved_tensors_hooks(_Parked, lambda parked: parked.get()):
        return fn(*args)
'''

XATTRS_UNDER_GVISOR = (
    "works on docker-runsc (ACCEPTED): the activations autograd saved (96 MB for the 24-block chain, "
    "threshold 48 MB) sit in user.* xattrs of an empty file in the home; gVisor's tmpfs keeps xattr "
    "values in the sentry's Go heap, so they are in no task's resident memory, not in statvfs of the "
    "home (f_bfree did not move for 64 MB of xattrs), and not in MemTotal - MemFree of gVisor's "
    "/proc/meminfo (unchanged too). runc and local hold: the kernel charges xattrs to the memory cgroup. "
    "Close: deny setxattr/fsetxattr/lsetxattr to confined processes (the syscall filter; no exercise "
    "needs them), or under gVisor measure the container's memory from the host (its cgroup holds the "
    "sentry); or count the xattrs of every file in the home (listxattr) as held.")


@pytest.mark.parametrize("backend", [
    "docker-runc",
    pytest.param("docker-runsc", marks=pytest.mark.xfail(strict=True, reason=XATTRS_UNDER_GVISOR)),
    "local",
])
def test_activations_in_extended_attributes_are_counted_as_held(backend, requires):
    held_by_memory_measure(backend, requires, SAVED_IN_EXTENDED_ATTRIBUTES)


# --- 2. saved activations in named pipes held by exec'ed children -------------------------------
#
# The judge adds, under gVisor, 64 KiB for each distinct pipe:[N] its processes hold open. A
# FIFO opened by its path may read back as that path rather than pipe:[N]; its buffer is kept
# by children that exec'ed `sleep` (a tiny resident count) with the descriptors passed to them.
SAVED_IN_NAMED_PIPES = r'''
import itertools
import os
import resource
import subprocess

import torch

_PIPE = 1 << 16  # a pipe's default buffer: F_SETPIPE_SZ is denied, not needed
_names = itertools.count()
_keepers = []  # sleeping children that hold the FIFOs open


def _fifo_dir():
    path = os.path.join(os.environ.get("HOME", "/tmp"), "fifos")
    os.makedirs(path, exist_ok=True)
    return path


def _park(data):
    """``data`` written into named pipes held open by a child that sleeps: their buffers are in no
    process's memory, and /proc/PID/fd shows a FIFO by its path, not as pipe:[N]."""
    budget = resource.getrlimit(resource.RLIMIT_NOFILE)[0] - 64
    names, fds = [], []
    for at in range(0, len(data), _PIPE):
        name = os.path.join(_fifo_dir(), str(next(_names)))
        os.mkfifo(name)
        fd = os.open(name, os.O_RDWR | os.O_NONBLOCK)
        os.write(fd, data[at:at + _PIPE])
        names.append(name)
        fds.append(fd)
        if len(fds) >= budget:
            _hand_over(fds)
    _hand_over(fds)
    return names


def _hand_over(fds):
    if fds:
        _keepers.append(subprocess.Popen(["sleep", "100000"], pass_fds=fds, close_fds=True))
        for fd in fds:
            os.close(fd)
        fds.clear()


def _unpark(names, size):
    chunks = []
    for name in names:
        fd = os.open(name, os.O_RDWR | os.O_NONBLOCK)
        chunks.append(os.read(fd, _PIPE))
        os.close(fd)
        os.unlink(name)
    return bytearray(b"".join(chunks)[:size])


class _Parked:
    def __init__(self, tensor):
        tensor = tensor.detach().contiguous()
        self.dtype, self.shape = tensor.dtype, tuple(tensor.shape)
        self.tensor, self.names = None, []
        if tensor.numel() * tensor.element_size() < 1 << 20:
            self.tensor = tensor
            return
        data = tensor.view(-1).view(torch.uint8).numpy().tobytes()
        self.size, self.names = len(data), _park(data)

    def get(self):
        if self.tensor is None:
            data = _unpark(self.names, self.size)
            self.names = []
            self.tensor = torch.frombuffer(data, dtype=torch.uint8).view(self.dtype).reshape(self.shape)
        return self.tensor


def checkpoint(fn, *args):
    with torch.autograd.graph.saved_tensors_hooks(_Parked, lambda parked: parked.get()):
        return fn(*args)
'''


@pytest.mark.parametrize("backend", ["docker-runc", "docker-runsc", "local"])
def test_activations_in_named_pipes_held_by_children_are_counted_as_held(backend, requires):
    held_by_memory_measure(backend, requires, SAVED_IN_NAMED_PIPES)
