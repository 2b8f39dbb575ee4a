"""The red team's attacks on the judge (issue 10), each on docker-runc, docker-runsc and local.

Every attack here succeeded against the judge before it was closed (see the issue); now
each must get its honest verdict, never ACCEPTED for a cheat and never INTERNAL_ERROR for
something a student did, and nothing hidden may reach what the student is shown.
"""
from __future__ import annotations

import json
import textwrap
import threading
import time

import pytest

from grader.contract import Kind
from grader.harness.messages import HIDDEN, MESSAGES
from grader.host import Verdict, grade, load_exercise
from testbed.exercises import TOML, make_exercise
from tests.grader.factories import REPO

SECRET = "hidden-input-4242"
FIXED_HIDDEN_TEXTS = {MESSAGES[i] for i in HIDDEN.values()} | {MESSAGES["check.passed"], MESSAGES["hidden.failed"]}

# One visible check, one hidden check fed a secret, one perf case: small and quick.
CHECKS = f"""\
import os, time
from grader.harness import Race, check, close, fail, perf

@check(points=1)
def adds_small_numbers(student, reference, rng):
    close(student.add(0.5, 1), reference.add(0.5, 1))

@check(points=1)
def echoes_a_hidden_input(student, reference, rng):
    close(student.echo({SECRET!r}), reference.echo({SECRET!r}))

@perf(points=1)
def keeps_up(student, reference, rng):
    return Race(student=student.work, reference=reference.work, inputs=lambda rng: (int(rng.integers(1000)),))
"""
SOLUTION = """\
import time

def add(a, b):
    return a + b

def echo(text):
    return text

def work(n):
    end = time.perf_counter() + 0.004  # the baseline: 4 ms of work
    while time.perf_counter() < end:
        pass
    return n * 2
"""
PERF_TOML = TOML + """
[perf.keeps_up]
baseline = "reference"
at_most = 3.0
budget_s = 2
"""


def exercise(tmp_path, checks: str = CHECKS, solution: str = SOLUTION, toml: str = PERF_TOML):
    return load_exercise(make_exercise(tmp_path / "exercise", toml=toml, checks=checks, solution=solution))


def student_view(verdict: Verdict) -> str:
    """Everything a student is shown (the operators' log is not)."""
    return json.dumps({k: v for k, v in verdict.to_dict().items() if k != "operator_log"})


def summary(verdict: Verdict) -> list:
    return [(c.name, str(c.kind), c.message[:160]) for c in verdict.checks] or verdict.notes


def assert_hidden_rows_are_fixed(verdict: Verdict) -> None:
    for check in verdict.checks:
        if not check.visible and not check.message_id.startswith("perf."):
            assert check.message in FIXED_HIDDEN_TEXTS and check.message_params == {}, summary(verdict)
            assert (check.expected, check.got, check.line) == (None, None, None), summary(verdict)
    assert SECRET not in student_view(verdict) and "4242" not in student_view(verdict)


# --- 1. a slow solution burns the perf budget in the warm-up --------------------------------


def test_burning_the_budget_in_the_warm_up_is_too_slow(tmp_path, sandbox):
    # The first timed call burns the whole budget; every later call is 20x the baseline. Both
    # spin, as the baseline does (sleeping is timed too: tests/security/test_redteam_judge.py).
    slow = SOLUTION.replace("def work(n):", textwrap.dedent("""\
        _calls = [0]

        def work(n):
            _calls[0] += 1
            end = time.perf_counter() + (1.9 if _calls[0] == 1 else 0.08)
            while time.perf_counter() < end:
                pass
            return n * 2

        def _unused(n):"""))
    verdict = grade(exercise(tmp_path), slow, sandbox)
    assert verdict.verdict == Kind.TOO_SLOW, summary(verdict)
    case = verdict.perf["cases"][0]
    # Measured pairs decided it (or too few fitted while the student's own time used the budget).
    assert case["decision"] in ("too_slow", "too_few") and case["n"] > 0, case


# --- 2. races that measure nothing, and replies written before their request ---------------


def test_backward_that_works_only_once_is_too_slow_on_fresh_graphs(sandbox):
    spec = load_exercise(REPO / "exercises" / "coding" / "scalar-autograd")
    mutant = next(m for m in spec.mutants if m.name == "quadratic_backward_only_once")
    verdict = grade(spec, mutant.code, sandbox)
    assert verdict.verdict == Kind.TOO_SLOW, summary(verdict)


NOOP_CHECKS = """\
from grader.harness import Race, check, close, perf

@check(points=1)
def adds_small_numbers(student, reference, rng):
    close(student.noop(), reference.noop())

@perf(points=1)
def keeps_up(student, reference, rng):
    return Race(student=student.noop, reference=reference.noop, inputs=lambda rng: ())
"""


def test_replies_written_before_the_request_are_refused(tmp_path, sandbox):
    # noop() is 25x too slow, but the module writes its answers into the reply channel ahead of time.
    solution = SOLUTION + "\ndef noop():\n    work(0)\n"
    cheat = solution.replace("0.004", "0.1") + textwrap.dedent("""
        import json, os, struct, sys
        _head = json.dumps({"ok": True, "value": None, "digests": [], "blobs": []}).encode()
        os.write(int(sys.argv[-1]), (struct.pack(">I", len(_head)) + _head) * 200)
        """)
    verdict = grade(exercise(tmp_path, checks=NOOP_CHECKS, solution=solution), cheat, sandbox)
    assert verdict.verdict == Kind.RUNTIME_ERROR, summary(verdict)
    assert verdict.checks[0].message_id == "not_run.stopped"


# --- 3. hidden inputs leaking into feedback ------------------------------------------------

# Each channel is a function of the student fed the secret in a hidden check of its own.
LEAKS = {
    # stdout is a pipe now: truncating and rewriting it cannot move the secret into the visible part
    "rewrites_its_stdout": """
        def rewrites_its_stdout(text):
            import os, sys
            sys.stdout.flush()
            try:
                os.ftruncate(1, 0)
                os.lseek(1, 0, 0)
            except OSError:
                pass
            print("LEAK", text * 50, flush=True)
            return text
        """,
    "names_its_exception_after_the_input": """
        def names_its_exception_after_the_input(text):
            raise type("Leak_" + text.replace("-", "_"), (Exception,), {})(text)
        """,
    "exits_with_the_input_as_status": """
        def exits_with_the_input_as_status(text):
            import os
            os._exit(int(text[-2:]))
        """,
    "raises_on_a_line_chosen_by_the_input": """
        def raises_on_a_line_chosen_by_the_input(text):
            exec(compile("\\n" * int(text[-4:]) + "raise ValueError(1)", __file__, "exec"))
        """,
    "makes_the_judge_echo_a_protocol_error": """
        def makes_the_judge_echo_a_protocol_error(text):
            import grader.harness.worker as worker
            original = worker.Worker.send
            def send(self, reply, blobs):
                worker.Worker.send = original
                original(self, dict(reply, value={"$": text}), blobs)
            worker.Worker.send = send
            return text
        """,
}
LEAK_CHECKS = CHECKS.split("@check(points=1)\ndef echoes")[0] + "".join(
    f"@check(points=1)\ndef leak_{name}(student, reference, rng):\n"
    f"    close(student.{name}({SECRET!r}), reference.echo({SECRET!r}))\n\n"
    for name in LEAKS
)


def test_hidden_inputs_do_not_reach_the_feedback(tmp_path, sandbox):
    code = "print('visible part')\n" + SOLUTION + "".join(textwrap.dedent(leak) for leak in LEAKS.values())
    verdict = grade(exercise(tmp_path, checks=LEAK_CHECKS, toml=TOML), code, sandbox)
    assert verdict.verdict not in (Kind.ACCEPTED, Kind.INTERNAL_ERROR), summary(verdict)
    assert [c.name for c in verdict.checks if not c.visible] == [f"leak_{name}" for name in LEAKS]
    assert_hidden_rows_are_fixed(verdict)
    assert verdict.stdout.startswith("visible part")


# --- 4. crashing the judge into INTERNAL_ERROR --------------------------------------------

# Each patch makes the worker's next reply hostile in one way; the judge must call that the
# student's RUNTIME_ERROR, and show none of its own traceback (it names lines of checks.py).
REPLY_PATCHES = {
    "npy_header_with_a_huge_shape": """
        head = "{'descr': '<f8', 'fortran_order': False, 'shape': (100000, 100000, 100000), }"
        head += " " * (117 - len(head)) + "\\n"
        blob = b"\\x93NUMPY\\x01\\x00" + len(head).to_bytes(2, "little") + head.encode()
        reply, blobs = dict(reply, value={"$": "ndarray", "i": 0}), [blob]
        """,
    "npz_zip_instead_of_npy": """
        import io, numpy
        buffer = io.BytesIO()
        numpy.savez(buffer, a=numpy.arange(3))
        reply, blobs = dict(reply, value={"$": "ndarray", "i": 0}), [buffer.getvalue()]
        """,
    "digests_not_a_list": """
        reply = dict(reply, digests=5)
        """,
    "ok_not_a_bool": """
        reply = dict(reply, ok="yes")
        """,
    "error_not_a_dict": """
        reply = dict(reply, ok=False, error=["not", "a", "dict"])
        """,
    "error_type_not_a_string": """
        reply = dict(reply, ok=False, error={"type": ["x"], "message": "m", "traceback": ""})
        """,
    "reply_not_an_object": """
        import grader.harness.wire as wire
        wire.frame_bytes = lambda header, blobs: (lambda head: len(head).to_bytes(4, "big") + head)(b"[1, 2]")
        """,
    "claims_a_reply_larger_than_its_memory": """
        import grader.harness.wire as wire
        head = b'{"ok": true, "value": 1, "digests": [], "blobs": [1073741824]}'
        wire.frame_bytes = lambda header, blobs: len(head).to_bytes(4, "big") + head
        """,
    "unhashable_dict_key": """
        reply = dict(reply, value={"$": "tuple", "v": [{"$": "dict", "v": [[[1], 2]]}]})
        """,
    "a_number_the_check_cannot_compare": """
        reply = dict(reply, value=10**400)  # complex(10**400) overflows inside close()
        """,
}


def hostile_replies() -> tuple[str, str, str]:
    """Checks (one per patch), the reference, and a student whose function for each patch
    makes the worker's reply to that call hostile in that way."""
    checks = "from grader.harness import check, close\n\n" + "".join(
        f"@check(points=1)\ndef adds_small_numbers{'' if i == 0 else '_' + name}(student, reference, rng):\n"
        f"    close(student.{name}(0.5, 1), reference.add(0.5, 1))\n\n"
        for i, name in enumerate(REPLY_PATCHES)
    )
    student = SOLUTION
    for name, patch in REPLY_PATCHES.items():
        body = textwrap.indent(textwrap.dedent(patch).strip(), " " * 8)
        student += (
            f"\ndef {name}(a, b):\n"
            "    import grader.harness.worker as worker\n"
            "    original = worker.Worker.send\n"
            "    def send(self, reply, blobs):\n"
            "        worker.Worker.send = original\n"
            f"{body}\n"
            "        original(self, reply, blobs)\n"
            "    worker.Worker.send = send\n"
            "    return a + b\n"
        )
    return checks, SOLUTION, student


def test_a_hostile_reply_is_the_students_runtime_error(tmp_path, sandbox):
    checks, solution, student = hostile_replies()
    # Every check visible: a hidden one would say only that it failed, whatever the reply was.
    names = ["adds_small_numbers"] + [f"adds_small_numbers_{name}" for name in list(REPLY_PATCHES)[1:]]
    toml = TOML.replace('visible = ["adds_small_numbers"]', f"visible = {json.dumps(names)}")
    assert toml != TOML
    verdict = grade(exercise(tmp_path, checks=checks, solution=solution, toml=toml), student, sandbox)
    assert verdict.verdict == Kind.RUNTIME_ERROR, summary(verdict)
    assert [str(c.kind) for c in verdict.checks] == ["RUNTIME_ERROR"] * len(REPLY_PATCHES), summary(verdict)
    shown = student_view(verdict)
    assert "checks.py" not in shown and "judge.py" not in shown and "Traceback" not in shown, shown


# --- 5. one student stopping another's grading ---------------------------------------------

HOG = SOLUTION + """
import os, time
for _ in range(500):  # up to its own process limit, then wait there
    try:
        if os.fork() == 0:
            time.sleep(120)
            os._exit(0)
    except OSError:
        break
time.sleep(12)
"""


def test_a_process_hog_does_not_stop_another_sandboxs_grading(tmp_path, sandbox):
    spec = exercise(tmp_path, toml=TOML, checks=CHECKS.split("@perf")[0])
    verdicts = {}
    hog = threading.Thread(target=lambda: verdicts.setdefault("hog", grade(spec, HOG, sandbox)))
    hog.start()
    time.sleep(6)  # the hog's sandbox is up and holding its processes
    verdicts["honest"] = grade(spec, SOLUTION, sandbox)
    hog.join()
    assert verdicts["honest"].verdict == Kind.ACCEPTED, summary(verdicts["honest"])
    assert verdicts["hog"].verdict != Kind.INTERNAL_ERROR, summary(verdicts["hog"])


# --- 6. escaping the freeze ------------------------------------------------------------------

# The baseline says when it ran (the sandbox's monotonic clock, one for every process in it);
# a helper that keeps replacing itself (fork, exit) notes each moment it runs, and the student's
# call hands over what it noted since the last one. Frozen as one, the student never runs while
# the baseline does. (Nothing writable is shared between the two families, and no confined
# process has a socket, so the clock is the channel.)
FREEZE_CHECKS = CHECKS.split("@perf")[0] + """
@perf(points=1)
def never_sees_the_baseline(student, reference, rng):
    return Race(student=student.ran_at, reference=reference.flagged_work, inputs=lambda rng: (),
                check=lambda got, want: fail({"en": "the student's helper ran while the baseline did",
                                              "zh-hans": "学生的辅助进程在基线运行时也在运行"})
                if any(want[0] < moment < want[1] for moment in got) else None)
"""
FREEZE_TOML = TOML + """
[perf.never_sees_the_baseline]
baseline = "reference"
at_most = 3.0
budget_s = 2
"""
FREEZE_SOLUTION = SOLUTION + """
import time

def flagged_work():
    started = time.monotonic()
    work(0)
    work(0)
    return [started, time.monotonic()]

def ran_at():
    return []
"""
ESCAPER = SOLUTION + """
import os, time
_NOTES = os.path.join(os.getcwd(), "ran-at")

def _helper():
    while True:
        try:
            with open(_NOTES, "a") as notes:
                notes.write(f"{time.monotonic()}\\n")
            pid = os.fork()
        except OSError:
            continue
        if pid:
            os._exit(0)  # the child carries on: a new pid every few hundred microseconds

if os.fork() == 0:
    os.setsid()
    _helper()

def ran_at():
    try:
        with open(_NOTES, "r+") as notes:
            moments = [float(line) for line in notes.read().split()]
            notes.truncate(0)
    except (OSError, ValueError):
        return []
    return moments
"""


def test_a_self_replacing_helper_cannot_escape_the_freeze(tmp_path, sandbox):
    spec = exercise(tmp_path, checks=FREEZE_CHECKS, solution=FREEZE_SOLUTION, toml=FREEZE_TOML)
    verdict = grade(spec, ESCAPER, sandbox)
    # The race's check fails as a WRONG_ANSWER (its text is hidden: a race's failure reads as a hidden one)
    race = next(c for c in verdict.checks if c.name == "never_sees_the_baseline")
    assert race.kind != Kind.WRONG_ANSWER and verdict.verdict != Kind.INTERNAL_ERROR, summary(verdict)


# --- the limits a verdict names ----------------------------------------------------------------

WRONG_LIMITS = {
    "memory_bomb_at_import": ("block = bytearray(10**10)\n", Kind.MEMORY_LIMIT),
    "printing_past_the_file_size_limit_at_import": ("print('x' * 20_000_000)\n", Kind.OUTPUT_LIMIT),
    "writing_a_huge_file_at_import": ("open('big', 'wb').write(b'x' * (64 * 2**20))\n", Kind.OUTPUT_LIMIT),
}


@pytest.mark.parametrize("name", list(WRONG_LIMITS))
def test_a_limit_hit_while_loading_is_named(tmp_path, sandbox, name):
    code, kind = WRONG_LIMITS[name]
    verdict = grade(exercise(tmp_path, toml=TOML.replace("memory_mb = 256", "memory_mb = 256\ntmpfs_mb = 128"),
                             checks=CHECKS.split("@perf")[0]), code + SOLUTION, sandbox)
    assert verdict.verdict == kind, summary(verdict)
