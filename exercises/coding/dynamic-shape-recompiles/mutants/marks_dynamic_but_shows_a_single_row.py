# The batch dimension is marked dynamic, but a batch of one row still reaches the compiler,
# and 0/1 specialisation compiles a second graph for it.
import torch


def compile_for_stream(fn, backend):
    compiled = torch.compile(fn, backend=backend)

    def run(x):
        torch._dynamo.mark_dynamic(x, 0)
        return compiled(x)

    return run
