"""A third red team's attacks on the judge, on docker-runc, docker-runsc and local.

Each test plants one attack as a student would (its only input is the code it submits) and
asserts the SAFE outcome. An attack that works stays here as a strict xfail whose reason says
how it works, so the suite stays green and the hole is on record. The reviewer knew only
README.md and the code. Three goals: a wrong submission ACCEPTED, a slow submission ranked
first, hidden data read.

Most attacks run on local and docker-runc (``two_backends``); the ones that depend on what a
backend preloads or how it clocks run on all three (``every_backend``).
"""
from __future__ import annotations

import pytest

from grader.contract import Kind
from grader.host import grade, load_exercise
from testbed.exercises import TOML
from tests.grader.factories import REPO
from tests.sandbox.backends import BACKENDS, backend_sandbox
from tests.security.test_redteam_judge import PERF_TOML, SOLUTION, exercise, perf_case, summary

EXERCISES = REPO / "exercises" / "coding"


@pytest.fixture(params=["local", "docker-runc"])
def two_backends(request, requires):
    return backend_sandbox(request.param, requires)


@pytest.fixture(params=BACKENDS)
def every_backend(request, requires):
    return backend_sandbox(request.param, requires)


def failed(verdict) -> list[str]:
    return [c.name for c in verdict.checks if not c.passed]


# --- 1. the rules ([[rules]]): a banned library reached without importing it --------------------
#
# The round found a banned module reachable through objects the student's process held (the
# guard hid it from sys.modules but kept it alive) and imported for it by harness code. Closed
# as a class: the student's worker of an exercise with rules is a fresh interpreter that never
# loads a banned module, drops a banned submodule its frameworks imported, and refuses every
# later import of one, whoever asks (the rules at run time in grader/contract.py). What a library keeps of a dropped
# submodule is the one sibling left (the last test of this section). All on every backend: the
# student's worker starts differently there (a fresh interpreter, under gVisor too).

SHAPE_INFERENCE = EXERCISES / "shape-inference"
BROADCAST_AUTOGRAD = EXERCISES / "broadcast-autograd"
DOUBLE_BACKWARD = EXERCISES / "double-backward"
CHECKPOINT = EXERCISES / "checkpoint-rematerialise"

NUMPY_MUTANT = (SHAPE_INFERENCE / "mutants" / "numpy_broadcasts_the_shapes.py").read_text()
assert "\nimport numpy as np\n" in NUMPY_MUTANT

# numpy as the worker's own wire module would hold it: a module global, no import event, and
# the static reading sees `grader.harness.wire.np`, which is no banned name.
NUMPY_FROM_THE_WIRE = NUMPY_MUTANT.replace(
    "\nimport numpy as np\n", "\nfrom grader.harness import wire as _w\nnp = _w.np\n")

# numpy found among the live objects, had the process ever loaded it: gc.get_objects() lists
# every module object.
NUMPY_FROM_GC = NUMPY_MUTANT.replace("\nimport numpy as np\n", """
import gc

_NAME = "num" + "py"
np = next(o for o in gc.get_objects() if type(o).__name__ == "module" and getattr(o, "__name__", None) == _NAME)
""")


def test_a_banned_module_is_not_reachable_through_the_harness_modules(every_backend):
    verdict = grade(load_exercise(SHAPE_INFERENCE), NUMPY_FROM_THE_WIRE, every_backend)
    assert verdict.verdict != Kind.ACCEPTED, summary(verdict)


def test_a_banned_module_is_not_found_among_the_live_objects(every_backend):
    verdict = grade(load_exercise(SHAPE_INFERENCE), NUMPY_FROM_GC, every_backend)
    assert verdict.verdict != Kind.ACCEPTED, summary(verdict)


def _torch_through_compile_function() -> str:
    """test_redteam_judge's torch-backed Tensor for broadcast-autograd, with torch imported by
    grader.harness.wire.compile_function (which runs `import torch` when the source names it)."""
    import re

    from tests.security.test_redteam_judge import TORCH_DOES_IT

    source = TORCH_DOES_IT.replace(
        "import torch\n", "from grader.harness import wire as _w\nT = _w.compile_function('lambda: tor' + 'ch')()\n")
    return re.sub(r"\btorch\.", "T.", source)


def test_a_banned_module_is_not_imported_by_a_harness_function_for_the_student(every_backend):
    verdict = grade(load_exercise(BROADCAST_AUTOGRAD), _torch_through_compile_function(), every_backend)
    assert verdict.verdict != Kind.ACCEPTED, summary(verdict)


# double-backward bans torch.autograd.functional and torch.func, which `import torch` imports;
# were the module object kept, it would be found among the live objects and its hvp would do
# the exercise.
HVP_FROM_GC = '''
import gc

import torch

_NAME = ".".join(["torch", "autograd", "func" + "tional"])
_library = next(o for o in gc.get_objects() if type(o).__name__ == "module" and getattr(o, "__name__", None) == _NAME)
_hvp = getattr(_library, "h" + "vp")


def hvp(f, x, v):
    return _hvp(f, x.detach(), v)[1]


def penalised_loss(loss_fn, w, weight):
    loss = loss_fn(w)
    (g,) = torch.autograd.grad(loss, w, create_graph=True)
    return loss + weight * (g * g).sum()
'''


def test_a_banned_submodule_is_not_found_among_the_live_objects(every_backend):
    verdict = grade(load_exercise(DOUBLE_BACKWARD), HVP_FROM_GC, every_backend)
    assert verdict.verdict != Kind.ACCEPTED, summary(verdict)



# checkpoint-rematerialise bans torch.utils.checkpoint, which `import torch` imports too; the
# guard drops the module, but torch's higher-order ops keep two of its classes, whose methods'
# globals are the module's namespace: found among the live objects, its CheckpointFunction did
# the exercise. Closed: sealing empties the namespace of every definition no other module holds
# (contract.seal_rules).
CHECKPOINT_FROM_GC = '''
import gc

import torch

_NAME = ".".join(["torch", "utils", "check" + "point"])
_namespace = next(o for o in gc.get_objects() if type(o) is dict and o.get("__name__") == _NAME)


def checkpoint(fn, *args):
    # The reentrant implementation: an autograd.Function of that module that imports nothing.
    return _namespace["CheckpointFunction"].apply(fn, True, *args)
'''


def test_a_banned_submodule_that_torch_keeps_parts_of_is_not_found_among_the_live_objects(every_backend):
    verdict = grade(load_exercise(CHECKPOINT), CHECKPOINT_FROM_GC, every_backend)
    assert verdict.verdict != Kind.ACCEPTED, summary(verdict)

# --- 2. a fact measured inside the student's process -----------------------------------------

# checkpoint-rematerialise counted the bytes autograd saves with a probe that ran in the
# student's process through torch.autograd.graph.saved_tensors_hooks. The student replaces that
# class: the probe's pack hook never runs, every activation is kept, and the count was 0 (the
# saves_every_activation mutant scored 1.0). Closed: the judge reads the memory a fresh worker
# holds after a chain of blocks (grader.harness.memory_held); tests/security/
# test_trusted_measures.py keeps the attacks on that measure, and static-while-loop's graph,
# which was run in the student's process too, is now run by the trusted side.
UNCOUNTED_ACTIVATIONS = '''
import torch
import torch.autograd.graph as _graph

_Hooks = _graph.saved_tensors_hooks


class _Unseen(_Hooks):
    def __init__(self, pack_hook, unpack_hook):
        super().__init__(lambda tensor: tensor, unpack_hook)


_graph.saved_tensors_hooks = _Unseen


def checkpoint(fn, *args):
    return fn(*args)  # no checkpoint at all: the saves_every_activation mutant
'''


def test_a_byte_count_taken_in_the_students_process_cannot_be_forged(two_backends):
    verdict = grade(load_exercise(CHECKPOINT), UNCOUNTED_ACTIVATIONS, two_backends)
    assert verdict.verdict != Kind.ACCEPTED, summary(verdict)


# --- 3. comparisons: values the student shapes ------------------------------------------------

COMPARE_CHECKS = """\
from grader.harness import check, close, equal

@check(points=1)
def adds_small_numbers(student, reference, rng):
    close(student.add(0.5, 1), reference.add(0.5, 1))

@check(points=1)
def counts(student, reference, rng):
    close(student.count(), reference.count())

@check(points=1)
def vector(student, reference, rng):
    close(student.vector(), reference.vector())

@check(points=1)
def label(student, reference, rng):
    equal(student.label(), reference.label())
"""
COMPARE_SOLUTION = SOLUTION + """
import numpy as np

def count():
    return 10**9

def vector():
    return np.array([1.0, 2.0, 3.0])

def label():
    return "ok"
"""


def comparison_exercise(tmp_path):
    return exercise(tmp_path, checks=COMPARE_CHECKS, solution=COMPARE_SOLUTION, toml=TOML)


# Wrong values dressed as objects that claim equality to anything.
EQUALS_EVERYTHING = SOLUTION + """
import numpy as np

class _Yes(float):
    def __eq__(self, other):
        return True
    __ne__ = lambda self, other: False
    __hash__ = float.__hash__

class _YesArray(np.ndarray):
    def __eq__(self, other):
        return np.ones(self.shape, dtype=bool)
    def __ne__(self, other):
        return np.zeros(self.shape, dtype=bool)
    def __sub__(self, other):
        return np.zeros(self.shape)
    def __array__(self, dtype=None, copy=None):
        return np.array([1.0, 2.0, 3.0])

class _YesStr(str):
    def __eq__(self, other):
        return True
    __ne__ = lambda self, other: False
    __hash__ = str.__hash__

def count():
    return 12345

def vector():
    return np.array([7.0, 7.0, 7.0]).view(_YesArray)

def label():
    return _YesStr("wrong")
"""


def test_objects_that_claim_equality_do_not_pass(tmp_path, two_backends):
    verdict = grade(comparison_exercise(tmp_path), EQUALS_EVERYTHING, two_backends)
    assert failed(verdict) == ["counts", "vector", "label"], summary(verdict)


# NaN where numbers are expected: NaN != NaN tricks, and a NaN that "matches" a number.
NAN_ANSWERS = SOLUTION + """
import numpy as np

def count():
    return float("nan")

def vector():
    return np.array([float("nan")] * 3)

def label():
    return "ok"
"""


def test_nan_answers_do_not_pass(tmp_path, two_backends):
    verdict = grade(comparison_exercise(tmp_path), NAN_ANSWERS, two_backends)
    assert failed(verdict) == ["counts", "vector"], summary(verdict)


# Lazy answers: objects whose conversions would compute the right value later, in the judge or
# in the student's process outside any timed window. They cross as handles, never as values.
LAZY_ANSWERS = SOLUTION + """
import numpy as np

class _Later:
    def __float__(self):
        return 1e9
    def __index__(self):
        return 10**9
    def __array__(self, dtype=None, copy=None):
        return np.array([1.0, 2.0, 3.0])

def count():
    return _Later()

def vector():
    return _Later()

def label():
    return "ok"
"""


def test_lazy_answers_cross_as_handles_and_fail(tmp_path, two_backends):
    verdict = grade(comparison_exercise(tmp_path), LAZY_ANSWERS, two_backends)
    assert failed(verdict) == ["counts", "vector"], summary(verdict)


# A count that is off by 50: right as a float within close()'s default rtol of 1e-7.
FLOAT_FOR_AN_INTEGER = SOLUTION + """
import numpy as np

def count():
    return float(10**9 + 50)

def vector():
    return np.array([1.0, 2.0, 3.0])

def label():
    return "ok"
"""


# Closed: an integer answer is compared exactly (grader/harness/api.py _compare_numbers).
def test_a_wrong_integer_does_not_pass_as_a_close_float(tmp_path, two_backends):
    verdict = grade(comparison_exercise(tmp_path), FLOAT_FOR_AN_INTEGER, two_backends)
    assert "counts" in failed(verdict), summary(verdict)


# --- 4. the clock: a window that falls back to the wall clock --------------------------------

# 18 ms of CPU per call (4.5x the baseline's 4 ms of wall-clock burn), split between this process and a helper
# started at import, which burn side by side; a thread born in each window made the judge
# drop the CPU count for that window (a task was born) and take its wall time, about 9 ms
# (2.3x) on a host with an idle second core; on gVisor the wall clock always decided. The
# reviewer got docker-runsc ACCEPTED 2 of 2 (3.06x and 3.11x, 18 ms of CPU per call against
# the baseline's 4 ms). Closed: a window with a birth is timed by the lent cgroup's CPU, which
# counts tasks born and ended in it, and where the wall clock decides (gVisor), the CPU the
# side's processes were seen to use is its floor (grader/harness/programs.py, Stopwatch).
PARALLEL_WALL = SOLUTION.split("def work")[0] + '''
import os
import threading


def spend(seconds):  # CPU seconds of this process, not wall seconds: no load can shorten them
    end = time.process_time() + seconds
    while time.process_time() < end:
        pass

_ask_r, _ask_w = os.pipe()
_done_r, _done_w = os.pipe()
if os.fork() == 0:
    while os.read(_ask_r, 1):
        spend(0.009)
        os.write(_done_w, b"x")
    os._exit(0)


def work(n):
    os.write(_ask_w, b"x")
    spend(0.009)
    threading.Thread(target=int).start()
    os.read(_done_r, 1)
    return n * 2
'''

# At most 2x: what the attack buys is the half of its time that working side by side hides.
# On gVisor each call's wall time also holds the exchange's own cost (1-2 ms), which brings
# 18 ms against the baseline's 4 ms near 3x, the usual limit here, with or without the attack.
AT_MOST_TWICE = PERF_TOML.replace("at_most = 3.0", "at_most = 2.0")


def test_a_window_with_a_birth_does_not_time_parallel_work_by_its_wall_clock(tmp_path, every_backend):
    verdict = grade(exercise(tmp_path, toml=AT_MOST_TWICE), PARALLEL_WALL, every_backend)
    case = perf_case(verdict)
    # The student's CPU per call is 18 ms whatever the load; its measured time must not be less.
    assert case.get("student_median_s") is not None and case["student_median_s"] >= 0.9 * 0.018, case
    assert verdict.verdict == Kind.TOO_SLOW, (summary(verdict), case)
    if verdict.backend != "docker-runsc":
        # Whatever the load: the lent cgroup counts the tasks born (and ended) in a window, so
        # no window falls back to the wall clock (gVisor has no per-task clock to fall back from).
        assert case["clock"] == "cpu" and case["wall_fallbacks"] == 0, case


# --- 5. the board: re-rolling the noise by resubmitting the same code --------------------------
#
# The student sees each verdict and decides whether to submit again, so "the latest grading of
# the same code" was the luckiest: resubmit until a grading comes out lucky, then stop (optimal
# stopping). Closed: every counted grading of the same code is pooled, and the entry shows the
# pool's (upper) median (leaderboards.services.pooled), so a lucky draw is outvoted.


@pytest.mark.django_db
def test_resubmitting_the_same_code_until_a_lucky_grading_does_not_rank_first():
    from leaderboards.selectors import exercise_board
    from tests.platform import classroom as make

    ex = make.exercise()
    code = "def f():\n    return 1\n"
    honest, roller = make.user("honest", pseudonym="honest"), make.user("roller", pseudonym="roller")
    make.graded(honest, ex, ratio=1.0, interval=(0.8, 1.25), code=f"# honest\n{code}")
    for lucky in (1.05, 0.95, 1.0, 0.6):  # the same code each time; stop after the lucky one
        make.graded(roller, ex, ratio=lucky, interval=(lucky * 0.8, lucky * 1.25), code=code)
    board = exercise_board(ex, viewer=honest)
    ranks = {row.user_id: row.rank_label for row in board.rows}
    assert ranks[roller.id] == ranks[honest.id], ranks  # the same speed: never ranked apart
    assert board.rows[0].user_id == honest.id  # equal medians: the one that came in first


# --- 6. the board: a wide interval listed first --------------------------------------------------

# Code that is slow on most inputs and fast on a few, 0.3x the baseline on 3 inputs in 10 and
# 2.5x on the rest, in test_redteam_judge's exercise (the baseline burns 4 ms):
#
#     def work(n):
#         burn(0.0012 if n % 10 < 3 else 0.010)
#         return n * 2
#
# was ACCEPTED on docker-runc at 2.4x (interval 0.32-2.9, n=10: the interval of 10 pairs is
# their whole range), beside the honest solution at 0.98x (0.94-1.01). Its timing depends on
# the machine, so the board's half is tested below with those numbers planted. The board used
# to list full scores by the interval's low end and rank them by it (no one's high end below
# 0.32): both '=1', the slow one first. Closed: listed by the median ratio, and an entry is
# behind another only by its own median against the other's interval (leaderboards.selectors),
# so width never buys a place.


@pytest.mark.django_db
def test_a_wide_interval_does_not_list_slow_code_first():
    from leaderboards.selectors import exercise_board
    from tests.platform import classroom as make

    ex = make.exercise()
    honest, spread = make.user("honest", pseudonym="honest"), make.user("spread", pseudonym="spread")
    make.graded(honest, ex, ratio=0.98, interval=(0.94, 1.01), code="def f():\n    return 1\n")
    make.graded(spread, ex, ratio=2.4, interval=(0.32, 2.9), code="def f():\n    return 2\n")
    board = exercise_board(ex, viewer=honest)
    shown = [(row.user_id, row.rank_label, row.ratio) for row in board.rows]
    assert [(user_id, rank) for user_id, rank, _ in shown] == [(honest.id, "1"), (spread.id, "2")], shown


# --- 7. making the baseline slower: memory pressure in the shared sandbox -------------------------

# The baseline touches 32 MB per call. The student does 10x that, and at import leaves four
# children holding 230 MB each (frozen with it, never freed), so that the sandbox's memory is
# nearly full whenever the baseline allocates: reclaim and refaults would land in the
# baseline's window. Measured on docker-runc: the baseline's median stayed at 5.5-5.8 ms with
# and without the hoard (no slowdown); 3.5x the work alone measured 3.06x.
ALLOCATING_SOLUTION = """
import numpy as np

def add(a, b):
    return a + b

def work(n):
    block = np.ones(4 * 2**20)
    return n * 2 + 0 * int(block.sum())
"""
HOARDER = """
import os
import time

for _ in range(4):
    if os.fork() == 0:
        try:
            hoard = bytearray(230 * 2**20)
            for i in range(0, len(hoard), 4096):
                hoard[i] = 1
        except MemoryError:
            pass
        while True:
            time.sleep(1000)
""" + ALLOCATING_SOLUTION.replace(
    "    block = np.ones(4 * 2**20)\n", "    for _ in range(10):\n        block = np.ones(4 * 2**20)\n")


def test_holding_the_sandboxs_memory_does_not_slow_the_baseline_enough(tmp_path, two_backends):
    verdict = grade(exercise(tmp_path, solution=ALLOCATING_SOLUTION), HOARDER, two_backends)
    assert verdict.verdict == Kind.TOO_SLOW, (summary(verdict), perf_case(verdict))
