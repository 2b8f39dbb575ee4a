"""Checks for dynamic-shape-recompiles: one compiled graph serves a whole stream of batch sizes.

The probe runs inside each program: it builds a counting backend (it counts the graphs
torch.compile hands it, and the calls that run them), passes it to compile_for_stream, feeds
the stream, and returns the outputs with both counts.
"""
import numpy as np

from grader.harness import check, close, equal, fail, fn, run_in

PROBE_SOURCE = '''
def probe(model_source, weights, sizes):
    import sys
    program = sys.modules.get("submission") or sys.modules["solution"]
    torch._dynamo.reset()
    counts = {"graphs": 0, "runs": 0}

    def backend(gm, example_inputs):
        counts["graphs"] += 1

        def forward(*args):
            counts["runs"] += 1
            return gm.forward(*args)
        return forward

    model = eval(model_source, {"torch": torch, "w": torch.as_tensor(weights)})
    run = program.compile_for_stream(model, backend)
    generator = torch.Generator().manual_seed(len(sizes))
    outputs = [run(torch.randn(n, weights.shape[0], generator=generator, dtype=torch.float64)) for n in sizes]
    return {"outputs": outputs, "graphs": counts["graphs"], "runs": counts["runs"]}
'''
PROBE = fn("lambda *a: (lambda ns: (exec(" + repr(PROBE_SOURCE) + ", ns), ns['probe'](*a))[1])({'torch': torch})")

ROWWISE = "lambda x: torch.tanh(x @ w).sum(-1, keepdim=True) * 0.5"
TWO_LAYERS = "lambda x: torch.relu(x @ w) @ w.T + x"


def stream(student, reference, model, weights, sizes, what):
    weights = np.asarray(weights, dtype=np.float64)
    got = run_in(student, PROBE, model, weights, list(sizes))
    want = run_in(reference, PROBE, model, weights, list(sizes))
    close(got["outputs"], want["outputs"], what=f"{what}: the outputs")
    if got["graphs"] == 0 or got["runs"] < len(sizes):
        fail(f"{what}: only {got['runs']} of {len(sizes)} calls ran a graph compiled with the given backend")
    equal(got["graphs"], 1, what=f"{what}: the number of graphs compiled")


@check(points=2)
def growing_batches_compile_once(student, reference, rng):
    stream(student, reference, ROWWISE, rng.normal(size=(3, 4)), [4, 5, 6, 9], "batches of 4, 5, 6 and 9 rows")


@check(points=2)
def a_batch_of_one_does_not_recompile(student, reference, rng):
    stream(student, reference, ROWWISE, rng.normal(size=(3, 4)), [8, 1, 3, 1], "batches of 8, 1, 3 and 1 rows")


@check(points=1)
def the_first_batch_is_a_single_row(student, reference, rng):
    stream(student, reference, ROWWISE, rng.normal(size=(2, 5)), [1, 2, 7], "batches of 1, 2 and 7 rows")


@check(points=3)
def a_long_random_stream(student, reference, rng):
    sizes = [int(n) for n in rng.integers(1, 65, size=25)] + [1]
    stream(student, reference, TWO_LAYERS, rng.normal(size=(6, 6)) * 0.3, sizes, "25 random batch sizes")


@check(points=1)
def each_stream_starts_afresh(student, reference, rng):
    for sizes in ([2, 3], [5, 1, 17]):
        stream(student, reference, ROWWISE, rng.normal(size=(4, 3)), sizes, f"a stream of {sizes}")
