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
   Closed: a confined process cannot set an extended attribute (EOPNOTSUPP).
2. in named pipes (mkfifo in the home) held open, O_RDWR, by exec'ed `sleep` children, each
   with as many as RLIMIT_NOFILE allows. Held on docker-runc, docker-runsc and local (under
   gVisor counted in full: 192 MB more than the reference, tanh's output being saved twice).
3. in POSIX access ACLs (system.posix_acl_access) of empty files in the home, 16 bits in each
   ACL_USER entry's uid. Worked on docker-runc and local: the kernel keeps an ACL in memory it
   charges to no cgroup (posix_acl_alloc, GFP_NOFS), so neither bound sees it; the 96 MB of
   activations took about 384 MB of host kernel memory, beyond the sandbox's 512 MB limit too.
   Held on docker-runsc (gVisor's tmpfs has no ACLs: EOPNOTSUPP). Closed with 1.
4. in the input buffers of pseudo-terminals held open by exec'ed `sleep` children. The kernel
   charges tty buffers to no cgroup (5.7 MB in 200 pairs moved the charge by 0.6 MB), but a
   container gets at most kernel.pty.max - kernel.pty.reserve (3072) terminals, about 14 KB
   each one way: ~42 MB, under the 48 MB the measure forgives. Held on docker-runc (ENOSPC),
   and on docker-runsc (counted in full: 192 MB more than the reference).
5. in the names of hard links to one empty file in the home (7 bits in each byte of a name,
   217 bytes a name), 16 of the chain's 24 activations. Under gVisor the names are in neither
   bound (20000 links of 246-byte names moved neither statvfs nor meminfo), but a link costs
   enough CPU that 300,000 of them (64 MB) ran out the 40 s CPU limit: held on docker-runsc by
   the time limit alone; a filter on setxattr would not close this one.

And one on the confined family under gVisor (its own PID namespace and /proc, chrooted):

6. a submission that is wrong unless it sees a trusted process: a pid of another uid in /proc,
   a pid that answers kill(pid, 0) with EPERM or is missing from /proc, /tmp, /tmp/.roots, /job
   or /sys/fs/cgroup listable, another proc mount with pids in it. Held on docker-runsc (its
   /proc shows pid 1 alone, itself; every other pid is ESRCH; ppid 0). Not run on runc/local,
   where by design there is no PID namespace: /proc/1 (the bootstrap, uid 0) is in sight there,
   its cmdline, sched, schedstat and mountinfo readable, environ, maps, fd, cwd and root not.
"""
from __future__ import annotations

import pytest

from grader.contract import Kind
from grader.host import grade, load_exercise
from tests.sandbox.backends import backend_sandbox
from tests.security.test_redteam_judge import summary
from tests.security.test_redteam_round3 import CHECKPOINT, failed
from tests.security.test_redteam_round5 import KEEPS_ONLY_THE_INPUTS, held_by_memory_measure

# The end every attack here shares: autograd's saved tensors go to a _Parked of the attack's own
# (its hiding place), each tensor once, and come back when backward asks.
PARK_EACH_SAVED_TENSOR_ONCE = '''

_parked = {}  # one copy of a tensor autograd saves twice (tanh's output is also matmul's input)


def _pack(tensor):
    key = id(tensor)
    if key not in _parked:
        _parked[key] = _Parked(tensor)
        weakref.finalize(tensor, _parked.pop, key, None)  # the id may be reused once it is gone
    return _parked[key]


def checkpoint(fn, *args):
    with torch.autograd.graph.saved_tensors_hooks(_pack, lambda parked: parked.get()):
        return fn(*args)
'''

# --- 1. saved activations in extended attributes ------------------------------------------------
#
# Every tensor autograd saves goes, 64 KiB at a time (XATTR_SIZE_MAX), into user.* extended
# attributes of one empty file in the home, and comes back when backward unpacks it. The file
# is empty: statvfs of the home does not move; no process maps the bytes. Each tensor once:
# tanh's output is matmul's input too, and saved twice (192 MB in the sentry's heap) the attack
# once failed the check in a full run of this file.
SAVED_IN_EXTENDED_ATTRIBUTES = r'''
import itertools
import os
import weakref

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

''' + PARK_EACH_SAVED_TENSOR_ONCE

XATTRS_UNDER_GVISOR = (
    "worked on docker-runsc (ACCEPTED): the activations autograd saved (96 MB for the 24-block chain, "
    "threshold 48 MB) sit in user.* xattrs of an empty file in the home; gVisor's tmpfs keeps xattr "
    "values in the sentry's Go heap, so they are in no task's resident memory, not in statvfs of the "
    "home (f_bfree did not move for 64 MB of xattrs), and not in MemTotal - MemFree of gVisor's "
    "/proc/meminfo (unchanged too). runc and local hold: the kernel charges xattrs to the memory cgroup. "
    "Close: deny setxattr/fsetxattr/lsetxattr to confined processes (the syscall filter; no exercise "
    "needs them), or under gVisor measure the container's memory from the host (its cgroup holds the "
    "sentry); or count the xattrs of every file in the home (listxattr) as held. Closed so: setting an "
    "extended attribute answers EOPNOTSUPP to a confined process (sandbox/zygote.py).")


@pytest.mark.parametrize("backend", ["docker-runc", "docker-runsc", "local"])
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


# --- 3. saved activations in POSIX ACLs ---------------------------------------------------------
#
# Every tensor autograd saves (once: tanh's output is matmul's input too) goes, 16 bits at a time,
# into the uids of the ACL_USER entries of an access ACL (8187 entries, the most an attribute of
# XATTR_SIZE_MAX holds), one empty file in the home per 16 KB; it comes back through getxattr.
SAVED_IN_ACLS = r'''
import itertools
import os
import struct
import weakref

import numpy as np
import torch

# A POSIX access ACL as the kernel reads it from the system.posix_acl_access attribute: a version,
# then (tag, perm, id) entries in canonical order, ACL_USER ids strictly increasing.
_VERSION, _USER_OBJ, _USER, _GROUP_OBJ, _MASK, _OTHER = 2, 0x01, 0x02, 0x04, 0x10, 0x20
_UNDEFINED = 0xFFFFFFFF
_ENTRIES = (65536 - 4) // 8 - 4  # XATTR_SIZE_MAX, less the four entries every ACL has
_ACL = "system.posix_acl_access"
_names = itertools.count()


def _holder():
    path = os.path.join(os.environ.get("HOME", "/tmp"), "acl%d" % next(_names))
    open(path, "wb").close()
    return path


def _encode(piece):
    """16 bits of ``piece`` in each ACL_USER entry's uid, the entry's index above them."""
    halves = np.frombuffer(piece, dtype=np.uint16).astype(np.uint32)
    ids = (np.arange(len(halves), dtype=np.uint32) << 16) | halves
    users = np.zeros(len(ids), dtype=[("tag", "<u2"), ("perm", "<u2"), ("id", "<u4")])
    users["tag"], users["perm"], users["id"] = _USER, 0, ids
    return (struct.pack("<I", _VERSION) + struct.pack("<HHI", _USER_OBJ, 6, _UNDEFINED) + users.tobytes()
            + struct.pack("<HHI", _GROUP_OBJ, 4, _UNDEFINED) + struct.pack("<HHI", _MASK, 7, _UNDEFINED)
            + struct.pack("<HHI", _OTHER, 4, _UNDEFINED))


def _decode(blob):
    entries = np.frombuffer(blob, dtype=[("tag", "<u2"), ("perm", "<u2"), ("id", "<u4")], offset=4)
    users = entries[entries["tag"] == _USER]
    return (users["id"] & 0xFFFF).astype(np.uint16).tobytes()


class _Parked:
    """A saved tensor's bytes in the POSIX ACLs of empty files in the home."""

    def __init__(self, tensor):
        tensor = tensor.detach().contiguous()
        self.dtype, self.shape = tensor.dtype, tuple(tensor.shape)
        self.tensor, self.files = None, []
        if tensor.numel() * tensor.element_size() < 1 << 20:
            self.tensor = tensor
            return
        data = tensor.view(-1).view(torch.uint8).numpy().tobytes()
        self.size = len(data)
        data += bytes(len(data) % 2)
        for at in range(0, len(data), 2 * _ENTRIES):
            path = _holder()
            os.setxattr(path, _ACL, _encode(data[at:at + 2 * _ENTRIES]))
            self.files.append(path)

    def get(self):
        if self.tensor is None:
            data = b"".join(_decode(os.getxattr(path, _ACL)) for path in self.files)
            for path in self.files:
                os.unlink(path)
            self.files = []
            self.tensor = torch.frombuffer(bytearray(data[:self.size]), dtype=torch.uint8).view(
                self.dtype).reshape(self.shape)
        return self.tensor

''' + PARK_EACH_SAVED_TENSOR_ONCE

ACLS_OUTSIDE_THE_MEMORY_CGROUP = (
    "worked on docker-runc and local (ACCEPTED): a POSIX ACL set on a tmpfs file is kept by the kernel "
    "in memory it charges to no memory cgroup (posix_acl_from_xattr -> posix_acl_alloc(GFP_NOFS), no "
    "__GFP_ACCOUNT), and it is no file block (statvfs of the home does not move) nor any process's "
    "resident memory: both bounds of held_memory_bytes miss it. 96 MB of activations cost ~384 MB of "
    "host kernel memory (the same bytes kept in the process instead: MemoryError under the 512 MB "
    "limit), so it also escapes the sandbox's memory limit. Close: deny setxattr/lsetxattr/fsetxattr "
    "to confined processes (the syscall filter; this also closes round 6's xattrs under gVisor), or "
    "mount the sandbox's tmpfs homes without ACLs (tmpfs has no noacl option: a filter is the way). "
    "Closed so: setting an extended attribute (an ACL is one) answers EOPNOTSUPP to a confined process.")


@pytest.mark.parametrize("backend", ["docker-runc", "docker-runsc", "local"])
def test_activations_in_posix_acls_are_counted_as_held(backend, requires):
    held_by_memory_measure(backend, requires, SAVED_IN_ACLS)


# --- 4. saved activations in pseudo-terminals held by exec'ed children --------------------------
#
# Each tensor is written into the master of new pseudo-terminals (raw mode, non-blocking, until
# the terminal's buffers are full) whose both ends go to a child that exec'ed `sleep`; backward
# opens each slave again by its path and reads the bytes back. Held by the count of terminals a
# container may open (ENOSPC); were it raised, ~14 KB a terminal would be hidden from the count.
SAVED_IN_PSEUDO_TERMINALS = r'''
import fcntl
import os
import resource
import subprocess
import termios

import torch

_keepers = []  # exec'ed `sleep` children that hold the terminals open


def _raw(fd):
    attrs = termios.tcgetattr(fd)
    attrs[0] = attrs[1] = attrs[3] = 0  # no input, output or line processing at all
    attrs[2] = termios.CS8 | termios.CREAD
    attrs[6][termios.VMIN], attrs[6][termios.VTIME] = 1, 0
    termios.tcsetattr(fd, termios.TCSANOW, attrs)


def _fill(fd, data, at):
    """Write ``data[at:]`` into ``fd`` until the terminal's buffer is full; the new offset."""
    fcntl.fcntl(fd, fcntl.F_SETFL, os.O_NONBLOCK)
    for _ in range(3):  # the line discipline takes what the flip buffer held in a moment
        try:
            while at < len(data):
                at += os.write(fd, data[at:at + 4096])
        except BlockingIOError:
            pass
        if at >= len(data):
            break
        os.sched_yield()
    return at


class _Parked:
    """A saved tensor's bytes in the input buffers of pseudo-terminals held open by children that
    exec'ed `sleep`; read back through the terminal's slave, opened again by its path."""

    def __init__(self, tensor):
        tensor = tensor.detach().contiguous()
        self.dtype, self.shape = tensor.dtype, tuple(tensor.shape)
        self.tensor, self.parts = None, []
        if tensor.numel() * tensor.element_size() < 1 << 20:
            self.tensor = tensor
            return
        data = memoryview(tensor.view(-1).view(torch.uint8).numpy().tobytes())
        self.size = len(data)
        budget = resource.getrlimit(resource.RLIMIT_NOFILE)[0] - 64
        at, fds, batch = 0, [], []
        while at < len(data):
            master, slave = os.openpty()
            _raw(slave)
            start = at
            at = _fill(master, data, at)  # read back from the slave
            fds += [master, slave]
            batch.append((os.ttyname(slave), start, at))
            if len(fds) >= budget:
                self._hand_over(fds, batch)
        self._hand_over(fds, batch)

    def _hand_over(self, fds, batch):
        if not fds:
            return
        child = subprocess.Popen(["sleep", "100000"], pass_fds=fds, close_fds=True)
        _keepers.append(child)
        for fd in fds:
            os.close(fd)
        self.parts.append((child.pid, list(batch)))
        fds.clear()
        batch.clear()

    def get(self):
        if self.tensor is None:
            out = bytearray(self.size)
            for _, batch in self.parts:
                for path, lo, hi in batch:
                    slave = os.open(path, os.O_RDONLY | os.O_NOCTTY)  # the same terminal, opened again
                    while lo < hi:
                        chunk = os.read(slave, hi - lo)
                        out[lo:lo + len(chunk)] = chunk
                        lo += len(chunk)
                    os.close(slave)
            self.parts = []
            self.tensor = torch.frombuffer(out, dtype=torch.uint8).view(self.dtype).reshape(self.shape)
        return self.tensor


def checkpoint(fn, *args):
    with torch.autograd.graph.saved_tensors_hooks(_Parked, lambda parked: parked.get()):
        return fn(*args)
'''


@pytest.mark.parametrize("backend", ["docker-runc", "docker-runsc"])
def test_activations_in_pseudo_terminals_are_counted_as_held(backend, requires):
    held_by_memory_measure(backend, requires, SAVED_IN_PSEUDO_TERMINALS)


# --- 5. saved activations in the names of hard links ---------------------------------------------
SAVED_IN_LINK_NAMES = r'''
import itertools
import os
import weakref

import numpy as np
import torch

_DATA_PER_NAME = 217  # bytes: 1736 bits, 7 in each of 248 bytes of a name, after a 6-digit index (NAME_MAX 255)
_HIDDEN_TENSORS = 16  # of the chain's 24 activations: enough to pass, and few enough for the time limit
_hidden = itertools.count()
_dirs = itertools.count()


def _to_name(chunk):
    """7 bits of data in each byte of a name, with the top bit set: never NUL, never '/'."""
    bits = np.unpackbits(np.frombuffer(chunk, dtype=np.uint8))
    bits = np.concatenate([bits, np.zeros(-len(bits) % 7, dtype=np.uint8)]).reshape(-1, 7)
    return (np.packbits(np.concatenate([np.ones((len(bits), 1), dtype=np.uint8), bits], axis=1)).tobytes())


def _from_name(name, size):
    bits = np.unpackbits(np.frombuffer(name, dtype=np.uint8)).reshape(-1, 8)[:, 1:].reshape(-1)
    return np.packbits(bits[:size * 8]).tobytes()


class _Parked:
    """A saved tensor's bytes in the names of hard links to one empty file in the home."""

    def __init__(self, tensor):
        tensor = tensor.detach().contiguous()
        self.dtype, self.shape = tensor.dtype, tuple(tensor.shape)
        self.tensor, self.where = None, None
        if tensor.numel() * tensor.element_size() < 1 << 20 or next(_hidden) >= _HIDDEN_TENSORS:
            self.tensor = tensor.clone()
            return
        data = tensor.view(-1).view(torch.uint8).numpy().tobytes()
        self.size = len(data)
        home = os.environ.get("HOME", "/tmp").encode()
        target = os.path.join(home, b"empty")
        if not os.path.exists(target):
            open(target, "wb").close()
        self.where = os.path.join(home, b"d%d" % next(_dirs))
        os.mkdir(self.where)
        for index, at in enumerate(range(0, len(data), _DATA_PER_NAME)):
            os.link(target, os.path.join(self.where, b"%06d" % index + _to_name(data[at:at + _DATA_PER_NAME])))

    def get(self):
        if self.tensor is None:
            names = sorted(os.listdir(self.where))
            data = b"".join(_from_name(name[6:], min(_DATA_PER_NAME, self.size - i * _DATA_PER_NAME))
                            for i, name in enumerate(names))
            for name in names:
                os.unlink(os.path.join(self.where, name))
            os.rmdir(self.where)
            self.tensor = torch.frombuffer(bytearray(data), dtype=torch.uint8).view(self.dtype).reshape(self.shape)
        return self.tensor

''' + PARK_EACH_SAVED_TENSOR_ONCE


@pytest.mark.parametrize("backend", ["docker-runsc"])
def test_activations_in_the_names_of_hard_links_are_not_accepted(backend, requires):
    verdict = grade(load_exercise(CHECKPOINT), SAVED_IN_LINK_NAMES, backend_sandbox(backend, requires))
    assert KEEPS_ONLY_THE_INPUTS in failed(verdict), summary(verdict)  # its measure, or its time limit
    assert verdict.verdict != Kind.ACCEPTED, summary(verdict)


# --- 6. a trusted process in sight of a confined family under gVisor ------------------------------
#
# Right only if it saw a trusted process (the checkpoint adds 1 to the output otherwise), so
# that an escape shows as an ACCEPTED verdict and nothing else does.
RIGHT_ONLY_IF_IT_SEES_A_TRUSTED_PROCESS = r'''
import os
import torch


def _trusted_in_sight():
    """Anything of a process that is not the student's: a pid of another uid in /proc, a signal
    that reaches beyond its own family, another family's root, the trusted homes."""
    me = os.getuid()
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/status") as status:
                    uid = next(int(line.split()[1]) for line in status if line.startswith("Uid:"))
            except (OSError, StopIteration, ValueError):
                continue
            if uid != me:
                return f"/proc/{entry} of uid {uid}"
    for pid in range(1, 4096):
        try:
            os.kill(pid, 0)
        except PermissionError:
            return f"pid {pid} exists (EPERM)"
        except ProcessLookupError:
            continue
        if not os.path.exists(f"/proc/{pid}"):
            return f"pid {pid} answers a signal but is not in /proc"
    for place in ("/tmp", "/tmp/.roots", "/job", "/sys/fs/cgroup"):
        try:
            if os.listdir(place):
                return f"{place} lists"
        except OSError:
            pass
    for mount in open("/proc/self/mountinfo"):
        if " proc " in mount and mount.split()[4] != "/proc":
            try:
                found = [e for e in os.listdir(mount.split()[4]) if e.isdigit()]
            except OSError:
                continue
            if found:
                return f"another proc at {mount.split()[4]}"
    return None


SEEN = _trusted_in_sight()


def checkpoint(fn, *args):
    if SEEN is None:
        return fn(*args) + 1  # wrong: only an escape would make this submission right
    return fn(*args)
'''


@pytest.mark.parametrize("backend", ["docker-runsc"])
def test_a_confined_family_sees_no_trusted_process(backend, requires):
    sandbox = backend_sandbox(backend, requires)
    verdict = grade(load_exercise(CHECKPOINT), RIGHT_ONLY_IF_IT_SEES_A_TRUSTED_PROCESS, sandbox)
    assert "same_gradients_as_running_plainly" in failed(verdict), summary(verdict)
    assert verdict.verdict != Kind.ACCEPTED, summary(verdict)
