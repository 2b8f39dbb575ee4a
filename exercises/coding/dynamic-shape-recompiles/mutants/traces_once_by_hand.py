# The fake: no torch.compile at all. Trace the model once with torch.fx and hand the graph
# to the checks' counting backend ourselves: "1 graph", every call "ran" it. Dynamo never saw it,
# so its batch dimension is not symbolic, and the checks refuse it.
import torch


def compile_for_stream(fn, backend):
    graph = torch.fx.symbolic_trace(fn)
    forward = backend(graph, [])

    def run(x):
        return forward(x)

    return run
