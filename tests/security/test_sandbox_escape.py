"""Hostile programs that try to reach beyond the sandbox, on docker-runc, docker-runsc and local.

The program runs as every untrusted program does (the lent uid, no capabilities, the syscall
filter). Where a test needs the trusted judge's view it runs trusted (uid 0 with
CAP_SETUID/SETGID/KILL/CHOWN only), and where it then says "as 65534" it first drops there,
as the judge's zygote does for student code.
"""
from __future__ import annotations

import dataclasses
import json
import os
import secrets
import socket
import uuid
from pathlib import Path

import pytest

from sandbox import RunOptions
from tests.sandbox.backends import SMALL, assert_next_run_is_clean, python

TRUSTED = RunOptions(trusted=True)

DROP_TO_NOBODY = "import os\nos.setgroups([]); os.setgid(65534); os.setuid(65534)\n"


@pytest.fixture(autouse=True)
def next_run_is_clean(sandbox):
    yield
    assert_next_run_is_clean(sandbox)


def _host_addresses() -> list[str]:
    """Addresses of this host a container or namespace could try: docker0's gateway, eth0..."""
    found = {"127.0.0.1", "172.17.0.1"}
    try:
        found.add(socket.gethostbyname(socket.gethostname()))
    except OSError:
        pass
    try:
        Path("/proc/net/fib_trie").read_text()
        import subprocess

        listing = subprocess.run(["ip", "-4", "-o", "addr"], capture_output=True, text=True, timeout=5).stdout
        found.update(part.split("/")[0] for line in listing.splitlines() for part in line.split()[3:4])
    except (OSError, ValueError):
        pass
    return sorted(found)


def _reachable_from_host(host: str, port: int) -> bool:
    try:
        with socket.create_connection((host, port), timeout=1):
            return True
    except OSError:
        return False


def test_no_network_at_all(sandbox):
    targets = [("1.1.1.1", 53), ("8.8.8.8", 443), ("169.254.169.254", 80)]
    targets += [(host, port) for host in _host_addresses() for port in (6379, 5432, 2375, 22)]
    # The host does reach its own Redis and PostgreSQL: the sandbox must not.
    controls = [t for t in targets if t[0] == "127.0.0.1" and t[1] in (6379, 5432) and _reachable_from_host(*t)]
    program = f"""
import json, socket
reached = []
for host, port in {targets!r}:
    try:
        socket.create_connection((host, port), timeout=1).close(); reached.append([host, port])
    except OSError:
        pass
try:
    socket.getaddrinfo('pypi.org', 443); reached.append('dns')
except OSError:
    pass
try:
    udp = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); udp.sendto(b'x', ('8.8.8.8', 53)); reached.append('udp')
except OSError:
    pass
print(json.dumps(reached))
"""
    outcome = python(sandbox, program)
    assert outcome.status == "ok", outcome
    assert json.loads(outcome.stdout) == [], f"reached from the sandbox (the host reaches {controls})"


def test_the_workers_environment_and_secrets_are_invisible(sandbox, monkeypatch):
    probe = f"graphdojo-secret-{secrets.token_hex(8)}"
    monkeypatch.setenv("GRAPHDOJO_SECRET_PROBE", probe)
    monkeypatch.setenv("DATABASE_URL", f"postgres://user:{probe}@db/x")
    program = """
import os
print(dict(os.environ))
for pid in os.listdir('/proc'):
    for name in ('environ', 'cmdline'):
        try:
            data = open(f'/proc/{pid}/{name}', 'rb').read()
            print(data[:4000], data[-4000:])  # the bootstrap's command line is its whole source
        except OSError:
            pass
for path in ('/etc/environment', '/proc/1/environ', '/root/.docker/config.json', '/run/secrets'):
    try:
        print(open(path, 'rb').read()[:200])
    except OSError:
        pass
"""
    outcome = python(sandbox, program)
    assert outcome.status == "ok", outcome
    assert probe.encode() not in outcome.stdout + outcome.stderr


def test_the_root_filesystem_is_read_only(sandbox):
    program = """
import os
writable = []
for path in ('/x', '/etc/passwd', '/etc/x', '/usr/x', '/usr/bin/python3', '/opt/x', '/var/x', '/bin/sh', '/sys/x'):
    try:
        with open(path, 'a') as f:
            f.write('x')
        writable.append(path)
    except OSError:
        pass
# Kernel knobs guarded only by their mode (uid 0 may write them): open, never write.
for path in ('/proc/sysrq-trigger', '/proc/sys/kernel/core_pattern', '/proc/sys/kernel/hostname',
             '/proc/sys/vm/drop_caches', '/proc/sys/kernel/modprobe', '/proc/irq/default_smp_affinity'):
    try:
        os.close(os.open(path, os.O_WRONLY))
        writable.append(path)
    except OSError:
        pass
print(writable)
"""
    outcome = python(sandbox, program)
    assert outcome.status == "ok", outcome
    assert outcome.stdout == b"[]\n"


def test_files_meant_to_persist_do_not_reach_the_next_run(sandbox):
    places = ("('/tmp/planted', 'planted', 'out/planted', '/dev/shm/planted', '/var/tmp/planted', "
              "os.path.expanduser('~/planted'))")
    planted = python(sandbox, f"""
import os
for path in {places}:
    try:
        open(path, 'w').write('from a previous run')
    except OSError:
        pass
""")
    assert planted.status == "ok", planted
    found = python(sandbox, f"""
import os
print([p for p in {places} if os.path.exists(p)])
""")
    assert found.stdout == b"[]\n"


def test_setuid_binaries_and_sudo_give_nobody_root_back(sandbox):
    program = DROP_TO_NOBODY + r"""
import subprocess
results = []
try:
    os.setuid(0); results.append('setuid(0) worked')
except PermissionError:
    pass
for command in (['sudo', '-n', 'id', '-u'], ['su', '-c', 'id -u', 'root'], ['/tmp/id-setuid', '-u']):
    try:
        run = subprocess.run(command, capture_output=True, text=True, stdin=subprocess.DEVNULL, timeout=5)
    except OSError:  # missing, or a noexec /tmp: either way no root
        continue
    if run.stdout.strip() == '0':
        results.append(' '.join(command))
print(results, os.getuid(), os.geteuid())
"""
    # As uid 0 first: plant a setuid-root copy of `id`, then drop and try it (nosuid/no_new_privs).
    plant = "import shutil, os\nshutil.copy('/usr/bin/id', '/tmp/id-setuid'); os.chmod('/tmp/id-setuid', 0o4755)\n"
    # Three programs started after Python: on gVisor that costs about 2 CPU-s (its kernel's
    # time is charged to the run), SMALL's whole allowance; this test is about root, not time.
    roomy = dataclasses.replace(SMALL, cpu_s=10.0, wall_s=20.0)
    outcome = python(sandbox, plant + "exec(open('drop.py').read())", limits=roomy, files={"drop.py": program.encode()},
                     options=TRUSTED)
    assert outcome.status == "ok", outcome
    assert outcome.stdout.strip() == b"[] 65534 65534"
    # An untrusted program starts where the dropped one ended, and gets no further.
    untrusted = python(sandbox, program.replace(DROP_TO_NOBODY, "import os\n"), limits=roomy)
    assert untrusted.status == "ok", untrusted
    results, uid, euid = untrusted.stdout.decode().strip().rsplit(" ", 2)
    assert results == "[]" and uid == euid != "0"


def test_ptrace_of_another_process_is_refused(sandbox):
    program = r"""
import ctypes, os, time
libc = ctypes.CDLL(None, use_errno=True)
PTRACE_ATTACH = 16
results = {'supervisor': libc.ptrace(PTRACE_ATTACH, 1, 0, 0)}  # the bootstrap, PID 1
parent = os.getpid()
child = os.fork()
if child == 0:
    os.setgroups([]); os.setgid(65534); os.setuid(65534)
    os._exit(0 if libc.ptrace(PTRACE_ATTACH, parent, 0, 0) == -1 else 1)
results['judge from nobody'] = os.waitpid(child, 0)[1]
print(results)
"""
    outcome = python(sandbox, program, options=TRUSTED)
    assert outcome.status == "ok", outcome
    assert outcome.stdout == b"{'supervisor': -1, 'judge from nobody': 0}\n"


def test_kill_of_everything_and_of_the_parent_hurt_only_the_sandbox(sandbox):
    everything = python(sandbox, "import os, signal, time\ntry: os.kill(-1, signal.SIGKILL)\nexcept OSError: pass\n"
                                 "print('after')")
    parent = python(sandbox, "import os, signal\nfor pid in (os.getppid(), 1):\n"
                             "    try: os.kill(pid, signal.SIGKILL)\n    except OSError: pass\nprint('after')")
    # PID 1 ignores signals from inside on runc and bwrap; gVisor lets it die, which ends the run.
    assert everything.status in ("ok", "signal") and everything.status != "sandbox_error", everything
    assert parent.status in ("ok", "signal"), parent
    assert os.getpid() > 0  # the worker is still here to assert


def test_a_double_forked_daemon_is_gone_after_the_run(sandbox):
    marker = f"graphdojo-daemon-{uuid.uuid4().hex}"
    program = f"""
import os, time
if os.fork() == 0:
    os.setsid()
    if os.fork() == 0:
        os.execvp('sh', ['sh', '-c', 'while true; do sleep 1; done # {marker}'])
    os._exit(0)
time.sleep(0.3)
print('parent leaves')
"""
    outcome = python(sandbox, program)
    assert outcome.status == "ok" and outcome.stdout == b"parent leaves\n", outcome
    survivors = []
    for proc in Path("/proc").iterdir():
        try:
            if proc.name.isdigit() and marker.encode() in (proc / "cmdline").read_bytes():
                survivors.append(proc.name)
        except OSError:
            continue
    assert survivors == []


def test_a_symlink_planted_in_the_output_folder_is_not_followed(sandbox, tmp_path):
    host_file = tmp_path / "host-secret.txt"
    host_file.write_text("host only")
    program = f"""
import os
os.symlink({str(host_file)!r}, 'out/link-to-host')
os.symlink('/etc/passwd', 'out/passwd')
os.symlink('/', 'out/root')
os.mkdir('out/dir'); os.symlink('../passwd', 'out/dir/up')
open('out/real.txt', 'w').write('real')
"""
    outcome = python(sandbox, program)
    assert outcome.status == "ok", outcome
    assert outcome.files == {"out/real.txt": b"real"}
    assert host_file.read_text() == "host only"


def test_kernel_keyrings_and_new_namespaces_are_refused(sandbox):
    """Keyrings follow the uid, not a namespace: uid 0 inside must not reach the host root's."""
    program = r"""
import ctypes
libc = ctypes.CDLL(None, use_errno=True)
KEYCTL, UNSHARE, KEYCTL_GET_KEYRING_ID, KEY_SPEC_USER_KEYRING, CLONE_NEWUSER = 250, 272, 0, -4, 0x10000000
print(libc.syscall(KEYCTL, KEYCTL_GET_KEYRING_ID, KEY_SPEC_USER_KEYRING, 0) == -1,
      libc.syscall(UNSHARE, CLONE_NEWUSER) == -1)
"""
    outcome = python(sandbox, program)
    assert outcome.status == "ok", outcome
    keyring_refused, userns_refused = outcome.stdout.split()
    assert keyring_refused == b"True"
    # gVisor's user namespaces live in its own kernel, not the host's: allowed there.
    assert userns_refused == b"True" or sandbox.name == "docker-runsc"
