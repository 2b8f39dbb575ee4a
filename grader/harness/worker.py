"""A worker: loads one program (the student's, or the reference) and serves the judge's calls.

Runs in its own process. The student's worker runs under another uid with no capabilities;
everything in this process is the student's to change, so nothing it says is trusted: the
judge rebuilds replies as plain data and compares them with values it computed elsewhere.

The student's worker of an exercise with rules is a fresh interpreter that never held a
banned module (the rules at run time in grader/contract.py): it starts from programs.RULED_BOOT, not from a fork of the
preloaded zygote, and says it is ready before the judge sends its program.

Requests (judge -> worker): {"op": "ready"} · {"op": "load", "filename", "module"} with the program's source as
its one blob · {"op": "call", "obj", "name", "args", "kwargs", "digests"} · {"op":
"release", "handles"}, each with a fresh random "id".
Replies: {"ok": true, "value"} or {"ok": false, "error": {"type", "message", "traceback",
"line", "errno"}}, each with "re" set to the id of the request it answers: a reply
written before its request arrived cannot name it.
"""
from __future__ import annotations

import linecache
import os
import sys
import traceback
import types
from typing import Any, BinaryIO

from grader.harness import wire

HEAVY_MODULES = ("numpy", "torch")  # what a load reports it imported itself ("fresh") rather than inherited


class Worker:
    def __init__(self, requests: BinaryIO, replies: BinaryIO, inherited: list[str] | None = None):
        self.inherited = list(inherited or [])  # heavy modules already imported when the worker began
        self.requests = requests
        self.replies = replies
        self.objects: dict[int, Any] = {}
        self.numbers: dict[int, int] = {}  # id(object) -> handle number, for objects we hold
        self.sources: dict[int, str] = {}  # id(function) -> source, for functions the judge sent
        self.compiled: dict[str, Any] = {}  # source -> function: a race sends the same one every call
        self.program_path = ""

    def serve(self) -> None:
        while True:
            try:
                request, blobs = wire.read_frame(self.requests)
            except EOFError:
                return
            op = request.get("op")
            if op == "exit":
                return
            try:
                reply, reply_blobs = self.handle(op, request, blobs)
            except BaseException as error:  # noqa: B036 - SystemExit from the program is an answer too
                reply, reply_blobs = {"ok": False, "error": self.describe(error)}, []
            self.send(dict(reply, re=request.get("id")), reply_blobs)

    def send(self, reply: dict[str, Any], blobs: list[bytes]) -> None:
        sys.stdout.flush()
        sys.stderr.flush()
        wire.write_frame(self.replies, reply, blobs)

    def handle(self, op: Any, request: dict[str, Any], blobs: list[bytes]) -> tuple[dict[str, Any], list[bytes]]:
        if op == "ready":
            return {"ok": True, "value": None}, []
        if op == "load":
            return self.load(blobs[0], str(request["filename"]), str(request["module"]))
        if op in ("call", "apply"):
            return self.call(request, blobs)
        if op == "release":
            for number in request.get("handles", []):
                obj = self.objects.pop(number, None)
                self.numbers.pop(id(obj), None)
            return {"ok": True, "value": None}, []
        raise ValueError(f"unknown request {op!r}")

    def load(self, source: bytes, filename: str, module_name: str) -> tuple[dict[str, Any], list[bytes]]:
        """Run the program the judge sent as module ``module_name``, its frames named ``filename``."""
        self.program_path = filename
        try:
            code = compile(source, filename, "exec")
        except (SyntaxError, ValueError) as error:
            return {"ok": False, "error": self.describe(error), "syntax": True}, []
        # Its lines for tracebacks and inspect.getsource, as if the file were here (mtime None:
        # linecache never drops the entry for a file it cannot find).
        lines = source.decode("utf-8", "replace").splitlines(keepends=True)
        linecache.cache[filename] = (len(source), None, lines, filename)
        module = types.ModuleType(module_name)
        module.__file__ = filename
        sys.modules[module_name] = module
        exec(code, module.__dict__)
        self.objects[0] = module
        self.numbers[id(module)] = 0
        fresh = [m for m in HEAVY_MODULES if m in sys.modules and m not in self.inherited]
        return {"ok": True, "value": None, "fresh": fresh}, []

    def call(self, request: dict[str, Any], blobs: list[bytes]) -> tuple[dict[str, Any], list[bytes]]:
        decoder = wire.Decoder(blobs, handle=self.lookup, function=self.function, torch_tensors=True)
        args = [decoder.decode(a) for a in request.get("args", [])]
        kwargs = {k: decoder.decode(v) for k, v in request.get("kwargs", {}).items()}
        if request.get("op") == "apply":  # a function from the judge, run on this side's objects
            target, call_args = args[0], args[1:]
        else:
            target = self.objects[request["obj"]]
            if request.get("name"):
                target = getattr(target, request["name"])
            call_args = args
        result = target(*call_args, **kwargs) if request.get("call", True) else target
        if request.get("grad"):
            result = self.gradients(result, call_args)
        encoder = wire.Encoder(self.as_handle)
        reply = {"ok": True, "value": encoder.encode(result)}
        if request.get("digests"):
            # Re-encode the inputs after the call: a changed fingerprint means they were mutated.
            reply["digests"] = ([self.fingerprint(a) for a in args]
                                + [self.fingerprint(kwargs[k]) for k in sorted(kwargs)])
        return reply, encoder.blobs

    @staticmethod
    def gradients(result: Any, args: list[Any]) -> list[Any]:
        """d(sum of result)/d(each tensor argument that requires grad), by torch.autograd."""
        torch = sys.modules["torch"]  # a check asks for gradients only of a program that holds torch
        inputs = [a for a in args if isinstance(a, torch.Tensor) and a.requires_grad]
        grads = torch.autograd.grad(result, inputs, grad_outputs=torch.ones_like(result), allow_unused=True)
        return [torch.zeros_like(i) if g is None else g for g, i in zip(grads, inputs, strict=True)]

    def fingerprint(self, value: Any) -> str:
        """Encoded exactly as the judge encoded the value it sent (handles by number only)."""

        def by_number(obj: Any, encoder: wire.Encoder) -> dict[str, Any]:
            tag = self.as_handle(obj, encoder)
            tag.pop("type", None)
            return tag

        encoder = wire.Encoder(by_number)
        return wire.digest(encoder.encode(value), encoder.blobs)

    def lookup(self, tag: dict[str, Any]) -> Any:
        return self.objects[tag["h"]]

    def function(self, source: str) -> Any:
        if source not in self.compiled:
            function = wire.compile_function(source)
            self.sources[id(function)] = source
            self.compiled[source] = function  # kept alive, so its id stays unique
        return self.compiled[source]

    def as_handle(self, value: Any, encoder: wire.Encoder) -> dict[str, Any]:
        if id(value) in self.sources:
            return {"$": "fn", "src": self.sources[id(value)]}
        number = self.numbers.get(id(value))
        if number is None:
            number = max(self.objects, default=0) + 1
            self.objects[number] = value
            self.numbers[id(value)] = number
        return {"$": "handle", "h": number, "type": type(value).__name__}

    def describe(self, error: BaseException) -> dict[str, Any]:
        """The error as the student should see it: their own frames only."""
        frames = [f for f in traceback.extract_tb(error.__traceback__) if f.filename == self.program_path]
        name = self.program_path or "program"
        lines = [f'  File "{name}", line {f.lineno}, in {f.name}\n' + (f"    {f.line}\n" if f.line else "")
                 for f in frames]
        if isinstance(error, SyntaxError):
            lineno = error.lineno or 0
            detail = f"{error.msg} ({name}, line {lineno})"
            if error.text:
                detail += f"\n    {error.text.rstrip()}"
            return {"type": "SyntaxError", "message": detail, "traceback": "", "line": lineno}
        try:
            message = str(error)
        except BaseException:  # noqa: B036 - a student's __str__ may raise anything
            message = "<the error's message could not be shown>"
        return {
            "type": type(error).__name__,
            "message": message[:2000],
            "traceback": ("Traceback (most recent call last):\n" + "".join(lines)) if lines else "",
            "line": frames[-1].lineno if frames else None,
            "errno": error.errno if isinstance(error, OSError) and type(error.errno) is int else None,
        }


def main(inherited: list[str] | None = None) -> None:
    """``python -c '...worker.main(inherited)' LIB REQUEST_FD REPLY_FD``, forked by the zygote."""
    requests = os.fdopen(int(sys.argv[-2]), "rb", buffering=0)
    replies = os.fdopen(int(sys.argv[-1]), "wb")
    Worker(requests, replies, inherited).serve()
    os._exit(0)  # skip interpreter teardown: a student's atexit hooks have nothing to add


if __name__ == "__main__":
    main()
