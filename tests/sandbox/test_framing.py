"""sandbox/framing.py: the bytes between the host and the bootstrap, cut and checked alike on both sides."""
from __future__ import annotations

import pytest

from sandbox.framing import ProtocolError, Report, pack_report, split_report


def report(**fields) -> Report:
    base: Report = {"exit_code": 0, "signal": None, "stopped_by": None, "wall_s": 0.5, "cpu_s": 0.25,
                    "max_rss_bytes": 1 << 20, "oom_kills": 0, "stdout_truncated": False, "stderr_truncated": False,
                    "files_truncated": False, "notes": []}
    return {**base, **fields}  # type: ignore[typeddict-item]


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
