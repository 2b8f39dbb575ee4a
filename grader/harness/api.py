"""The checks API: what an exercise's checks.py is written against.

    from grader.harness import check, perf, close, equal, raises, fn, Race

    @check(points=2)
    def follows_the_dependencies(student, reference, rng):
        got = run(student, ...)          # calls into the student's program (another process)
        want = run(reference, ...)       # the reference solution, in a trusted process
        close(got, want)

``student`` and ``reference`` are the two programs' modules; attribute access and calls
go to them and come back as plain data (numbers, strings, lists, dicts, numpy arrays,
tensors as arrays) or as handles to objects that stay where they were made. ``rng`` is a
numpy Generator drawn from the per-submission secret seed.
"""
from __future__ import annotations

import cmath
import contextlib
import dataclasses
import math
from collections.abc import Callable, Iterator
from typing import Any, NoReturn

try:
    import numpy as np
except ModuleNotFoundError:  # loaded with the package by the student's process of an exercise that
    pass  # bans numpy (the rules at run time in grader/contract.py), which never runs a check

from grader.harness import wire
from grader.harness.messages import PHRASES, Localized, Message, check_localized, localize
from grader.harness.wire import Fn

# --- what a check can end with ---------------------------------------------------------


class CheckFailed(AssertionError):
    """The student's answer is wrong: ``reason`` says how (shown for visible checks).

    Raised by ``fail`` and the comparisons; ``reason`` is a messages.Message whose texts are
    in every language, and ``str()`` its English text. A plain string is English only: the
    judge's own code may still pass one whose form messages.MESSAGES knows (the platform
    recognises it); a checks.py may not (the content lint refuses it).
    """

    def __init__(self, reason: Message | str):
        if isinstance(reason, str):
            reason = Message("check.failed", detail=reason)
        super().__init__(str(reason))
        self.reason = reason


class ProgramError(Exception):
    """A program raised while the judge called it (the student's, or the reference's)."""

    # Set only on errors a program reported over the wire (programs.py); read with getattr.
    syntax: bool
    errno: int | None

    def __init__(self, side: str, type_name: str, message: str, traceback: str = "", line: int | None = None):
        super().__init__(f"{type_name}: {message}" if message else type_name)
        self.side = side
        self.type_name = type_name
        self.message = message
        self.traceback = traceback
        self.line = line


class ProgramStopped(BaseException):
    """A program stopped answering: it died, ran out of time or memory, or printed too much.

    A BaseException so that no ``except Exception`` in a check can swallow it. ``reason``
    is a messages.Message (an id with parameters); ``message`` its English text.
    """

    def __init__(self, side: str, kind: str, reason: Message):
        super().__init__(str(reason))
        self.side = side
        self.kind = kind
        self.reason = reason
        self.message = str(reason)


def fail(message: dict[str, str], /, **params: Any) -> NoReturn:
    """End the check as a wrong answer, saying why in every language::

        fail({"en": "expected {n} kernels, got {k}", "zh-hans": "应有 {n} 个内核，实际为 {k} 个"}, n=3, k=len(got))

    Each language's template is filled with ``params`` by ``str.format`` (``{x!r}``,
    ``{ratio:.2f}``; ``{{`` for a brace); both languages must name the same placeholders,
    and a localized parameter (from ``localize``) is filled in its own language.
    """
    raise CheckFailed(Message("check.failed", detail=localize(message, **params)))


def fn(source: str) -> Fn:
    """A function both programs can run, given as source text: ``fn("lambda a, b: a + b")``."""
    return Fn(source)


def tensor(values: Any, dtype: str = "float64", requires_grad: bool = False) -> wire.TensorArray:
    """A torch tensor to send to a program, made without importing torch in the judge."""
    result = np.array(values, dtype=dtype).view(wire.TensorArray)
    result.torch_dtype, result.requires_grad = dtype, requires_grad
    return result


def run_in(program: Any, function: Fn, *args: Any) -> Any:
    """Run ``function(*args)`` inside ``program``'s process, e.g. to inspect a student's object
    (``run_in(student, fn("lambda g: len(g._plan)"), graph)``). Plain data comes back.

    Structural facts measured this way come from the student's own process, which can forge
    them; prefer ``memory_held`` or ``peak_memory_bytes``, outputs, and for "one graph" the
    captured graph that grader.harness.graphs (torch) or grader.harness.engine_graphs (the
    static engine) runs on the trusted side, for anything a verdict hinges on.
    """
    return program._program.call(None, None, (function, *args), {})


@dataclasses.dataclass(frozen=True)
class InProgram:
    """A function that runs inside one program's process (see ``inside``)."""

    program: Any  # grader.harness.programs.Program
    function: Fn


def inside(program: Any, function: Fn) -> InProgram:
    """``function`` run inside ``program``'s process, for a Race to time:
    ``Race(student=inside(student, fn("lambda g: g.run()")), ...)``. Its arguments are the
    race's inputs (or what ``setup`` made of them)."""
    return InProgram(program._program, function)


def gradients(function: Any, *args: Any) -> list[Any]:
    """Gradients of sum(function(*args)) with respect to each ``tensor(..., requires_grad=True)``
    argument, computed by torch.autograd in the function's own program."""
    owner = function.owner
    value, _ = owner._program.timed_call(owner._number, function.name, args, {}, grad=True)
    return list(value)


def memory_held(program: Any, function: Fn, *args: Any) -> tuple[int, Any]:
    """Run ``function(*args)`` in a fresh worker of ``program`` and measure, from the judge, the
    memory its processes hold once the call has returned (``Program.held_memory_bytes``):
    what the program keeps for later, counted where its code cannot reach. Returns (bytes,
    what the function returned); return a handle to keep what it made alive for a later
    ``run_in``. Everything the program's earlier calls made is gone: handles from before die.
    """
    with program._program.others_stopped():  # the sandbox's count is every program's
        program._program.restart()
        returned = run_in(program, function, *args)
        held = int(program._program.held_memory_bytes())
    return held, returned


def peak_memory_bytes(program: Any) -> int:
    """The program's peak resident memory so far, measured by the judge."""
    return int(program._program.peak_memory_bytes())


# --- registering cases -----------------------------------------------------------------


@dataclasses.dataclass
class Case:
    name: str
    function: Callable[..., Any]
    points: float
    is_perf: bool
    visible: bool | None  # None: as exercise.toml says
    title: dict[str, str] | None = None  # {"en": ..., "zh-hans": ...}: what the student reads


CASES: list[Case] = []


def check(
    points: float = 1, visible: bool | None = None, title: dict[str, str] | None = None
) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Mark ``def name(student, reference, rng)`` as a correctness check worth ``points``.

    ``title`` is what the verdict page shows instead of the function's name, per language:
    ``title={"en": "Runs the article's example", "zh-hans": "运行文章中的例子"}``.
    """

    def register(function: Callable[..., Any]) -> Callable[..., Any]:
        CASES.append(Case(function.__name__, function, float(points), False, visible, title))
        return function

    return register


def perf(
    points: float = 1, title: dict[str, str] | None = None, **threshold: Any
) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Mark ``def name(student, reference, rng) -> Race`` as a performance case.

    Its threshold and baseline come from exercise.toml ``[perf.<name>]``; ``title`` as for @check.
    """

    def register(function: Callable[..., Any]) -> Callable[..., Any]:
        CASES.append(Case(function.__name__, function, float(points), True, None, title))
        return function

    return register


@dataclasses.dataclass
class Race:
    """What a perf case times: ``student(*args)`` against a baseline on the same fresh args.

    ``inputs(rng)`` makes a new argument tuple for every timed pair; ``check(got, want)``
    compares every timed output of the student with the baseline's. ``baselines`` names
    further baselines (e.g. a naive implementation) that exercise.toml may pick.

    Every timed call must do the whole work and be checked: never time a call whose
    answer was known before it started (a graph it already ran, no inputs at all).
    ``setup(program, args)``, when given, runs untimed before each timed call and turns
    the pair's inputs into that side's own arguments (e.g. builds a fresh graph in that
    program and returns handles to it); ``program`` is the side's module (the reference's
    for any baseline), and handles it returns are released after the call.
    """

    student: Callable[..., Any]
    reference: Callable[..., Any]
    inputs: Callable[[np.random.Generator], tuple[Any, ...]]
    check: Callable[[Any, Any], None] | None = None
    baselines: dict[str, Callable[..., Any]] = dataclasses.field(default_factory=dict)
    setup: Callable[[Any, tuple[Any, ...]], tuple[Any, ...]] | None = None

    def baseline(self, name: str) -> Callable[..., Any]:
        offered = {"reference": self.reference, **self.baselines}
        if name not in offered:
            raise KeyError(f"exercise.toml asks for baseline {name!r}; this perf case offers {', '.join(offered)}")
        return offered[name]


# --- comparing answers -----------------------------------------------------------------

# (rtol, atol) per dtype, as torch.testing uses: loose enough for reordered float sums.
TOLERANCES: dict[str, tuple[float, float]] = {
    "float16": (1e-3, 1e-5),
    "bfloat16": (1.6e-2, 1e-5),
    "float32": (1.3e-6, 1e-5),
    "float64": (1e-7, 1e-7),
    "complex64": (1.3e-6, 1e-5),
    "complex128": (1e-7, 1e-7),
}


def close(
    got: Any, want: Any, *, rtol: float | None = None, atol: float | None = None, what: Localized | None = None
) -> None:
    """``got`` matches ``want``: same structure, keys, shapes and dtypes; floats within tolerance.

    NaN and infinity must sit at the same positions. Tolerances default per dtype. ``what``
    names the value in every language: ``what={"en": "the output", "zh-hans": "输出"}``.
    """
    _compare(got, want, rtol, atol, _what(what, "result"))


def equal(got: Any, want: Any, *, what: Localized | None = None) -> None:
    """``got`` equals ``want`` exactly, including dtypes."""
    _compare(got, want, 0.0, 0.0, _what(what, "result"))


@contextlib.contextmanager
def raises(*fragments: str, what: Localized | None = None) -> Iterator[dict[str, Any]]:
    """The block must make the program raise; each fragment must appear in the error message.

    ``with raises("q"): student_graph.execute({})`` - an error that names the missing input.
    """
    named = _what(what, "your_code")
    seen: dict[str, Any] = {}
    try:
        yield seen
    except ProgramError as error:
        seen["error"] = error
        missing = [f for f in fragments if f not in error.message]
        if missing:
            _fail("raises.wrong_message", what=named, error=error.type_name, message=_short(error.message),
                  fragments=", ".join(repr(m) for m in missing))
    else:
        if fragments:
            _fail("raises.returned_mentioning", what=named, fragments=", ".join(repr(f) for f in fragments))
        _fail("raises.returned", what=named)


def _what(what: object, default: str) -> Localized:
    """A value's name in every language (braces are text here, not placeholders)."""
    return PHRASES[default] if what is None else check_localized(what, is_template=False)


def _fail(message_id: str, **params: Any) -> NoReturn:
    raise CheckFailed(Message(message_id, **params)) from None


def _part(what: Localized, suffix: str) -> Localized:
    """``what`` followed by an index or key, in every language: result['z'], 结果[0]; inside
    the code span when ``what`` ends with one (`execute(feed)['z']`)."""
    return {language: text[:-1] + suffix + "`" if text.endswith("`") else text + suffix
            for language, text in what.items()}


def _compare(got: Any, want: Any, rtol: float | None, atol: float | None, what: Localized) -> None:
    if _is_handle(got) and not _is_handle(want):
        _fail("compare.returned_handle", what=what, expected=_describe(want), got=repr(got))
    if isinstance(want, dict):
        if not isinstance(got, dict):
            _fail("compare.not_a_dict", what=what, got=_describe(got))
        missing = [k for k in want if k not in got]
        if missing:
            _fail("compare.missing_key", what=what, key=repr(missing[0]))
        extra = [k for k in got if k not in want]
        if extra:
            _fail("compare.unexpected_key", what=what, key=repr(extra[0]))
        for key in want:
            _compare(got[key], want[key], rtol, atol, _part(what, f"[{key!r}]"))
        return
    if isinstance(want, list | tuple):
        if not isinstance(got, list | tuple):
            _fail("compare.not_a_sequence", what=what, expected=type(want).__name__, got=_describe(got))
        if len(got) != len(want):
            _fail("compare.length", what=what, expected=len(want), got=len(got))
        for index, (g, w) in enumerate(zip(got, want, strict=True)):
            _compare(g, w, rtol, atol, _part(what, f"[{index}]"))
        return
    if isinstance(want, np.ndarray) and want.ndim > 0 or isinstance(want, wire.TensorArray):
        _compare_arrays(got, want, rtol, atol, what)
        return
    if isinstance(want, bool | np.bool_) or want is None or isinstance(want, str | bytes):
        if type(got) is not type(want) or got != want:
            _fail("compare.expected_got", what=what, expected=_short(repr(want)), got=_describe(got))
        return
    if isinstance(want, int | float | np.number):
        _compare_numbers(got, want, rtol, atol, what)
        return
    if isinstance(want, np.ndarray):  # a 0-d array
        _compare_arrays(got, want, rtol, atol, what)
        return
    if got != want:
        _fail("compare.expected_got", what=what, expected=_short(repr(want)), got=_describe(got))


def _compare_numbers(got: Any, want: Any, rtol: float | None, atol: float | None, what: Localized) -> None:
    if isinstance(got, bool | np.bool_) or not isinstance(got, int | float | np.number):
        _fail("compare.not_a_number", what=what, expected=_item(want), got=_describe(got))
    if isinstance(want, int | np.integer) and (
        isinstance(got, int | np.integer) or (rtol is None and atol is None and not np.iscomplexobj(got))
    ):
        # An integer answer is exact: a float passes only when it is that integer, since the
        # float tolerance grows with the number (10**9 + 50 would pass), unless the check set one.
        if not (math.isfinite(float(got)) and float(got).is_integer() and int(got) == int(want)):
            _fail("compare.expected_got", what=what, expected=str(want), got=str(got))
        return
    g, w = complex(got), complex(want)
    if cmath.isnan(w) or cmath.isnan(g):
        if not (cmath.isnan(w) and cmath.isnan(g)):
            _fail("compare.nan", what=what, expected=_item(want), got=_item(got))
        return
    default = TOLERANCES["float64"]
    r = default[0] if rtol is None else rtol
    a = default[1] if atol is None else atol
    if cmath.isinf(w) or cmath.isinf(g):
        if g != w:
            _fail("compare.expected_got", what=what, expected=_item(want), got=_item(got))
        return
    if abs(g - w) > a + r * abs(w):
        _fail("compare.difference", what=what, expected=_item(want), got=_item(got), difference=f"{abs(g - w):.3g}")


def _compare_arrays(got: Any, want: np.ndarray, rtol: float | None, atol: float | None, what: Localized) -> None:
    if isinstance(want, wire.TensorArray):
        if not isinstance(got, wire.TensorArray):
            _fail("compare.not_a_tensor", what=what, got=_describe(got))
        if got.torch_dtype != want.torch_dtype:
            _fail("compare.tensor_dtype", what=what, expected=str(want.torch_dtype), got=str(got.torch_dtype))
    elif not isinstance(got, np.ndarray) or isinstance(got, wire.TensorArray):
        _fail("compare.not_an_array", what=what, got=_describe(got))
    if got.shape != want.shape:
        _fail("compare.shape", what=what, expected=str(tuple(want.shape)), got=str(tuple(got.shape)))
    if got.dtype != want.dtype:
        _fail("compare.dtype", what=what, expected=str(want.dtype), got=str(got.dtype))
    g, w = np.asarray(got).view(np.ndarray), np.asarray(want).view(np.ndarray)
    if g.dtype.kind not in "fc":
        wrong = g != w
        if np.any(wrong):
            _fail_at(what, np.argwhere(wrong)[0], g, w, int(np.count_nonzero(wrong)))
        return
    for message_id, test in (("compare.nan_positions", np.isnan), ("compare.inf_positions", np.isinf)):
        mismatch = test(g) != test(w)
        if np.any(mismatch):
            index = tuple(int(i) for i in np.argwhere(mismatch)[0])
            _fail(message_id, what=what, index=str(index), expected=_item(w[index]), got=_item(g[index]))
    if np.any(np.isinf(w) & (g != w)):
        index = tuple(int(i) for i in np.argwhere(np.isinf(w) & (g != w))[0])
        _fail("compare.inf_at", what=what, index=str(index), expected=_item(w[index]), got=_item(g[index]))
    dtype_name = getattr(want, "torch_dtype", "") or w.dtype.name
    default = TOLERANCES.get(dtype_name, TOLERANCES["float64"])
    r = default[0] if rtol is None else rtol
    a = default[1] if atol is None else atol
    finite = np.isfinite(w)
    with np.errstate(invalid="ignore", over="ignore"):
        wrong = finite & ~(np.abs(g - w) <= a + r * np.abs(w))
    if np.any(wrong):
        _fail_at(what, np.argwhere(wrong)[0], g, w, int(np.count_nonzero(wrong)), rtol=r, atol=a)


def _fail_at(what: Localized, index: Any, g: np.ndarray, w: np.ndarray, count: int, **tol: float) -> NoReturn:
    index = tuple(int(i) for i in index)
    at = {"what": what, "count": count, "size": int(w.size), "index": str(index),
          "expected": _item(w[index]), "got": _item(g[index])}
    if tol:
        _fail("compare.elements_within", rtol=f"{tol['rtol']:g}", atol=f"{tol['atol']:g}", **at)
    _fail("compare.elements", **at)


def _item(value: Any) -> str:
    """A numpy scalar as a student reads it: 2.0, not np.float64(2.0)."""
    return repr(value.item() if isinstance(value, np.generic) else value)


def _is_handle(value: Any) -> bool:
    return getattr(value, "is_remote_object", False) is True


def _describe(value: Any) -> str:
    if _is_handle(value):
        return repr(value)
    # As code, so that it reads the same in every language.
    if isinstance(value, wire.TensorArray):
        return f"tensor(shape={tuple(value.shape)}, dtype=torch.{value.torch_dtype})"
    if isinstance(value, np.ndarray):
        return f"array(shape={value.shape}, dtype={value.dtype})"
    return _short(repr(value))


def _short(text: str, limit: int = 200) -> str:
    return text if len(text) <= limit else text[: limit - 3] + "..."
