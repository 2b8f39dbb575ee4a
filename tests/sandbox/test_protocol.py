"""sandbox/protocol.py, the host's half of the bootstrap protocol: jobs out, reports in, read with a budget."""
from __future__ import annotations

import io
import signal
import tarfile

import pytest

from sandbox import Limits
from sandbox.framing import CHECKPOINTS_MAX_BYTES, READY, pack_checkpoint, pack_report, read_job
from sandbox.protocol import (
    encode_job,
    failed_outcome,
    files_from_tar,
    outcome_from_report,
    report_budget,
    split_stream,
    tar_of,
)
from tests.sandbox.test_framing import report

LIMITS = Limits(cpu_s=5, wall_s=10, memory_mb=256, output_bytes=1000, files_bytes=100)


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
    # A trusted program's checkpoints come before its report: room for all it may hand over.
    assert report_budget(LIMITS, trusted=True) == report_budget(LIMITS) + CHECKPOINTS_MAX_BYTES


def test_the_last_checkpoint_travels_in_the_outcome_with_a_report_or_without_one():
    checkpoint, rest = split_stream(READY + pack_checkpoint(b"old") + pack_checkpoint(b"new") + pack_report(
        report(), b"out", b"", b""))
    outcome = outcome_from_report(rest, LIMITS, "test", checkpoint=checkpoint)
    assert (outcome.status, outcome.stdout, outcome.checkpoint, outcome.ending) == ("ok", b"out", b"new", "")
    died = failed_outcome("memory", "test", 1.0, ["warm pool"], "the sandbox was OOM-killed", checkpoint)
    assert died.checkpoint == b"new" and died.notes == ["warm pool", "the sandbox was OOM-killed"]
    assert died.ending == "the sandbox was OOM-killed"  # how it ended, told apart from the run's own notes
