"""What crosses between the judge and a worker: JSON plus .npy arrays, never pickle.

A frame is a 4-byte length, a JSON header, then the raw .npy blobs the header counts.
Values are JSON with a few tagged objects ({"$": kind, ...}): tuples, dicts with non-string
keys, numpy arrays and scalars, torch tensors, handles to objects that stay in the worker,
and (judge -> worker only) function sources. Decoding a worker's reply builds only plain
data, so nothing a student returns can run code in the judge.

Standard library and numpy; no function here imports anything. A process's frameworks are
decided when it starts (the zygote's preload; contract.start_ruled for the student's process of an
exercise with rules): torch is used where the process already holds it, and numpy is optional,
for the student's process of an exercise that bans it (it never loads numpy, and plain data is
all that crosses to it). So no harness function ever imports a module on the student's behalf.
"""
from __future__ import annotations

import hashlib
import io
import json
import math
import struct
import sys
from collections.abc import Callable
from typing import Any, BinaryIO, Protocol, cast

try:
    import numpy as np
except ModuleNotFoundError:  # the student's process of an exercise that bans numpy (contract.start_ruled)
    NUMPY = False
else:
    NUMPY = True

MAX_FRAME_BYTES = 512 * 2**20  # one message; a reply larger than this is the student's fault
MAX_HEADER_BYTES = 64 * 2**20
_LENGTH = struct.Struct(">I")


class ProtocolError(Exception):
    """A frame that is not well-formed: torn, oversized, or holding something not plain data."""


if NUMPY:
    class TensorArray(np.ndarray):
        """A torch tensor as the judge sees it: its values, plus the torch dtype it had."""

        torch_dtype: str = ""
        requires_grad: bool = False

        def __array_finalize__(self, obj: Any) -> None:
            self.torch_dtype = getattr(obj, "torch_dtype", "")
            self.requires_grad = getattr(obj, "requires_grad", False)


class Fn:
    """A function given as source text, so the judge can hand it to a worker.

    ``fn("lambda w, x: w * x")`` runs in the judge as a normal callable, and in a worker it
    is compiled there from the same text. ``math``, and ``np`` and ``torch`` where the process
    holds them, are in scope.
    """

    def __init__(self, source: str):
        self.source = source
        self._function: Callable[..., Any] | None = None

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        if self._function is None:
            self._function = compile_function(self.source)
        return self._function(*args, **kwargs)

    def __repr__(self) -> str:
        return f"fn({self.source!r})"


def compile_function(source: str) -> Callable[..., Any]:
    """An expression (``lambda ...``), or one ``def`` statement for a longer function."""
    scope: dict[str, Any] = {"math": math, "__builtins__": __builtins__}
    if NUMPY:
        scope["np"] = np
    torch = sys.modules.get("torch")  # never imported here: only a process that holds it has it
    if torch is not None and "torch" in source:
        scope["torch"] = torch
    if source.lstrip().startswith("def "):
        names = set(scope)
        exec(compile(source, "<check>", "exec"), scope)
        (name,) = set(scope) - names
        return cast("Callable[..., Any]", scope[name])
    return cast("Callable[..., Any]", eval(compile(source, "<check>", "eval"), scope))


# --- framing -------------------------------------------------------------------------


def frame_bytes(header: dict[str, Any], blobs: list[bytes]) -> bytes:
    head = json.dumps(dict(header, blobs=[len(b) for b in blobs]), separators=(",", ":")).encode()
    return b"".join([_LENGTH.pack(len(head)), head, *blobs])


def write_frame(stream: BinaryIO, header: dict[str, Any], blobs: list[bytes]) -> None:
    stream.write(frame_bytes(header, blobs))
    stream.flush()


class Readable(Protocol):
    """What a frame is read from: a binary stream, or the judge's deadline-bound pipe reader."""

    def read(self, size: int, /) -> bytes: ...


def read_frame(stream: Readable, max_bytes: int = MAX_FRAME_BYTES) -> tuple[dict[str, Any], list[bytes]]:
    """Read one frame of at most ``max_bytes``; EOFError when the other side closed, ProtocolError
    when it is malformed."""
    raw = _read_exactly(stream, _LENGTH.size)
    (length,) = _LENGTH.unpack(raw)
    if length > min(MAX_HEADER_BYTES, max_bytes):
        raise ProtocolError(f"a message header of {length} bytes is too large")
    try:
        header = json.loads(_read_exactly(stream, length))
    except (ValueError, RecursionError) as error:
        raise ProtocolError(f"a message header is not valid JSON ({type(error).__name__})") from None
    sizes = header.get("blobs") if isinstance(header, dict) else None
    if not isinstance(sizes, list) or not all(type(s) is int and s >= 0 for s in sizes):
        raise ProtocolError("a message header has no valid blob list")
    if length + sum(sizes) > max_bytes:
        raise ProtocolError(f"a message of {length + sum(sizes)} bytes is larger than {max_bytes}")
    return header, [_read_exactly(stream, size) for size in sizes]


def _read_exactly(stream: Readable, size: int) -> bytes:
    chunks, remaining = [], size
    while remaining:
        chunk = stream.read(remaining)
        if not chunk:
            raise EOFError("the other side closed the channel")
        chunks.append(chunk)
        remaining -= len(chunk)
    return b"".join(chunks)


# --- values ----------------------------------------------------------------------------


class Encoder:
    """Turns a value into a JSON tree plus blobs.

    ``other`` handles what is not plain data: the worker turns it into a handle, the judge
    into a function source or a handle number, or refuses it.
    """

    def __init__(self, other: Callable[[Any, Encoder], Any]):
        self.other = other
        self.blobs: list[bytes] = []

    def encode(self, value: Any) -> Any:
        # Exact builtin behaviour even for subclasses: a student's str/dict subclass must
        # not get to run its own __iter__/__eq__ on our side of the wire.
        if value is None or type(value) is bool:
            return value
        if isinstance(value, int) and not isinstance(value, bool):
            return int.__index__(value)
        if isinstance(value, float):
            return float.__float__(value)
        if isinstance(value, str):
            return str.__str__(value)
        if isinstance(value, list):
            return [self.encode(list.__getitem__(value, i)) for i in range(list.__len__(value))]
        if isinstance(value, tuple):
            return {"$": "tuple", "v": [self.encode(tuple.__getitem__(value, i)) for i in range(tuple.__len__(value))]}
        if isinstance(value, dict):
            items = list(dict.items(value))
            if all(type(k) is str for k, _ in items) and "$" not in dict.keys(value):
                return {k: self.encode(v) for k, v in items}
            return {"$": "dict", "v": [[self.encode(k), self.encode(v)] for k, v in items]}
        if NUMPY:
            if isinstance(value, TensorArray):
                return self._tensor(np.asarray(value).view(np.ndarray), value.torch_dtype, value.requires_grad)
            if isinstance(value, np.ndarray):
                return {"$": "ndarray", "i": self._blob(np.array(value, subok=False, copy=True))}
            if isinstance(value, np.generic):
                return {"$": "scalar", "i": self._blob(np.array(value))}
        torch = sys.modules.get("torch")
        if torch is not None and isinstance(value, torch.Tensor):
            tensor = torch.Tensor.detach(value).cpu()
            dtype = str(tensor.dtype).removeprefix("torch.")
            if tensor.dtype == torch.bfloat16:
                tensor = tensor.float()
            return self._tensor(tensor.resolve_conj().resolve_neg().numpy(), dtype, bool(value.requires_grad))
        return self.other(value, self)

    def _tensor(self, array: np.ndarray, dtype: str, requires_grad: bool) -> dict[str, Any]:
        return {"$": "tensor", "i": self._blob(np.array(array, copy=True)), "dtype": dtype, "grad": requires_grad}

    def _blob(self, array: np.ndarray) -> int:
        if array.dtype.hasobject:
            raise TypeError("an array of Python objects cannot be sent; use a numeric dtype")
        buffer = io.BytesIO()
        np.save(buffer, array, allow_pickle=False)
        self.blobs.append(buffer.getvalue())
        return len(self.blobs) - 1


class Decoder:
    """Rebuilds values from a JSON tree plus blobs.

    ``handle`` maps a handle tag to an object; ``function`` a function tag (None refuses
    it); ``tensors`` says whether tensors become torch tensors (worker) or TensorArrays (judge).
    """

    def __init__(
        self,
        blobs: list[bytes],
        handle: Callable[[dict[str, Any]], Any],
        function: Callable[[str], Any] | None = None,
        torch_tensors: bool = False,
    ):
        self.blobs = blobs
        self.handle = handle
        self.function = function
        self.torch_tensors = torch_tensors

    def decode(self, tree: Any) -> Any:
        try:
            return self._decode(tree)
        except RecursionError:
            raise ProtocolError("a value is nested too deeply") from None

    def _decode(self, tree: Any) -> Any:
        if tree is None or type(tree) in (bool, int, float, str):
            return tree
        if type(tree) is list:
            return [self._decode(v) for v in tree]
        if type(tree) is not dict:
            raise ProtocolError(f"unexpected {type(tree).__name__} in a value")
        tag = tree.get("$")
        if tag is None:
            return {k: self._decode(v) for k, v in tree.items()}
        if tag == "tuple":
            return tuple(self._decode(v) for v in _list(tree.get("v")))
        if tag == "dict":
            pairs = [_pair(p) for p in _list(tree.get("v"))]
            result = {}
            for key, value in pairs:
                key = self._decode(key)
                try:
                    result[key] = self._decode(value)
                except TypeError:
                    raise ProtocolError("a dict key is not hashable") from None
            return result
        if tag == "ndarray":
            return self._array(tree)
        if tag == "scalar":
            return self._array(tree)[()]
        if tag == "tensor":
            array = self._array(tree)
            dtype = str(tree.get("dtype", ""))
            requires_grad = tree.get("grad") is True
            if self.torch_tensors:
                torch = sys.modules.get("torch")  # a worker sent tensors holds torch from its start
                if torch is None:
                    raise ProtocolError("a tensor sent to a process without torch")
                tensor = torch.from_numpy(array)
                if dtype == "bfloat16":
                    tensor = tensor.to(torch.bfloat16)
                return tensor.requires_grad_(requires_grad) if tensor.is_floating_point() else tensor
            marked = array.view(TensorArray)
            marked.torch_dtype, marked.requires_grad = dtype, requires_grad
            return marked
        if tag == "handle":
            return self.handle(tree)
        if tag == "fn" and self.function is not None:
            return self.function(str(tree.get("src", "")))
        raise ProtocolError(f"unknown value tag {tag!r}")

    def _array(self, tree: dict[str, Any]) -> np.ndarray:
        if not NUMPY:
            raise ProtocolError("an array sent to a process without numpy")
        index = tree.get("i")
        if type(index) is not int or not 0 <= index < len(self.blobs):
            raise ProtocolError("an array refers to a blob that is not there")
        return read_npy(self.blobs[index])


ARRAY_KINDS = "biufcUS"  # bool, integers, floats, complex, strings: never objects, records or zip data


def read_npy(blob: bytes) -> np.ndarray:
    """One array from a .npy blob whose header says exactly what the blob holds.

    Checked before anything is allocated: the magic and version, a plain dtype, and a
    shape whose size times the item size is the number of bytes that follow. So no
    header can claim a huge shape (numpy would allocate it before reading), and no
    .npz (zip) or pickle gets parsed.
    """
    stream = io.BytesIO(blob)
    npy_format: Any = np.lib.format  # numpy ships these readers untyped
    try:
        version = npy_format.read_magic(stream)
        if version == (1, 0):
            shape, fortran, dtype = npy_format.read_array_header_1_0(stream)
        elif version in ((2, 0), (3, 0)):
            shape, fortran, dtype = npy_format.read_array_header_2_0(stream)
        else:
            raise ValueError(f"version {version}")
    except (ValueError, TypeError, SyntaxError, OverflowError, MemoryError, EOFError, KeyError) as error:
        raise ProtocolError(f"an array is not a valid .npy blob ({type(error).__name__})") from None
    if dtype.kind not in ARRAY_KINDS or dtype.fields is not None or dtype.subdtype is not None or dtype.hasobject:
        raise ProtocolError(f"an array of dtype kind {dtype.kind!r} cannot be sent")
    if not isinstance(shape, tuple) or not all(type(n) is int and n >= 0 for n in shape):
        raise ProtocolError("an array header holds no valid shape")
    count = 1
    for n in shape:
        count *= n
    data = memoryview(blob)[stream.tell():]
    if count * dtype.itemsize != len(data):
        raise ProtocolError(f"an array header promises {count * dtype.itemsize} bytes, the blob holds {len(data)}")
    array = np.frombuffer(data, dtype=dtype, count=count).reshape(shape, order="F" if fortran else "C")
    return array.copy(order="K")  # writable, owning its memory


def _list(value: Any) -> list[Any]:
    if type(value) is not list:
        raise ProtocolError("a tagged value has no list")
    return value


def _pair(value: Any) -> tuple[Any, Any]:
    if type(value) is not list or len(value) != 2:
        raise ProtocolError("a dict item is not a [key, value] pair")
    return value[0], value[1]


def digest(tree: Any, blobs: list[bytes]) -> str:
    """A fingerprint of an encoded value, to tell whether a worker changed its inputs."""
    h = hashlib.sha256(json.dumps(tree, separators=(",", ":")).encode())
    for blob in blobs:
        h.update(blob)
    return h.hexdigest()
