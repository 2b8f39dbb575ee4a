"""sandbox/protocol.py and runtime/framing.py: jobs out, reports in, both halves framing alike."""
from __future__ import annotations

import ast
import io
import signal
import subprocess
import sys
import tarfile

import pytest

from sandbox import Limits
from sandbox.protocol import (
    BOOTSTRAP_SOURCE,
    RUNTIME,
    RUNTIME_MODULES,
    encode_job,
    files_from_tar,
    outcome_from_report,
    report_budget,
    tar_of,
)
from sandbox.runtime.framing import (
    READY,
    ProtocolError,
    Report,
    pack_report,
    read_job,
    split_report,
)

LIMITS = Limits(cpu_s=5, wall_s=10, memory_mb=256, output_bytes=1000, files_bytes=100)


def report(**fields) -> Report:
    base: Report = {"exit_code": 0, "signal": None, "stopped_by": None, "wall_s": 0.5, "cpu_s": 0.25,
                    "max_rss_bytes": 1 << 20, "oom_kills": 0, "stdout_truncated": False, "stderr_truncated": False,
                    "files_truncated": False, "notes": []}
    return {**base, **fields}  # type: ignore[typeddict-item]


def reader(data: bytes):
    stream = io.BytesIO(data)
    return lambda n: stream.read(n)


def test_a_job_reads_back_as_it_was_sent():
    files = {"main.py": b"print(1)", "data/x.bin": bytes(range(256))}
    job, tar = read_job(reader(encode_job(files, ["python3", "main.py"], LIMITS, {"A": "1"}, "/job", {"nproc": 7})))
    assert job == {"argv": ["python3", "main.py"], "env": {"A": "1"}, "workdir": "/job",
                   "limits": {"cpu_s": 5, "wall_s": 10, "output_bytes": 1000, "files_bytes": 100,
                              "file_bytes": LIMITS.tmpfs_mb * 2**20, "nproc": 7}, "trusted": False}
    with tarfile.open(fileobj=io.BytesIO(tar)) as archive:
        assert {m.name: archive.extractfile(m).read() for m in archive} == files


def test_only_a_trusted_job_carries_the_secret():
    trusted, _ = read_job(reader(encode_job({}, ["python3"], LIMITS, {}, "/job", trusted=True, secret=b"\x01\xff")))
    assert (trusted["trusted"], trusted["secret"]) == (True, "01ff")
    untrusted, _ = read_job(reader(encode_job({}, ["python3"], LIMITS, {}, "/job", secret=b"\x01\xff")))
    assert "secret" not in untrusted and untrusted["trusted"] is False


def test_a_report_splits_into_its_parts():
    data = pack_report(report(exit_code=3), b"out", b"err", b"tar")
    header, stdout, stderr, files = split_report(data)
    assert (header["exit_code"], stdout, stderr, files) == (3, b"out", b"err", b"tar")


@pytest.mark.parametrize("data, message", [
    (b"\x00\x00", "without a report"),
    ((10**6).to_bytes(4, "big") + b"{}", "cut or too large"),
    ((2).to_bytes(4, "big") + b"{}", "unreadable report header"),
    (pack_report(report(), b"out", b"", b"") + b"extra", "does not match"),
])
def test_a_report_that_is_not_one_is_refused(data, message):
    with pytest.raises(ProtocolError, match=message):
        split_report(data)


def test_the_bootstrap_and_the_host_speak_through_the_same_framing(tmp_path):
    """The one script a sandbox runs, here without a sandbox: READY, a job in, a report out."""
    job = encode_job({"main.py": b"import os\nprint('hi')\nopen('out/r.txt', 'w').write('42')\n"},
                     ["python3", "main.py"], LIMITS, {}, str(tmp_path / "job"))
    done = subprocess.run([sys.executable, "-I", "-c", BOOTSTRAP_SOURCE], input=job, capture_output=True, timeout=60)
    assert done.stdout.startswith(READY), done.stderr
    outcome = outcome_from_report(done.stdout[len(READY):], LIMITS, "test")
    assert (outcome.status, outcome.exit_code, outcome.stdout) == ("ok", 0, b"hi\n")
    assert outcome.files == {"out/r.txt": b"42"}


def test_files_from_the_sandbox_are_plain_files_inside_out_and_capped():
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w") as archive:
        for name, data in [("a.txt", b"a" * 60), ("/etc/passwd", b"x"), ("../up.txt", b"x"), ("b.txt", b"b" * 60)]:
            entry = tarfile.TarInfo(name)
            entry.size = len(data)
            archive.addfile(entry, io.BytesIO(data))
        link = tarfile.TarInfo("link.txt")
        link.type, link.linkname = tarfile.SYMTYPE, "/etc/shadow"
        archive.addfile(link)
    files, truncated = files_from_tar(buffer.getvalue(), cap=100)
    assert files == {"out/a.txt": b"a" * 60} and truncated
    assert files_from_tar(b"not a tar at all" * 100, cap=100) == ({}, True)
    assert files_from_tar(tar_of({"r.json": b"{}"}), cap=100) == ({"out/r.json": b"{}"}, False)


@pytest.mark.parametrize("fields, host, status", [
    ({}, {}, "ok"),
    ({"stopped_by": "cpu"}, {}, "timeout"),
    ({"stopped_by": "wall"}, {}, "timeout"),
    ({"signal": int(signal.SIGXCPU)}, {}, "timeout"),
    ({"oom_kills": 1, "signal": 9}, {}, "memory"),
    ({"signal": 9}, {"peak_bytes": 255 * 2**20}, "memory"),
    ({"signal": 9}, {"oom_seen": True}, "memory"),
    ({"stdout_truncated": True}, {}, "output_limit"),
    ({"stopped_by": "output_limit"}, {}, "output_limit"),
    ({"signal": 11}, {}, "signal"),
    ({"files_truncated": True}, {}, "output_limit"),
])
def test_the_status_follows_from_the_report_and_the_hosts_own_view(fields, host, status):
    outcome = outcome_from_report(pack_report(report(**fields), b"", b"", b""), LIMITS, "test", **host)
    assert outcome.status == status


def test_a_memory_error_without_a_memory_cgroup_is_the_memory_limit():
    data = pack_report(report(exit_code=1), b"", b"Traceback...\nMemoryError\n", b"")
    assert outcome_from_report(data, LIMITS, "test", memory_by_rlimit=True).status == "memory"
    assert outcome_from_report(data, LIMITS, "test").status == "ok"


def test_the_report_budget_covers_an_honest_report_and_no_more():
    honest = pack_report(report(notes=["n"] * 10), b"o" * 1000, b"e" * 1000, b"f" * 100)
    assert len(honest) <= report_budget(LIMITS) < len(honest) + 2 * 2**20


def test_the_one_script_installs_all_of_the_runtime_for_the_program_it_forks(tmp_path):
    """Nothing of the repository is inside a sandbox: a judge forked from the bootstrap imports
    the runtime the script installed (its modules' file names are the script's, not paths)."""
    names = [f"sandbox.runtime.{name}" for name in RUNTIME_MODULES]
    show = f"import sys, {', '.join(names)}; print([sys.modules[n].__file__ for n in {names!r}])"
    job = encode_job({}, ["python3", "-c", show], LIMITS, {}, str(tmp_path / "job"))
    done = subprocess.run([sys.executable, "-I", "-c", BOOTSTRAP_SOURCE], input=job, capture_output=True,
                          timeout=60, cwd=tmp_path)
    outcome = outcome_from_report(done.stdout[len(READY):], LIMITS, "test")
    assert (outcome.status, outcome.exit_code) == ("ok", 0), outcome
    assert outcome.stdout.decode().strip() == repr([f"sandbox/runtime/{name}.py" for name in RUNTIME_MODULES])


def test_the_runtime_is_whole_and_standard_library_only():
    """Every module of sandbox/runtime/ travels in the script, after the runtime modules it
    imports, and imports nothing else but the standard library (nothing else is there)."""
    files = {path.stem for path in RUNTIME.glob("*.py")} - {"__init__", "bootstrap"}
    assert set(RUNTIME_MODULES) == files
    installed: list[str] = []
    for name in [*RUNTIME_MODULES, "bootstrap"]:
        tree = ast.parse((RUNTIME / f"{name}.py").read_text())
        for node in ast.walk(tree):
            modules = ([alias.name for alias in node.names] if isinstance(node, ast.Import)
                       else [node.module or ""] if isinstance(node, ast.ImportFrom) else [])
            for module in modules:
                if module.startswith("sandbox."):
                    assert module.removeprefix("sandbox.runtime.") in installed, (name, module)
                else:
                    assert module.split(".")[0] in sys.stdlib_module_names, (name, module)
        installed.append(name)
