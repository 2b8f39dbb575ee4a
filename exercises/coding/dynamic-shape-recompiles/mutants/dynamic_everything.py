# Pads batches of one, but asks for dynamic=True: every size of every tensor becomes symbolic,
# the weights' too, and duck sizing ties a batch size to a weight size that happens to equal it.
import torch


def compile_for_stream(fn, backend):
    compiled = torch.compile(fn, backend=backend, dynamic=True)

    def run(x):
        if x.shape[0] == 1:
            return compiled(torch.cat([x, x]))[:1]
        return compiled(x)

    return run
