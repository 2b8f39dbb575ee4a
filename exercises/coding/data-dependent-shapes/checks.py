"""Checks for data-dependent-shapes: the same statistics as the per-row loop, captured by
torch.compile as one graph.

The probe runs inside each program: eagerly first, then through torch.compile with its default
settings and a backend that counts graphs (a graph break shows as a second graph).
"""
from grader.harness import check, close, fail, fn, run_in, tensor

PROBE_SOURCE = '''
def probe(x, threshold):
    import sys
    program = sys.modules.get("submission") or sys.modules["solution"]
    eager = program.masked_stats(x, threshold)
    torch._dynamo.reset()
    graphs = []

    def backend(gm, example_inputs):
        graphs.append(gm)
        return gm.forward

    compiled = torch.compile(program.masked_stats, backend=backend)(x, threshold)
    return {"eager": eager, "compiled": compiled, "graphs": len(graphs)}
'''
PROBE = fn("lambda *a: (lambda ns: (exec(" + repr(PROBE_SOURCE) + ", ns), ns['probe'](*a))[1])({'torch': torch})")


def same(student, reference, x, threshold, what):
    x = tensor(x)
    got = run_in(student, PROBE, x, threshold)
    want = run_in(reference, PROBE, x, threshold)
    close(list(got["eager"]), list(want["eager"]), what=f"{what}: (count, mean, max)")
    close(list(got["compiled"]), list(want["eager"]), what=f"{what}: the compiled (count, mean, max)")
    if got["graphs"] != 1:
        fail(f"{what}: torch.compile captured {got['graphs']} graphs; a graph break splits the function, one graph is the goal")


@check(points=2)
def a_small_matrix(student, reference, rng):
    x = [[0.5, 2.0, -1.0, 3.0], [1.5, 1.2, 0.0, -4.0], [-2.0, 0.9, 4.5, 1.1]]
    same(student, reference, x, 1.0, "masked_stats(x, 1.0) of a 3x4 matrix")


@check(points=2)
def a_row_with_nothing_above(student, reference, rng):
    x = [[0.1, 0.2, 0.3], [5.0, -5.0, 6.0]]
    same(student, reference, x, 1.0, "masked_stats(x, 1.0) where the first row has nothing above 1.0")


@check(points=3)
def random_matrices(student, reference, rng):
    for rows, cols in ((1, 1), (6, 9), (40, 33)):
        threshold = float(rng.normal())
        same(student, reference, rng.normal(size=(rows, cols)) * 2.0, threshold, f"a random {rows}x{cols} matrix")


@check(points=1)
def every_entry_above_or_none(student, reference, rng):
    x = rng.normal(size=(5, 7))
    same(student, reference, x, -100.0, "a threshold below every entry")
    same(student, reference, x, 100.0, "a threshold above every entry")
