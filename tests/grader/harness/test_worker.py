"""A worker on its own: the judge's requests in, plain replies out, the student's own frames only."""
from __future__ import annotations

import os
import threading

import pytest

from grader.harness import wire
from grader.harness.worker import Worker

PROGRAM = """\
class Box:
    def __init__(self, value):
        self.value = value

def add(a, b):
    return a + b

def boom(x):
    return helper(x)

def helper(x):
    raise ValueError(f"no {x}")

def make(value):
    return Box(value)
"""


class Channel:
    """A worker serving in a thread, over two real pipes."""

    def __init__(self, source: str, module: str):
        request_read, request_write = os.pipe()
        reply_read, reply_write = os.pipe()
        self.requests = os.fdopen(request_write, "wb")
        self.replies = os.fdopen(reply_read, "rb")
        # Run in this process, which holds numpy and torch already, as a zygote's fork would.
        self.worker = Worker(os.fdopen(request_read, "rb"), os.fdopen(reply_write, "wb"), ["numpy", "torch"])
        self.thread = threading.Thread(target=self.worker.serve, daemon=True)
        self.thread.start()
        self.load = self.ask({"op": "load", "filename": "program.py", "module": module}, [source.encode()])

    def ask(self, header: dict, blobs: list[bytes] = ()) -> dict:
        wire.write_frame(self.requests, header, list(blobs))
        reply, blobs = wire.read_frame(self.replies)
        reply.pop("blobs")
        return wire.Decoder(blobs, handle=lambda tag: tag).decode(reply)

    def call(self, name: str, *args) -> dict:
        return self.ask({"op": "call", "obj": 0, "name": name, "args": list(args), "kwargs": {}})

    def close(self) -> None:
        wire.write_frame(self.requests, {"op": "exit"}, [])
        self.thread.join(timeout=5)


@pytest.fixture
def channel(tmp_path, request):
    channel = Channel(PROGRAM, f"worker_test_{request.node.name}")
    yield channel
    channel.close()


def test_a_call_comes_back_as_plain_data(channel):
    assert channel.load == {"ok": True, "value": None, "re": None, "fresh": []}
    assert channel.call("add", 2, 3) == {"ok": True, "value": 5, "re": None}


def test_each_reply_names_the_request_it_answers(channel):
    # A reply written before its request arrived could not know this id (issue 10).
    asked = channel.ask({"op": "call", "obj": 0, "name": "add", "args": [2, 3], "kwargs": {}, "id": "f00d"})
    assert asked["re"] == "f00d" and asked["value"] == 5
    asked = channel.ask({"op": "call", "obj": 0, "name": "add", "args": [2, 3], "kwargs": {}, "digests": True})
    assert asked["digests"] == [channel.worker.fingerprint(2), channel.worker.fingerprint(3)]


def test_an_object_stays_in_the_worker_as_a_handle(channel):
    reply = channel.call("make", 4)
    handle = reply["value"]
    assert handle["$"] == "handle" and handle["type"] == "Box"
    value = channel.ask({"op": "call", "obj": handle["h"], "name": "value", "call": False, "args": [], "kwargs": {}})
    assert value["value"] == 4
    assert channel.ask({"op": "release", "handles": [handle["h"]]})["ok"]
    assert handle["h"] not in channel.worker.objects


def test_an_error_shows_the_students_frames_only(channel):
    reply = channel.call("boom", 7)
    error = reply["error"]
    assert reply["ok"] is False and error["type"] == "ValueError" and error["message"] == "no 7"
    assert error["traceback"].count('File "program.py"') == 2 and "worker.py" not in error["traceback"]
    assert error["line"] == 12


def test_a_syntax_error_is_reported_as_such(request):
    channel = Channel("def add(a, b)\n    return a\n", f"worker_test_{request.node.name}")
    try:
        assert channel.load["ok"] is False and channel.load["syntax"] is True
        assert "program.py, line 1" in channel.load["error"]["message"]
    finally:
        channel.close()


def test_an_unknown_request_is_an_error_not_a_crash(channel):
    reply = channel.ask({"op": "format-disk"})
    assert reply["ok"] is False and "unknown request" in reply["error"]["message"]
    assert channel.call("add", 1, 1)["value"] == 2
