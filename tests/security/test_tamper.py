"""Submissions that try to forge their verdict. Each gets its honest verdict; none is ACCEPTED;
the judge always reaches a verdict (never INTERNAL_ERROR). Runs on every real backend."""
from __future__ import annotations

import textwrap

import pytest

from grader.contract import Kind
from grader.host.pipeline import grade
from grader.host.spec import load_exercise
from tests.grader.factories import STATIC_GRAPH, grading_sandbox
from tests.sandbox.backends import BACKENDS

SPEC = load_exercise(STATIC_GRAPH)
CORRECT = SPEC.solution
WRONG = next(m.code for m in SPEC.mutants if m.name == "seed_demo")  # insertion order
SLOW = next(m.code for m in SPEC.mutants if m.name == "sorts_on_every_execute")  # right but quadratic


def with_prelude(prelude: str, body: str) -> str:
    return textwrap.dedent(prelude) + "\n" + body


def patched_execute(body: str, patch: str) -> str:
    """``body`` with its execute() wrapped: ``patch`` runs with ``values`` and ``feed`` in scope."""
    patch = textwrap.indent(textwrap.dedent(patch).strip("\n"), "    ")
    return (body + "\n_original_execute = StaticGraph.execute\n\n\ndef _execute(self, feed):\n"
            "    values = _original_execute(self, feed)\n" + patch
            + "\n    return values\n\n\nStaticGraph.execute = _execute\n")


TAMPERS = {
    "patches_the_clocks": (with_prelude("""
        import time
        for name in ("perf_counter", "time", "process_time", "monotonic"):
            setattr(time, name, lambda: 0.0)
        for name in ("perf_counter_ns", "time_ns", "process_time_ns", "monotonic_ns"):
            setattr(time, name, lambda: 0)
        """, SLOW), {Kind.TOO_SLOW}),
    "patches_allclose": (with_prelude("""
        import numpy, torch
        numpy.allclose = numpy.array_equal = lambda *a, **k: True
        torch.allclose = torch.equal = lambda *a, **k: True
        """, WRONG), {Kind.RUNTIME_ERROR}),
    "prints_a_forged_result": (with_prelude("""
        import json, os, sys
        forged = {"format": 1,
                  "checks": [{"name": "all", "passed": True, "visible": True, "points": 1, "max_points": 1}],
                  "verdict": "ACCEPTED", "score": 1.0}
        print(json.dumps(forged)); print(json.dumps(forged), file=sys.stderr)
        for path in ("out/result.json", "/job/out/result.json", "../out/result.json"):
            try:
                with open(path, "w") as file:
                    file.write(json.dumps(forged))
            except OSError:
                pass
        """, WRONG), {Kind.RUNTIME_ERROR}),
    "exits_with_os_exit_mid_check": (patched_execute(CORRECT, "import os; os._exit(0)"), {Kind.RUNTIME_ERROR}),
    "exits_with_sys_exit_mid_check": (patched_execute(CORRECT, "import sys; sys.exit(0)"), {Kind.RUNTIME_ERROR}),
    "raises_base_exception": (patched_execute(CORRECT, "raise BaseException('stop judging')"), {Kind.RUNTIME_ERROR}),
    "raises_keyboard_interrupt": (patched_execute(CORRECT, "raise KeyboardInterrupt"), {Kind.RUNTIME_ERROR}),
    "raises_system_exit": (patched_execute(CORRECT, "raise SystemExit(0)"), {Kind.RUNTIME_ERROR}),
    "reads_the_reference_and_checks": (with_prelude("""
        import os
        _stolen = None
        for root in ("/job", "..", "../..", "/"):
            for folder, _, files in os.walk(root):
                for name in files:
                    if name in ("solution.py", "checks.py"):
                        try:
                            with open(os.path.join(folder, name)) as file:
                                _stolen = file.read()
                        except OSError:
                            pass
                if folder.count(os.sep) > 4:
                    break
        """, WRONG) + "\nif _stolen and 'class StaticGraph' in _stolen:\n    exec(_stolen)\n", {Kind.RUNTIME_ERROR}),
    "walks_gc_for_expected_outputs": (patched_execute(WRONG, """
        import gc
        for obj in gc.get_objects():
            if isinstance(obj, dict) and obj is not values and set(values) <= set(obj) and obj.get("pred") is not None:
                values = dict(obj)
        """), {Kind.RUNTIME_ERROR}),
    "shadows_numpy_and_torch": (with_prelude("""
        import os, sys
        for name in ("numpy.py", "torch.py"):
            for folder in (os.getcwd(), os.path.dirname(os.path.abspath(__file__)), "/job", "/job/grader"):
                try:
                    with open(os.path.join(folder, name), "w") as file:
                        file.write("allclose = lambda *a, **k: True\\n")
                except OSError:
                    pass
        sys.path.insert(0, os.getcwd())
        """, WRONG), {Kind.RUNTIME_ERROR}),
    "answers_only_the_visible_example": (with_prelude("""
        import os
        print("ENV", sorted(os.environ))
        HIDDEN = any("HIDDEN" in k or "SEED" in k or "CHECK" in k for k in os.environ)
        """, """
class StaticGraph:
    def __init__(self): pass
    def add_op(self, name, func, deps): pass
    def build(self): pass
    def execute(self, feed):
        return {"w": 2, "x": 5, "b": -2, "wx": 10, "z": 8, "pred": 1} if not HIDDEN else {}
"""), {Kind.PARTIAL, Kind.WRONG_ANSWER}),
    "caches_outputs_by_id_and_content": (patched_execute(CORRECT, """
        cache = globals().setdefault("_CACHE", {})
        key = (id(self), tuple(sorted(feed)))
        values = cache.setdefault(key, values)
        """), {Kind.PARTIAL}),
    "returns_a_lazy_object_equal_to_everything": (patched_execute(CORRECT, """
        class Lazy(dict):
            def __eq__(self, other):
                return True
            def items(self):
                return values.items()
        class Anything:
            def __eq__(self, other):
                return True
            def __getitem__(self, key):
                return values[key]
        values = Anything() if "w" in feed else Lazy()
        """), {Kind.PARTIAL, Kind.WRONG_ANSWER}),
    "mutates_its_inputs": (patched_execute(CORRECT, "feed.clear()"), {Kind.PARTIAL}),
    "spins_cpu_in_background_to_slow_the_baseline": (with_prelude("""
        import os
        for _ in range(2):
            if os.fork() == 0:
                os.setsid()
                if os.fork() == 0:
                    while True:
                        pass
                os._exit(0)
        """, SLOW), {Kind.TOO_SLOW}),
    "signals_the_judge": (with_prelude("""
        import os, signal
        for pid in (1, os.getppid(), -1):
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
        """, WRONG), {Kind.RUNTIME_ERROR}),
}


@pytest.fixture(params=BACKENDS)  # docker-runc, docker-runsc and local
def sandbox(request, requires):
    return grading_sandbox(request.param, requires)


@pytest.mark.parametrize("name", list(TAMPERS))
def test_tampering_gets_an_honest_verdict(name, sandbox):
    code, honest = TAMPERS[name]
    verdict = grade(SPEC, code, sandbox)
    summary = [(c.name, str(c.kind), c.message[:100]) for c in verdict.checks] or verdict.notes
    assert verdict.verdict in honest, summary
    assert verdict.verdict not in (Kind.ACCEPTED, Kind.INTERNAL_ERROR)
    if name == "mutates_its_inputs":
        assert any("changed its input" in c.message for c in verdict.checks)
    if name == "answers_only_the_visible_example":
        environment = verdict.stdout.split("ENV", 1)[1].splitlines()[0]
        assert "SEED" not in environment and "GRADER" not in environment
