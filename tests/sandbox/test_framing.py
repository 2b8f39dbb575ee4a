"""sandbox/framing.py: the bytes between the host and the bootstrap, cut and checked alike on both sides."""
from __future__ import annotations

import socket
import threading

import pytest

from sandbox.framing import (
    CHECKPOINT_MAX_BYTES,
    CHECKPOINT_TAKEN,
    ProtocolError,
    Report,
    hand_checkpoint,
    pack_checkpoint,
    pack_report,
    split_checkpoints,
    split_report,
)


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


def test_the_last_whole_checkpoint_comes_apart_from_the_report():
    data = pack_report(report(), b"out", b"", b"")
    assert split_checkpoints(data) == (None, data)  # a report starts with 0, never with the tag
    assert split_checkpoints(pack_checkpoint(b"one") + pack_checkpoint(b"") + pack_checkpoint(b"two") + data) == (
        b"two", data)


@pytest.mark.parametrize("cut", [1, 13, 17, 20])
def test_a_checkpoint_cut_off_is_none_and_leaves_no_report(cut):
    # The sandbox died while one was on its way: the one before holds, and no report came.
    data = pack_checkpoint(b"one") + pack_checkpoint(b"second")
    assert split_checkpoints(data[: len(data) - cut]) == (b"one", b"")
    assert split_checkpoints(b"GDCHECKPOINT" + (CHECKPOINT_MAX_BYTES + 1).to_bytes(4, "big") + b"x") == (None, b"")


def test_a_checkpoint_handed_over_returns_once_it_is_taken():
    program, bootstrap = socket.socketpair()
    got = []

    def take():
        size = int.from_bytes(bootstrap.recv(4), "big")
        got.append(bootstrap.recv(size, socket.MSG_WAITALL))
        bootstrap.sendall(CHECKPOINT_TAKEN)
        size = int.from_bytes(bootstrap.recv(4), "big")
        bootstrap.recv(size, socket.MSG_WAITALL)
        bootstrap.close()  # gone without an answer

    thread = threading.Thread(target=take)
    thread.start()
    assert hand_checkpoint(program.fileno(), b"state") and got == [b"state"]
    assert not hand_checkpoint(program.fileno(), b"again")
    thread.join()
    program.close()
