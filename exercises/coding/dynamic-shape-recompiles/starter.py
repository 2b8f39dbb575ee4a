import torch


def compile_for_stream(fn, backend):
    """A callable that returns fn(x) for batches x of any number of rows, through graphs that
    torch.compile(..., backend=backend) compiles: as few of them as possible."""
    return torch.compile(fn, backend=backend)
