"""A fifth red team's attacks on the judge (round 5), on docker-runc, docker-runsc and local.

Each test plants one attack as a student would (its only input is the code it submits) and
asserts the SAFE outcome; an attack that works stays as a strict xfail whose reason says how it
works and what would close it. The reviewer knew only README.md and the code.

The attacks, all on the memory measure (``memory_held``, grader/harness/programs.py
``Program.held_memory_bytes``) through checkpoint-rematerialise, whose "Keeps only the inputs"
check is the measure: a checkpoint that saves every activation (autograd's saved-tensor hooks,
the same gradients and the same random stream as running plainly) and hides what it saved.

1. in the send buffers of unix socket pairs: in no process's memory and not in /tmp.
   Held on docker-runc and local (the kernel charges socket buffers to the memory cgroup);
   worked on docker-runsc (gVisor's meminfo does not count them); closed.
2. in memfds never mapped, alone: the memory cgroup's charge sees them. Held everywhere (the
   control for 3).
3. in memfds never mapped, with page cache given back to pay for them: the charge is lowered by
   dropping (posix_fadvise) files a worker read before. Worked on docker-runc and local; closed.
4. no hiding at all: the plain block keeps every activation, and the student's worker, which
   is not frozen between the checks' calls, fills memfds while the judge measures the
   REFERENCE, whose count (the whole sandbox's charge) then exceeds the student's. Worked on
   docker-runc, docker-runsc and local; closed.
"""
from __future__ import annotations

import pytest

from grader.contract import Kind
from grader.host import grade, load_exercise
from tests.sandbox.backends import backend_sandbox
from tests.security.test_redteam_judge import summary
from tests.security.test_redteam_round3 import CHECKPOINT, failed

KEEPS_ONLY_THE_INPUTS = "keeps_only_the_inputs"  # the visible check that measures what is held


def held_by_memory_measure(backend: str, requires, source: str) -> None:
    """The memory check sees what ``source`` keeps: its measure fails, and it is not ACCEPTED."""
    verdict = grade(load_exercise(CHECKPOINT), source, backend_sandbox(backend, requires))
    # The visible check, not only the verdict: under gVisor on a loaded machine the hidden
    # random_blocks check sometimes fails on its own (round 4).
    assert KEEPS_ONLY_THE_INPUTS in failed(verdict), summary(verdict)
    assert verdict.verdict != Kind.ACCEPTED, summary(verdict)


# --- 1. saved activations parked in socket buffers ------------------------------------------------
#
# Every tensor autograd saves goes, as bytes, into the send buffer of a new unix socket pair (its
# SO_SNDBUF raised; a few MB each), and comes back when backward unpacks it. No process maps it,
# nothing is written to /tmp.
SAVED_IN_SOCKET_BUFFERS = r'''
import socket

import torch

_CHUNK = 1 << 16


class _Parked:
    """A saved tensor's bytes parked in kernel socket buffers."""

    def __init__(self, tensor):
        tensor = tensor.detach().contiguous()
        self.dtype, self.shape, self.tensor = tensor.dtype, tuple(tensor.shape), None
        data = memoryview(tensor.view(-1).view(torch.uint8).numpy()) if tensor.numel() else memoryview(b"")
        self.size = len(data)
        self.pairs = []
        sent = 0
        while sent < self.size:
            a, b = socket.socketpair()
            for s in (a, b):
                s.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 1 << 30)
                s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 1 << 30)
            a.setblocking(False)
            self.pairs.append((a, b))
            while sent < self.size:
                try:
                    sent += a.send(data[sent:sent + _CHUNK])
                except BlockingIOError:
                    break

    def get(self):
        if self.tensor is None:
            buffer = bytearray(self.size)
            view, got = memoryview(buffer), 0
            for a, b in self.pairs:
                a.close()
                while True:
                    n = b.recv_into(view[got:], min(_CHUNK, self.size - got)) if got < self.size else 0
                    if not n:
                        break
                    got += n
                b.close()
            self.pairs = []
            self.tensor = torch.frombuffer(buffer, dtype=torch.uint8).view(self.dtype).reshape(self.shape) \
                if self.size else torch.empty(self.shape, dtype=self.dtype)
        return self.tensor


def checkpoint(fn, *args):
    with torch.autograd.graph.saved_tensors_hooks(_Parked, lambda parked: parked.get()):
        return fn(*args)
'''

SOCKETS_UNDER_GVISOR = (  # how it worked, and how it was closed
    "worked on docker-runsc: the activations autograd saved (96 MB for the 24-block chain, threshold 48 MB) "
    "sit in unix socket send buffers, which gVisor's sentry holds in its own heap: in no task's resident "
    "memory, not in /tmp, and not in the MemTotal - MemFree of gVisor's /proc/meminfo that "
    "_sandbox_charged_bytes reads, so memory_held sees only the inputs. (runc and local hold: the kernel "
    "charges socket buffers to the memory cgroup.) Close: under gVisor, measure the container's memory "
    "from the host (its cgroup holds the sentry), or give the student's worker no sockets (the syscall "
    "filter: socket/socketpair, which no exercise needs) and cap the buffers of the ones it inherits. "
    "Closed so: a confined process has no socket and cannot grow a pipe (sandbox/zygote.py), and the "
    "student opens at most STUDENT_DESCRIPTORS descriptors.")


@pytest.mark.parametrize("backend", ["docker-runc", "docker-runsc", "local"])
def test_activations_parked_in_socket_buffers_are_counted_as_held(backend, requires):
    held_by_memory_measure(backend, requires, SAVED_IN_SOCKET_BUFFERS)


# --- 2 and 3. saved activations in memfds nobody maps ---------------------------------------------
#
# The same hooks write each saved tensor into a memfd of its own and never map it: no process's
# RSS shows it, /tmp does not hold it; only the memory cgroup's charge (the second lower bound of
# held_memory_bytes) does. Alone (2), that bound sees it. With 3, the program pays for it with
# page cache it charged earlier: each worker's backward reads ~80 MB of files nobody maps
# (torch's headers and .py sources, first dropped with POSIX_FADV_DONTNEED so that reading them
# again charges this sandbox); the next worker, the one memory_held starts and measures, drops
# them again as it imports (after the judge noted the charge at its start), and the cgroup's
# growth while it holds the chain is the activations minus the cache it gave back.
SAVED_IN_MEMFDS_PAID_WITH_PAGE_CACHE = r'''
import glob
import os

import torch

_TORCH = os.path.dirname(torch.__file__)
# Files nobody maps: their page cache can be dropped (fadvise) and charged again (read) at will.
_FILES = sorted(glob.glob(os.path.join(_TORCH, "include", "**", "*.h"), recursive=True)
                + [path for path in glob.glob(os.path.join(_TORCH, "**", "*.py"), recursive=True)
                   if "check" + "point" not in path])  # the exercise's rules refuse that one


def _drop_cache():
    for path in _FILES:
        try:
            fd = os.open(path, os.O_RDONLY)
        except OSError:
            continue
        try:
            os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
        except OSError:
            pass
        os.close(fd)


def _charge_cache():
    _drop_cache()  # whoever had them cached: read again, they are charged to this sandbox
    for path in _FILES:
        try:
            with open(path, "rb") as file:
                while file.read(1 << 20):
                    pass
        except OSError:
            pass


_drop_cache()  # before the judge measures this worker, what the last one charged is given back
_recharged = False


class _Parked:
    """A saved tensor's bytes in a memfd nobody maps: in no process's resident memory."""

    def __init__(self, tensor):
        tensor = tensor.detach().contiguous()
        self.dtype, self.shape, self.tensor = tensor.dtype, tuple(tensor.shape), None
        self.fd = os.memfd_create("parked")
        data = memoryview(tensor.view(-1).view(torch.uint8).numpy()) if tensor.numel() else b""
        written = 0
        while written < len(data):
            written += os.write(self.fd, data[written:])
        self.size = len(data)

    def get(self):
        global _recharged
        if not _recharged:  # backward: charge the cache again, for the next worker to give back
            _recharged = True
            _charge_cache()
        if self.tensor is None:
            buffer = bytearray(self.size)
            view, got = memoryview(buffer), 0
            while got < self.size:
                got += os.preadv(self.fd, [view[got:]], got)
            os.close(self.fd)
            self.tensor = torch.frombuffer(buffer, dtype=torch.uint8).view(self.dtype).reshape(self.shape) \
                if self.size else torch.empty(self.shape, dtype=self.dtype)
        return self.tensor


def checkpoint(fn, *args):
    seen = {}
    held = []

    def pack(tensor):
        if tensor.numel() * tensor.element_size() < (1 << 16):
            return tensor
        key = (tensor.data_ptr(), tuple(tensor.shape), tuple(tensor.stride()), tensor.dtype)
        if key not in seen:
            held.append(tensor)  # alive until the block returns: no address is reused meanwhile
            seen[key] = _Parked(tensor)
        return seen[key]

    def unpack(packed):
        return packed.get() if isinstance(packed, _Parked) else packed

    try:
        with torch.autograd.graph.saved_tensors_hooks(pack, unpack):
            return fn(*args)
    finally:  # autograd keeps the hooks (and so this closure) with the graph: let the tensors go
        held.clear()
        seen.clear()
'''
SAVED_IN_MEMFDS = (SAVED_IN_MEMFDS_PAID_WITH_PAGE_CACHE
                   .replace("\n_drop_cache()  #", "\npass  # _drop_cache()  #")
                   .replace("            _charge_cache()\n", "            pass\n"))
assert SAVED_IN_MEMFDS.count("pass  #") == 1 and SAVED_IN_MEMFDS.count("_charge_cache()") == 1

PAGE_CACHE_GIVEN_BACK = (  # how it worked, and how it was closed
    "worked on docker-runc and local: held_memory_bytes takes the larger of (RSS of the student's "
    "processes + /tmp growth) and (RSS at start + growth of the sandbox's memory cgroup usage). Saved "
    "activations in unmapped memfds escape the first; the second counts page cache, which the student "
    "lowers at will: a worker reads ~80 MB of files nobody maps (fadvise DONTNEED first, so the read is "
    "charged to this sandbox), the measured worker drops them at import (-110 MB charged), and the "
    "cgroup grows by the activations minus that. Close: leave the file-backed page cache out of the "
    "charge (usage minus memory.stat's active_file + inactive_file, which holds no shmem/memfd), or "
    "add the sizes of the memfd and tmpfs files the student's processes hold open (/proc/<pid>/fd). "
    "Closed with the first: _sandbox_charged_bytes subtracts the file page cache.")


@pytest.mark.parametrize("backend", ["docker-runc", "docker-runsc", "local"])
def test_activations_in_unmapped_memfds_are_counted_as_held(backend, requires):
    held_by_memory_measure(backend, requires, SAVED_IN_MEMFDS)


# Not on docker-runsc: gVisor's meminfo was never moved by the host's page cache (the attack held
# there), and re-reading 80 MB of files under gVisor took two minutes of the suite.
@pytest.mark.parametrize("backend", ["docker-runc", "local"])
def test_page_cache_given_back_does_not_pay_for_activations_held(backend, requires):
    held_by_memory_measure(backend, requires, SAVED_IN_MEMFDS_PAID_WITH_PAGE_CACHE)


# --- 4. the reference's measure inflated from the student's worker --------------------------------
#
# keeps_only_inputs measures the student (memory_held), runs its backward, then measures the
# reference the same way, while the student's worker lives on, unfrozen, holding the chain. The
# reference's count takes the growth of the whole sandbox's memory charge. A thread of the student
# waits for backward to have run in its worker, then for the next fork (the reference's fresh
# worker), and fills memfds while the reference runs its chain: want_held grows by hundreds of MB.
INFLATES_THE_REFERENCES_MEASURE = r'''
import os
import threading
import time

import torch

_backward_ran = threading.Event()


def _newest_pid():
    try:
        with open("/proc/sys/kernel/ns_last_pid") as file:
            return int(file.read())
    except (OSError, ValueError):
        return max(int(entry) for entry in os.listdir("/proc") if entry.isdigit())


def _ballast():
    """Once backward ran here, wait for the next worker to be forked (the reference's, which
    memory_held starts next), then fill memfds while the judge measures it."""
    _backward_ran.wait()
    seen = _newest_pid()
    while _newest_pid() == seen:
        time.sleep(0.001)
    time.sleep(0.02)  # past the judge's reading at the worker's start
    held, chunk = [], b"\0" * (8 << 20)
    for _ in range(40):  # 320 MB, in memfds (not the worker's RLIMIT_DATA), 8 MB a write
        fd = os.memfd_create("ballast")
        os.write(fd, chunk)
        held.append(fd)
    time.sleep(5)
    for fd in held:
        os.close(fd)


threading.Thread(target=_ballast, daemon=True).start()


def checkpoint(fn, *args):
    out = fn(*args)  # keeps every activation, as running plainly does
    if out.requires_grad:
        out.register_hook(lambda grad: (_backward_ran.set(), grad)[1])
    return out
'''

REFERENCE_MEASURED_WHILE_THE_STUDENT_RUNS = (  # how it worked, and how it was closed
    "worked on docker-runc, docker-runsc and local: the student's checkpoint is the plain block, "
    "which keeps every activation (96 MB over a 48 MB threshold), but the check compares it with the "
    "reference's memory_held, and while the reference is measured the student's worker is alive and not "
    "frozen; held_memory_bytes' second bound is the growth of the WHOLE sandbox's charge (memory cgroup or "
    "gVisor meminfo). A student thread waits for its backward, then for the next fork (ns_last_pid, or /proc's "
    "listing under gVisor: the reference's fresh worker), then writes 320 MB into memfds: want_held is "
    "inflated past the student's. "
    "Close: freeze the student's family while the reference runs (as perf windows do), and/or count the "
    "charge of the measured program's own cgroup (the lent cgroup) rather than the whole sandbox's. "
    "Closed with the first: memory_held stops the student's processes while the reference is measured "
    "(Program.others_stopped).")


@pytest.mark.parametrize("backend", ["docker-runc", "docker-runsc", "local"])
def test_the_reference_is_not_measured_while_the_student_runs(backend, requires):
    held_by_memory_measure(backend, requires, INFLATES_THE_REFERENCES_MEASURE)
