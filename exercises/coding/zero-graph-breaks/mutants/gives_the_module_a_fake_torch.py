# The fake: keep the starter's model, which breaks the graph three times, and give the
# module a `torch` of its own whose explain() reports no break. The checks used to reach
# torch._dynamo through this module's `torch`; their own torch finds the breaks.
import types

import torch as real


class _NoBreaks:
    graph_break_count = 0
    break_reasons = []


torch = types.SimpleNamespace(
    _dynamo=types.SimpleNamespace(reset=lambda: None, explain=lambda fn: lambda *args: _NoBreaks()),
    tanh=real.tanh,
)


def model(x, w):
    h = x @ w
    print("mean activation:", h.mean().item())
    if h.sum() > 0:
        h = h * 2.0
    else:
        h = h - 1.0
    scale = float(h.abs().max()) + 1e-6
    return real.tanh(h / scale)
