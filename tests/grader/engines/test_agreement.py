"""Static and dynamic engines agree on random graphs, with every pass on or off."""
from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from grader.engines import F, Graph, gradients, tensor

STEPS = {
    "add": lambda a, b: a + b,
    "sub": lambda a, b: a - b,
    "mul": lambda a, b: a * b,
    "div": lambda a, b: a / (1.5 + b * b),
    "max": lambda a, b: F.maximum(a, b),
    "where": lambda a, b: F.where(a > b, a * 2, b),
    "tanh": lambda a, b: F.tanh(a),
    "sigmoid": lambda a, b: F.sigmoid(a),
    "relu": lambda a, b: F.relu(a) + 0.1 * a,
    "exp": lambda a, b: F.exp(F.tanh(a)),
    "log": lambda a, b: F.log(1 + a * a),
    "pow": lambda a, b: (1.1 + F.tanh(a)) ** 2.5,
    "sum_rows": lambda a, b: F.sum(a, axis=-1, keepdims=True),
    "mean_cols": lambda a, b: F.mean(a, axis=0, keepdims=True) * b,
    "matmul": lambda a, b: (
        F.matmul(F.broadcast_to(a, (3, 4)), F.transpose(F.broadcast_to(b, (3, 4)))) @ F.broadcast_to(a, (3, 4))
    ),
    "reshape": lambda a, b: F.reshape(F.reshape(F.broadcast_to(a, (3, 4)), (4, 3)), (3, 4)),
    "softmax": lambda a, b: F.softmax(F.broadcast_to(a, (3, 4)), axis=-1),
}

INPUT_SHAPES = [(3, 4), (4,), (3, 1)]


@st.composite
def random_program(draw):
    steps = draw(st.lists(st.tuples(st.sampled_from(sorted(STEPS)), st.integers(0, 50), st.integers(0, 50)),
                          min_size=1, max_size=8))
    seed = draw(st.integers(0, 2**16))
    return steps, seed


def run_program(steps, inputs):
    """The same Python builds a tape (tensors) or a graph (nodes): F dispatches on the value kind."""
    pool = list(inputs)
    for name, i, j in steps:
        pool.append(STEPS[name](pool[i % len(pool)], pool[j % len(pool)]))
    weights = [0.5 + 0.1 * k for k in range(len(pool))]
    # a weight for every value of the pool, more than there are steps: zip stops with the steps
    weighted = sum(F.sum(v) * w for v, w in zip(pool[len(inputs):], weights, strict=False))
    return F.sum(weighted + F.sum(pool[-1] * pool[0]))


@settings(max_examples=40, deadline=None)
@given(program=random_program(), options=st.sampled_from([
    {}, {"optimize": False, "fuse": False, "plan_memory": False}, {"fuse": False}, {"plan_memory": False}]))
def test_static_and_dynamic_agree_on_values_and_gradients(program, options):
    steps, seed = program
    rng = np.random.default_rng(seed)
    values = [rng.uniform(-2, 2, shape) for shape in INPUT_SHAPES]

    leaves = [tensor(v, requires_grad=True) for v in values]
    eager_loss = run_program(steps, leaves)
    eager_loss.backward()

    g = Graph()
    placeholders = [g.placeholder(v.shape, "float64", name=f"in{k}") for k, v in enumerate(values)]
    loss = run_program(steps, placeholders)
    grads = gradients(loss, placeholders)
    executable = g.compile([loss] + grads, **options)
    for _ in range(2):  # a second run must not see the first run's buffers
        got = executable.run({p: v for p, v in zip(placeholders, values, strict=True)})
        np.testing.assert_allclose(got[0], eager_loss.data, rtol=1e-9, atol=1e-9)
        for leaf, static_grad in zip(leaves, got[1:], strict=True):
            # an input the program never read has no eager gradient and a zero static one
            eager_grad = leaf.grad.data if leaf.grad is not None else np.zeros_like(leaf.data)
            np.testing.assert_allclose(static_grad, eager_grad, rtol=1e-9, atol=1e-9)
