"""Reference solution: mark only the batch dimension dynamic, before the first call, and never
show the compiler a batch of one (0/1 specialisation would give it a graph of its own)."""
import torch


def compile_for_stream(fn, backend):
    compiled = torch.compile(fn, backend=backend)

    def run(x):
        if x.shape[0] == 1:  # rows are independent: pad to two rows, keep the first
            return run(torch.cat([x, x]))[:1]
        torch._dynamo.mark_dynamic(x, 0)  # this tensor's dim 0 is symbolic; nothing else is
        return compiled(x)

    return run
