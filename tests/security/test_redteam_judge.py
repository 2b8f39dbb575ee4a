"""An independent red team's attacks on the judge (after issues 21 and 22), on docker-runc,
docker-runsc and local.

Each test plants one attack and asserts the SAFE outcome, so an attack that works is a
failing test. The reviewer knew only README.md, DESIGN.md and the code. Three goals:
forge a verdict, rank slow code first, or read hidden data.
"""
from __future__ import annotations

import textwrap

import pytest

from grader.contract import Kind
from grader.host import Verdict, grade, load_exercise
from grader.host.load import SAMPLE_EVERY_S
from testbed.exercises import TOML, make_exercise
from tests.grader.factories import REPO

# The baseline burns 4 ms of CPU per call; the threshold is 3x. Each cheat below spends
# at least 25x that per call, in some way the clock might not see.
CHECKS = """\
from grader.harness import Race, check, close, perf

@check(points=1)
def adds_small_numbers(student, reference, rng):
    close(student.add(0.5, 1), reference.add(0.5, 1))

@perf(points=1)
def keeps_up(student, reference, rng):
    return Race(student=student.work, reference=reference.work, inputs=lambda rng: (int(rng.integers(1000)),))
"""
SOLUTION = """\
import time

def add(a, b):
    return a + b

def burn(seconds):
    end = time.perf_counter() + seconds
    while time.perf_counter() < end:
        pass

def work(n):
    burn(0.004)  # the baseline: 4 ms of work
    return n * 2
"""
PERF_TOML = TOML + """
[perf.keeps_up]
baseline = "reference"
at_most = 3.0
budget_s = 3
"""


def exercise(tmp_path, checks: str = CHECKS, solution: str = SOLUTION, toml: str = PERF_TOML):
    return load_exercise(make_exercise(tmp_path / "exercise", toml=toml, checks=checks, solution=solution))


def summary(verdict: Verdict) -> list:
    return [(c.name, str(c.kind), c.message[:200]) for c in verdict.checks] or verdict.notes


def perf_case(verdict: Verdict) -> dict:
    return (verdict.perf or {"cases": [{}]})["cases"][0]


# --- 1. slow code that the clock does not see -------------------------------------------------

# Each student's work(n) takes 100 ms of the wall clock per call (25x the baseline) and
# returns the right answer; what differs is where the time goes.
SLOW_WORK = {
    # waiting costs no CPU: a CPU clock alone would call this 0.001x the reference
    "sleeps": """
        def work(n):
            time.sleep(0.1)
            return n * 2
        """,
    # the work happens in a process born (and reaped) inside the timed window
    "forks_a_child_per_call": """
        import os

        def work(n):
            pid = os.fork()
            if pid == 0:
                burn(0.1)
                os._exit(0)
            os.waitpid(pid, 0)
            return n * 2
        """,
    # ... in a helper process started at import, woken through a pipe: the caller only waits
    "hands_the_work_to_a_helper_process": """
        import os

        _ask_r, _ask_w = os.pipe()
        _done_r, _done_w = os.pipe()
        if os.fork() == 0:
            while os.read(_ask_r, 1):
                burn(0.1)
                os.write(_done_w, b"x")
            os._exit(0)

        def work(n):
            os.write(_ask_w, b"x")
            os.read(_done_r, 1)
            return n * 2
        """,
    # ... in a thread started at import, woken through a lock: the calling thread only waits
    "hands_the_work_to_a_thread": """
        import threading

        _ask, _done = threading.Semaphore(0), threading.Semaphore(0)

        def _helper():
            while True:
                _ask.acquire()
                burn(0.1)
                _done.release()

        threading.Thread(target=_helper, daemon=True).start()

        def work(n):
            _ask.release()
            _done.acquire()
            return n * 2
        """,
    # ... in a thread born inside the window, which ends before the window closes
    "starts_a_thread_per_call": """
        import threading

        def work(n):
            helper = threading.Thread(target=burn, args=(0.1,))
            helper.start()
            helper.join()
            return n * 2
        """,
}


def slow_student(name: str) -> str:
    return SOLUTION.split("def work")[0] + textwrap.dedent(SLOW_WORK[name])


@pytest.mark.parametrize("name", list(SLOW_WORK))
def test_time_spent_outside_the_callers_cpu_is_still_timed(tmp_path, sandbox, name):
    verdict = grade(exercise(tmp_path), slow_student(name), sandbox)
    assert verdict.verdict == Kind.TOO_SLOW, (summary(verdict), perf_case(verdict))


# --- 2. reaching the trusted side: files, processes, the cgroup, the result channel ---------

# At import the student tries every door it can find and prints the ones that opened. A
# correct add() follows, so an honest judge says ACCEPTED, and shows an empty list.
PROBE = r'''
import ctypes, os, signal, socket

opened, peeked = [], []  # doors that give something; metadata of another process
me = os.getpid()
libc = ctypes.CDLL(None, use_errno=True)

def attempt(what, action, peek=False):
    try:
        action()
    except Exception:
        return
    if "/dev/null" not in os.path.realpath(what.split()[1]) if what.startswith("open /proc") else True:
        (peeked if peek else opened).append(what)

def write(path):
    with open(path, "w") as file:
        file.write("planted")

def read(path):
    with open(path, "rb") as file:
        file.read(1)

others = []
for entry in os.listdir("/proc"):
    if entry.isdigit() and int(entry) != me:
        try:
            uid = os.stat(f"/proc/{entry}").st_uid
        except OSError:
            continue
        if uid != os.getuid():
            others.append(int(entry))

# Files the trusted side writes or reads, and the places a cache could be planted in.
for path in ("/tmp/planted", "/tmp/torchinductor_root/planted", "/var/tmp/planted", "/dev/shm/planted",
             "/run/lock/planted", "/job/planted", "/job/out/result.json", "/job/out/result.mac",
             "../out/result.json", "../out/result.mac", "../planted", "/job/submission/planted"):
    attempt(f"write {path}", lambda: write(path))
for path in ("/job/exercise/checks.py", "/job/exercise/solution.py", "/job/exercise/manifest.json",
             "../exercise/checks.py", "../exercise/solution.py", "../exercise/manifest.json"):
    attempt(f"read {path}", lambda: read(path))
# Other families' homes under /tmp (the names are random, but /proc may say where they are).
for pid in others:
    for link in ("cwd", "root"):
        attempt(f"list /proc/{pid}/{link}", lambda: os.listdir(f"/proc/{pid}/{link}"))
    for name in ("mem", "syscall", "stack"):
        attempt(f"read /proc/{pid}/{name}", lambda: read(f"/proc/{pid}/{name}"))
    for name in ("environ", "maps"):
        attempt(f"read /proc/{pid}/{name}", lambda: read(f"/proc/{pid}/{name}"), peek=True)
    attempt(f"list /proc/{pid}/fd", lambda: os.listdir(f"/proc/{pid}/fd"), peek=True)
    # Another process's pipes and files reopened through /proc: the reference's request and
    # reply pipes would let the student answer for the reference.
    for fd in range(64):
        for mode in (os.O_RDONLY, os.O_WRONLY):
            if os.path.lexists(f"/proc/{pid}/fd/{fd}") or fd < 16:
                attempt(f"open /proc/{pid}/fd/{fd} mode {mode}",
                        lambda: os.close(os.open(f"/proc/{pid}/fd/{fd}", mode | os.O_NONBLOCK)))
    attempt(f"signal {pid}", lambda: os.kill(pid, 0))
    attempt(f"ptrace {pid}", lambda: (libc.ptrace(16, pid, 0, 0) == 0) or (_ for _ in ()).throw(OSError()))
# Becoming someone else: root, or the reference's uid (the lent uid's twin).
for uid in {0, os.getuid() + 100000, *(os.stat(f"/proc/{p}").st_uid for p in others if os.path.exists(f"/proc/{p}"))}:
    attempt(f"setuid {uid}", lambda: os.setresuid(uid, uid, uid))
attempt("unshare a user namespace", lambda: (libc.unshare(0x10000000) == 0) or (_ for _ in ()).throw(OSError()))
# The freezer: thawing itself while the baseline is timed, or leaving the cgroup.
for root in ("/sandbox-cgroup", "/sys/fs/cgroup"):
    for folder, _, files in os.walk(root):
        for name in files:
            path = os.path.join(folder, name)
            attempt(f"open {path} for writing", lambda: open(path, "w").close())
# Abstract unix sockets another process listens on (the zygote's channel is a socketpair).
try:
    lines = open("/proc/net/unix").read().splitlines()[1:]
    names = {line.split()[-1] for line in lines if line.split()[-1].startswith("@")}
except OSError:
    names = set()
for name in names:
    def connect(name=name):
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as probe:
            probe.connect("\0" + name[1:])
    attempt(f"connect {name}", connect)

print("OTHERS", len(others), "OPENED", opened, "PEEKED", peeked, flush=True)
'''


def probed(tmp_path, sandbox) -> Verdict:
    verdict = grade(exercise(tmp_path, checks=CHECKS.split("@perf")[0], toml=TOML), PROBE + SOLUTION, sandbox)
    if sandbox.name == "docker-runsc":  # the worker's PID namespace holds the student's processes alone
        assert "OTHERS 0 " in verdict.stdout, verdict.stdout
    else:  # the judge, zygote and reference were there to try
        assert "OTHERS 0 " not in verdict.stdout, verdict.stdout
    assert verdict.verdict == Kind.ACCEPTED, summary(verdict)
    return verdict


def test_every_door_to_the_trusted_side_stays_shut(tmp_path, sandbox):
    verdict = probed(tmp_path, sandbox)
    assert "OPENED [] PEEKED" in verdict.stdout, verdict.stdout


def test_the_trusted_processes_proc_files_are_not_the_students_to_read(tmp_path, sandbox):
    # gVisor (runsc) lets any uid read /proc/<pid>/environ and maps and list /proc/<pid>/fd, and
    # ignores hidepid (google/gvisor#185): there the student's worker is PID 1 of a PID namespace
    # of its own, in a root with a /proc of its own (zygote.py mount_own_proc), so no trusted pid
    # is there to name. Linux refuses the reads themselves.
    verdict = probed(tmp_path, sandbox)
    assert "PEEKED []" in verdict.stdout, verdict.stdout


# --- 3. reading a hidden input through how a hidden check fails ------------------------------

HIDDEN_CHECKS = CHECKS.split("@perf")[0] + """
@check(points=1)
def echoes_a_constant_hidden_input(student, reference, rng):
    close(student.echo(SECRET), reference.echo(SECRET))
"""
# The student fails the hidden check every time, but picks how by the hidden input's last
# digit: a wrong answer, an exception, a timeout, too much output, a wrong answer after
# printing to stdout and stderr, or memory. Before issue 21's rule each had a row text and a
# verdict kind of its own: over two bits of the hidden input per check and grading.
BIT_READER = SOLUTION + """
import sys

print("loaded")

def echo(text):
    way = int(text[-1])
    if way == 1:
        raise ValueError(text)
    if way == 2:
        time.sleep(600)
    if way == 3:
        print(text * 100_000)
    if way == 4:
        print(text, flush=True)
        print(text, file=sys.stderr, flush=True)
    if way == 5:
        return bytearray(2 ** 40)
    return "wrong"
"""
MEMORY = 5


def shown_to_the_student(verdict: Verdict) -> tuple:
    """Everything of a verdict that the student's pages and the API are made from."""
    return (str(verdict.verdict), verdict.score, [row.to_dict() for row in verdict.checks], verdict.stdout,
            verdict.stderr, verdict.notes, verdict.unsettled)


def read_by_failing(tmp_path, sandbox, ways) -> list[tuple]:
    shown = []
    for way in ways:
        checks = f"SECRET = 'hidden-input-{way}'\n" + HIDDEN_CHECKS
        solution = SOLUTION + "\ndef echo(t):\n    return t\n"
        verdict = grade(exercise(tmp_path / str(way), checks=checks, solution=solution, toml=TOML), BIT_READER, sandbox)
        shown.append(shown_to_the_student(verdict))
    return shown


def test_a_hidden_rows_failure_does_not_depend_on_the_hidden_input(tmp_path, sandbox):
    shown = read_by_failing(tmp_path, sandbox, range(MEMORY))
    assert all(seen == shown[0] for seen in shown), shown
    verdict, score, rows, stdout, *_ = shown[0]
    assert verdict == Kind.PARTIAL and [(row["passed"], row["message_id"], row["kind"]) for row in rows] == [
        (True, "check.passed", None), (False, "hidden.failed", "WRONG_ANSWER")]
    assert stdout == "loaded\n\n[output printed during hidden checks is not shown]"  # printed then or not


def test_running_out_of_memory_on_a_hidden_input_reads_as_any_failure(tmp_path, sandbox):
    """On runc and local the student's process alone is killed; gVisor bounds no process family's
    memory, so there the whole sandbox dies, and the judge's checkpoint, handed over before the
    hidden input went out, is the result (grader/host/pipeline.py ``died_after_hidden_input``)."""
    shown = read_by_failing(tmp_path, sandbox, (0, MEMORY))
    assert shown[0] == shown[1], shown


# Two hidden checks: the student answers the first right and, on the second, fails or fills the
# memory by that input's last digit. Where the whole sandbox dies (gVisor), the judge's last
# checkpoint keeps the first hidden check passed and fails the second, as any failure of it reads.
TWO_HIDDEN_CHECKS = HIDDEN_CHECKS + """
@check(points=1)
def echoes_a_second_hidden_input(student, reference, rng):
    close(student.echo("second-" + SECRET), reference.echo("second-" + SECRET))
"""
SECOND_HIDDEN_READER = SOLUTION + """
def echo(text):
    if not text.startswith("second-"):
        return text
    if text.endswith(str(5)):
        return bytearray(2 ** 40)
    return "wrong"
"""


def test_running_out_of_memory_on_a_later_hidden_input_keeps_the_earlier_ones(tmp_path, sandbox):
    shown, logs = [], []
    for way in (0, MEMORY):
        checks = f"SECRET = 'hidden-input-{way}'\n" + TWO_HIDDEN_CHECKS
        solution = SOLUTION + "\ndef echo(t):\n    return t\n"
        verdict = grade(exercise(tmp_path / str(way), checks=checks, solution=solution, toml=TOML),
                        SECOND_HIDDEN_READER, sandbox)
        shown.append(shown_to_the_student(verdict))
        logs.append(" ".join(verdict.operator_log))
    assert shown[0] == shown[1], shown
    assert [(row["passed"], row["message_id"]) for row in shown[0][2]] == [
        (True, "check.passed"), (True, "check.passed"), (False, "hidden.failed")]
    if sandbox.name == "docker-runsc":  # the death this is about, and only the operators hear of it
        assert "died after a hidden input" in logs[1] and "died" not in logs[0], logs


# The host's load while the grading ran is shown under "How it was measured", and a process
# that saw a hidden input could spin up tasks, or not: the summary stops at the first hidden
# input. The sampler takes one sample per SAMPLE_EVERY_S at most, so a summary that kept a
# sample from the hidden phase would hold more than the time before it allows.
LOAD_SPINNER = SOLUTION + """
import os

def echo(text):
    children = [pid for pid in (os.fork() for _ in range(2)) if pid]
    if not children:
        burn(1.5)
        os._exit(0)
    burn(1.5)
    for pid in children:
        os.waitpid(pid, 0)
    return "wrong"
"""


def test_the_hosts_load_is_shown_only_up_to_the_first_hidden_input(tmp_path, sandbox):
    checks = "SECRET = 'hidden-input-0'\n" + HIDDEN_CHECKS + "\n" + "@perf" + CHECKS.split("@perf")[1]
    solution = SOLUTION + "\ndef echo(t):\n    return t\n"
    verdict = grade(exercise(tmp_path, checks=checks, solution=solution), LOAD_SPINNER, sandbox)
    assert [c.passed for c in verdict.checks] == [True, True, False], summary(verdict)
    before_hidden_s = verdict.perf["before_hidden_s"]
    assert 0 < before_hidden_s < verdict.usage.wall_s - 1.5  # the hidden phase spun for 1.5 s after it
    assert verdict.perf["host_load"]["samples"] <= before_hidden_s / SAMPLE_EVERY_S + 1, verdict.perf


# --- 4. a property measured inside the student's process ---------------------------------------

ZERO_GRAPH_BREAKS = REPO / "exercises" / "coding" / "zero-graph-breaks"
# The mutant that keeps its debug print (one graph break, PARTIAL), plus a patch that makes
# torch._dynamo.explain, which the checks call in the student's own process, report none.
EXPLAIN_FORGER = (ZERO_GRAPH_BREAKS / "mutants" / "keeps_the_print.py").read_text() + """
_dynamo = getattr(torch, "_" + "dynamo")  # a name built at run time: past the rules' reading

_explain = _dynamo.explain


class _NoBreaks:
    graph_break_count = 0
    break_reasons = []


def _forged_explain(function, *args, **kwargs):
    def run(*inputs, **named):
        _explain(function, *args, **kwargs)(*inputs, **named)  # look busy: the real thing runs
        return _NoBreaks()
    return run


_dynamo.explain = _forged_explain
"""


def test_a_graph_break_count_cannot_be_forged(sandbox):
    """No count is asked of the student's process any more: the graph torch.compile captures
    crosses as data and the judge's side runs it (grader/harness/graphs.py)."""
    verdict = grade(load_exercise(ZERO_GRAPH_BREAKS), EXPLAIN_FORGER, sandbox)
    assert verdict.verdict != Kind.ACCEPTED, summary(verdict)
    assert [c.name for c in verdict.checks if not c.passed] == ["no_graph_breaks", "one_graph_on_the_other_branch_too"]


def forging_the_capture(mutant: str, answer: str) -> str:
    """``mutant`` of zero-graph-breaks, plus a wrap of its own worker: the capture the checks
    send (run_in) is replaced by ``answer``, the source of ``_answer(name, x, w)``."""
    return (ZERO_GRAPH_BREAKS / "mutants" / mutant).read_text() + answer + """
import grader.harness.worker as _worker

_function = _worker.Worker.function


def _forging_function(self, source):
    real = _function(self, source)
    if "def export_graph" not in source:
        return real

    def forged(*args):
        return _answer(*args)
    self.sources[id(forged)] = source  # fingerprinted as the probe the judge sent: "unchanged"
    self.compiled[source] = forged
    return forged


_worker.Worker.function = _forging_function
"""


def answering(graph: list) -> str:
    return f"\n\ndef _answer(*args):\n    return {{'graph': {graph!r}}}\n"


# The model traced by torch.fx's symbolic tracer instead of Dynamo: the print runs at trace
# time on a proxy and leaves an unused .item() behind, which dead-code elimination drops; then
# make_fx writes the rest in ATen operators. No name of the rules is used.
TRACED_BY_FX = """

def _answer(name, x, w):
    from torch.fx import symbolic_trace
    from torch.fx.experimental.proxy_tensor import make_fx

    traced = symbolic_trace(model)
    traced.graph.eliminate_dead_code()
    traced.recompile()

    def encode(value):
        return {"node": value.name} if isinstance(value, torch.fx.Node) else value

    nodes = []
    for n in make_fx(traced)(x, w).graph.nodes:
        if n.op == "placeholder":
            nodes.append({"op": "input", "name": n.name})
        elif n.op == "output":
            returned = n.args[0] if isinstance(n.args[0], (list, tuple)) else [n.args[0]]
            nodes.append({"op": "output", "args": [encode(a) for a in returned]})
        else:
            nodes.append({"op": "call", "name": n.name, "target": str(n.target),
                          "args": [encode(a) for a in n.args], "kwargs": {}})
    return {"graph": nodes}
"""


def node(name, target, *args):
    return {"op": "call", "name": name, "target": target, "args": list(args), "kwargs": {}}


# The inputs come back as the graph's output: one graph, no break, and wrong.
IDENTITY = [{"op": "input", "name": "x"}, {"op": "input", "name": "w"}, {"op": "output", "args": [{"node": "x"}]}]
# Well-formed, each size within bounds; their product (2**31 floats and more) is not: the
# reference's worker would need 8 GiB if it ran it, and refuses it from a run on meta tensors first.
HUGE = [{"op": "input", "name": "x"}, {"op": "input", "name": "w"},
        node("big", "aten.expand.default", {"node": "x"}, [4096, 4096, -1, -1]),
        {"op": "output", "args": [{"node": "big"}]}]


def test_a_forged_graph_is_run_by_the_judge_and_found_wrong(sandbox):
    forger = forging_the_capture("keeps_the_print.py", answering(IDENTITY))
    verdict = grade(load_exercise(ZERO_GRAPH_BREAKS), forger, sandbox)
    assert verdict.verdict != Kind.ACCEPTED, summary(verdict)
    failed = {c.name: c for c in verdict.checks if not c.passed}
    assert list(failed) == ["no_graph_breaks", "one_graph_on_the_other_branch_too"]
    shown = failed["no_graph_breaks"]
    assert shown.kind == Kind.WRONG_ANSWER and "run by the judge" in shown.message


def test_a_graph_too_large_to_run_is_the_students_runtime_error(sandbox):
    forger = forging_the_capture("keeps_the_print.py", answering(HUGE))
    verdict = grade(load_exercise(ZERO_GRAPH_BREAKS), forger, sandbox)
    failed = {c.name: c for c in verdict.checks if not c.passed}
    assert list(failed) == ["no_graph_breaks", "one_graph_on_the_other_branch_too"], summary(verdict)
    shown = failed["no_graph_breaks"]
    assert shown.kind == Kind.RUNTIME_ERROR and "elements" in shown.message
    assert verdict.verdict != Kind.INTERNAL_ERROR  # the reference's worker refused it, and lives on


DATA_DEPENDENT = REPO / "exercises" / "coding" / "data-dependent-shapes"
# The per-row loop (graph breaks on every row), plus the wrap that used to make the counting
# probe report one graph and the eager values as the compiled ones; and, for the capture that
# replaced the probe, an answer of one graph that only passes the input through.
LOOP_FORGER = (DATA_DEPENDENT / "starter.py").read_text() + """
import grader.harness.worker as _worker

_function = _worker.Worker.function


def _forging_function(self, source):
    real = _function(self, source)
    if "def probe" in source:
        def forged(*args):
            found = real(*args)
            found["graphs"], found["compiled"] = 1, found["eager"]
            return found
    elif "def export_graph" in source:
        def forged(*args):
            return {"graph": [{"op": "input", "name": "x"}, {"op": "output", "args": [{"node": "x"}] * 3}]}
    else:
        return real
    self.sources[id(forged)] = source
    self.compiled[source] = forged
    return forged


_worker.Worker.function = _forging_function
"""


def test_a_graph_count_for_data_dependent_shapes_cannot_be_forged(sandbox):
    verdict = grade(load_exercise(DATA_DEPENDENT), LOOP_FORGER, sandbox)
    assert verdict.verdict != Kind.ACCEPTED, summary(verdict)
    assert all(not c.passed for c in verdict.checks), summary(verdict)  # each case runs the judge's graph


@pytest.mark.xfail(strict=True, reason=(
    "What the judge proves is that one graph of pure ATen operators computes the model, on inputs "
    "the student never saw, on both sides of the branch. It cannot prove that Dynamo made that "
    "graph: the student's process may trace its function with another tracer (torch.fx's "
    "symbolic tracer runs a print of .item() on a proxy, and dead-code elimination drops the "
    "unused .item()) and send that graph instead. A model whose only break is a print then passes. Closing it needs "
    "Dynamo's capture out of the student's reach, which no process that imports the student's "
    "module offers (its import runs first); the exercise's rules (torch.compile, torch._dynamo, "
    "torch.export) only make the swap harder to write."))
def test_a_graph_traced_by_another_tracer_does_not_pass_for_dynamos(sandbox):
    verdict = grade(load_exercise(ZERO_GRAPH_BREAKS), forging_the_capture("keeps_the_print.py", TRACED_BY_FX), sandbox)
    assert verdict.verdict != Kind.ACCEPTED, summary(verdict)


DYNAMIC_SHAPES = REPO / "exercises" / "coding" / "dynamic-shape-recompiles"
# The mutant that never compiles (WRONG_ANSWER), plus a patch of its own worker: the probe the
# checks send (run_in) is compiled there, so the student wraps it and rewrites the counts.
PROBE_FORGER = (DYNAMIC_SHAPES / "mutants" / "runs_eagerly.py").read_text() + """
import grader.harness.worker as _worker

_function = _worker.Worker.function


def _forging_function(self, source):
    real = _function(self, source)
    if "def probe" not in source:
        return real

    def forged(*args):
        found = real(*args)
        found["graphs"], found["runs"] = 1, len(args[2])  # one graph, and every call ran it
        return found
    self.sources[id(forged)] = source  # fingerprinted as the probe the judge sent: "unchanged"
    self.compiled[source] = forged
    return forged


_worker.Worker.function = _forging_function
"""


# The same idea against the probe that replaced the counts: it sends every graph Dynamo hands
# the checks' backend, as data. The mutant serves the stream eagerly, answers the probe through a
# static compile and keeps the first graph: "one graph", made for one batch size.
COUNT_FORGER = (DYNAMIC_SHAPES / "mutants" / "forges_the_count.py").read_text()


@pytest.mark.parametrize("forger", [PROBE_FORGER, COUNT_FORGER], ids=["rewrites-the-counts", "keeps-one-static-graph"])
def test_a_graph_count_from_a_probe_in_the_students_process_cannot_be_forged(sandbox, forger):
    """No count is taken from the student's process any more (issue 23): the judge counts the
    graphs it sends and runs the one graph itself on batches of other sizes (1, and above 64),
    and the checks' models reshape with the batch size, so a graph made for one size fails."""
    verdict = grade(load_exercise(DYNAMIC_SHAPES), forger, sandbox)
    assert verdict.verdict == Kind.WRONG_ANSWER, summary(verdict)
    assert all(not c.passed for c in verdict.checks), summary(verdict)


# The residual: one real symbolic graph, compiled aside on a two-row copy of the first batch,
# while every call of the stream runs eagerly.
ASIDE = """\
import torch


def compile_for_stream(fn, backend):
    compiled = torch.compile(fn, backend=backend)
    made = []

    def run(x):
        if not made:
            aside = torch.cat([x[:1], x[:1]])
            torch._dynamo.mark_dynamic(aside, 0)
            made.append(compiled(aside))
        return fn(x)

    return run
"""


@pytest.mark.xfail(strict=True, reason=(
    "The judge proves that the student's process made one graph that serves every batch size "
    "(it runs that graph itself), not that the stream's calls ran it: their outputs are the "
    "model's either way, and where a value was computed is a fact inside the student's process. "
    "Code that compiles a symbolic graph aside has done the exercise's work (mark_dynamic, no "
    "batch of one shown to the compiler) and only skips using it; closing it needs the calls "
    "timed or run out of the student's reach, which this exercise does not measure."))
def test_a_stream_served_eagerly_beside_a_graph_compiled_aside_is_not_accepted(sandbox):
    verdict = grade(load_exercise(DYNAMIC_SHAPES), ASIDE, sandbox)
    assert verdict.verdict != Kind.ACCEPTED, summary(verdict)


# --- 5. the board: re-rolling the noise with a comment ------------------------------------------


@pytest.mark.django_db
def test_the_same_code_with_a_new_comment_does_not_re_roll_the_noise():
    """The same code graded again keeps its entry (issue 22); the same code with one comment
    more is new code to the digest, and a luckier grading of it used to replace the entry. The
    reviewer's gradings of one honest solution ranged 0.81-1.05x; the best of a handful of
    comment variants stands as the student's number. An entry moves only for a grading that is
    clearly faster (its interval ends below the entry's), as the board's ranks are made."""
    from leaderboards.models import Entry
    from tests.platform import classroom as make

    ex = make.exercise()
    student = make.user()
    code = "def f():\n    return 1\n"
    original = make.graded(student, ex, ratio=1.0, interval=(0.8, 1.25), code=code)
    for n, lucky in enumerate((0.95, 0.9, 0.85, 0.81)):
        make.graded(student, ex, ratio=lucky, interval=(lucky * 0.8, lucky * 1.25), code=f"# try {n}\n{code}")
    entry = Entry.objects.get()
    assert (entry.submission, entry.ratio) == (original, pytest.approx(1.0))
    # Code that is clearly faster still moves the entry.
    faster = make.graded(student, ex, ratio=0.5, interval=(0.45, 0.55), code="def f():\n    return True\n")
    assert Entry.objects.get().submission == faster


# --- 6. the board: code that fails only when it is measured again --------------------------------

from tests.platform.conftest import exercise as thin_path_exercise  # noqa: E402, F401


@pytest.mark.django_db
def test_code_that_fails_when_measured_again_leaves_the_speed_ranking(
    thin_path_exercise, settings, requires  # noqa: F811 - the fixture imported above, by its name here
):
    """A re-measurement is a grading like any other, except that it comes minutes or hours
    after the submission, and the code knows when it was submitted: it passes its own grading
    and raises in every re-measurement. Such an entry kept its (planted) numbers, unverified
    for good. Now a re-measurement that is not ACCEPTED withdraws the entry from the ranking
    until the student is graded again; the same code submitted again brings it back."""
    import time

    from leaderboards.models import Entry, Verification
    from leaderboards.tasks import verify_top
    from leaderboards.verification import verification_request
    from testbed.processes import docker_is_up
    from tests.platform import classroom as make

    requires("Docker engine", docker_is_up(), "start dockerd")
    settings.SANDBOX_BACKEND, settings.SANDBOX_POOL_SIZE, settings.LEADERBOARD_VERIFY_TOP = "docker", 0, 2
    ex = thin_path_exercise
    solution = ex.current_version.files["solution.py"]
    # A real one would wait a few minutes (the board's debounce); here its grading is planted.
    code = f"{solution}\nimport time\nif time.time() > {time.time():.0f}:\n    raise RuntimeError('measured again')\n"
    honest, dodger = make.user("honest", pseudonym="honest"), make.user("dodger", pseudonym="dodger")
    make.graded(honest, ex, ratio=1.0, interval=(0.9, 1.1), code=f"# honest\n{solution}")
    make.graded(dodger, ex, ratio=0.1, interval=(0.09, 0.11), code=code)
    Verification.objects.all().delete()
    batch = verification_request(ex.current_version_id, delay_s=0)
    verify_top(batch.id)
    batch.refresh_from_db()
    rows = {row["user"]: row for row in batch.candidates}
    assert rows[dodger.id]["verdict"] == "RUNTIME_ERROR", rows
    assert Entry.objects.get(user=dodger).withdrawn_at is not None
    assert Entry.objects.get(user=honest).withdrawn_at is None
    # Off the ranking: the honest entry is first and alone.
    from leaderboards.selectors import exercise_board

    board = exercise_board(ex, viewer=honest)
    assert [(row.user_id, row.rank_label) for row in board.rows] == [(honest.id, "1")]
    # Graded again (the same code, honest this time), the entry is back with its new numbers.
    make.graded(dodger, ex, ratio=1.05, interval=(0.95, 1.15), code=code)
    back = Entry.objects.get(user=dodger)
    assert back.withdrawn_at is None and back.ratio == pytest.approx(1.05)


# --- 7. a covert channel between two gradings on one host ----------------------------------------

# How busy the host's CPUs were for one second, less this process's own CPU, in jiffies; and
# which other witnesses of the whole machine's activity it can read at all.
CPU_WATCHER = """
import glob, os, time

def _busy_jiffies():
    with open("/proc/stat") as file:
        fields = file.readline().split()[1:]
    return sum(int(value) for value in fields[:3])  # user, nice, system: every CPU of the host

_mine, _before = os.times(), _busy_jiffies()
time.sleep(1.0)
_after, _mine_after = _busy_jiffies(), os.times()
_own = (_mine_after.user + _mine_after.system - _mine.user - _mine.system) * os.sysconf("SC_CLK_TCK")
print("OTHERS_JIFFIES", int(_after - _before - _own), flush=True)

_witnesses = ["/proc/loadavg", "/proc/uptime", "/proc/meminfo", "/proc/vmstat", "/proc/interrupts",
              "/proc/softirqs", "/proc/schedstat", "/proc/pressure/cpu", "/proc/diskstats",
              "/proc/sys/fs/file-nr", "/sys/devices/system/node/node0/meminfo",
              *glob.glob("/sys/devices/system/cpu/cpu0/cpuidle/state*/time"),
              *glob.glob("/sys/devices/system/cpu/cpufreq/policy*/scaling_cur_freq"),
              *glob.glob("/sys/devices/virtual/powercap/*/*/energy_uj")]
_read = []
for _path in _witnesses:
    try:
        with open(_path) as _file:
            if _file.read(64).strip():
                _read.append(_path)
    except OSError:
        pass
try:
    os.getloadavg()  # the sysinfo() call
    _read.append("sysinfo")
except OSError:
    pass
print("HOST_WITNESSES", ",".join(_read) or "none", flush=True)
""" + SOLUTION


def test_a_grading_cannot_watch_how_busy_the_host_is(tmp_path, sandbox):
    """A second submission of the same student (or any other grading the attacker can see),
    graded at the same time on the same host, spins or idles in time slots during its hidden
    checks; this one watches the host's activity counters during its visible phase and prints
    what it reads, which is shown. The host is made busy here (one process spinning) so that the
    channel has something to carry. It worked on runc and local, where /proc/stat, /proc/loadavg
    and their kin are the host's (the reviewer read 199 busy jiffies in 1 s on this 2-core host):
    those sandboxes now hide every such file, and sysinfo() is refused. gVisor shows its own."""
    import re
    import subprocess
    import sys

    spinner = subprocess.Popen([sys.executable, "-c", "while True: pass"])
    try:
        verdict = grade(exercise(tmp_path, checks=CHECKS.split("@perf")[0], toml=TOML), CPU_WATCHER, sandbox)
    finally:
        spinner.kill()
        spinner.wait()
    found = re.search(r"OTHERS_JIFFIES (-?\d+)", verdict.stdout)
    witnesses = re.search(r"HOST_WITNESSES (\S+)", verdict.stdout)
    assert found is not None and witnesses is not None and verdict.verdict == Kind.ACCEPTED, (
        verdict.stdout, verdict.stderr, summary(verdict))
    assert int(found.group(1)) < 20, verdict.stdout  # a spinning core alone is 100 a second
    if sandbox.name != "docker-runsc":  # gVisor's files are the sandbox's own, and sysinfo refused
        assert witnesses.group(1) == "none", verdict.stdout


# --- 8. a library doing the exercise's work -----------------------------------------------------

BROADCAST_AUTOGRAD = REPO / "exercises" / "coding" / "broadcast-autograd"
# The exercise: reverse mode with broadcasting, written by hand. This one hands it to torch.
TORCH_DOES_IT = '''
import numpy as np
import torch


def _plain(tensor):
    array = tensor.numpy().copy()
    return array[()] if array.ndim == 0 else array  # a gradient summed to shape (): a number


class Tensor:
    def __init__(self, data, _t=None):
        self._t = _t if _t is not None else torch.tensor(np.asarray(data, dtype=np.float64), requires_grad=True)
        if self._t.requires_grad and self._t.is_leaf is False:
            self._t.retain_grad()

    @property
    def data(self):
        return self._t.detach().numpy().copy()

    @property
    def grad(self):
        return None if self._t.grad is None else _plain(self._t.grad)

    @staticmethod
    def _wrap(value):
        return value if isinstance(value, Tensor) else Tensor(value)

    def __add__(self, other):
        return Tensor(None, self._t + self._wrap(other)._t)

    def __mul__(self, other):
        return Tensor(None, self._t * self._wrap(other)._t)

    def __matmul__(self, other):
        return Tensor(None, self._t @ self._wrap(other)._t)

    def sum(self, axis=None):
        return Tensor(None, self._t.sum() if axis is None else self._t.sum(dim=axis))

    def exp(self):
        return Tensor(None, self._t.exp())

    def tanh(self):
        return Tensor(None, self._t.tanh())

    def __neg__(self):
        return Tensor(None, -self._t)

    def __sub__(self, other):
        return self + (-self._wrap(other))

    def __radd__(self, other):
        return self + other

    def __rmul__(self, other):
        return self * other

    def __rsub__(self, other):
        return (-self) + other

    def backward(self):
        if self._t.numel() != 1:
            raise ValueError("backward() needs a single-element output; call .sum() first")
        self._t.backward()
'''


# Closed by broadcast-autograd's [[rules]] (torch refused by the static check and the audit hook).
def test_a_library_cannot_do_the_exercises_work(sandbox):
    verdict = grade(load_exercise(BROADCAST_AUTOGRAD), TORCH_DOES_IT, sandbox)
    assert verdict.verdict != Kind.ACCEPTED, summary(verdict)


# --- 9. loading the sandbox around the baseline, and memory no process owns ----------------------

# 8x the baseline's work, plus two threads that spin whenever the student runs: on gVisor,
# where the wall clock decides, they spend the sandbox's CPU quota so that the baseline's
# call after the student's might be throttled. The reviewer measured 6.6x without them, 7.6x with.
QUOTA_BURNER = SOLUTION.split("def work")[0] + """
import threading

def _spin():
    while True:
        pass

for _ in range(2):
    threading.Thread(target=_spin, daemon=True).start()

def work(n):
    burn(0.032)
    return n * 2
"""


def test_spending_the_sandboxs_cpu_quota_does_not_slow_the_baseline_enough(tmp_path, sandbox):
    verdict = grade(exercise(tmp_path), QUOTA_BURNER, sandbox)
    assert verdict.verdict == Kind.TOO_SLOW, (summary(verdict), perf_case(verdict))


# Files in its home (tmpfs: memory no process owns, that no OOM kill gives back) and eight
# children with 200 MB each: more than the whole sandbox may hold.
MEMORY_HOARDER = """
import os, time

try:
    with open(os.path.join(os.environ["HOME"], "fill"), "wb") as file:
        for _ in range(200):
            file.write(b"x" * 2**20)
except OSError:
    pass
for _ in range(8):
    if os.fork() == 0:
        try:
            block = bytearray(200 * 2**20)
            for i in range(0, len(block), 4096):
                block[i] = 1
        except MemoryError:
            pass
        time.sleep(30)
        os._exit(0)
time.sleep(3)
""" + SOLUTION


def test_filling_the_sandboxs_memory_is_the_students_fault_not_a_retry(tmp_path, sandbox):
    """Measured: local and runc kill the children and grade the right add() (ACCEPTED); gVisor
    has the whole sandbox OOM-killed (MEMORY_LIMIT). Never INTERNAL_ERROR, retried for free."""
    verdict = grade(exercise(tmp_path, checks=CHECKS.split("@perf")[0], toml=TOML), MEMORY_HOARDER, sandbox)
    assert verdict.verdict in (Kind.ACCEPTED, Kind.MEMORY_LIMIT), (summary(verdict), verdict.notes)
