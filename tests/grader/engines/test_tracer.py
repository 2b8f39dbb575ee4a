"""The tracer turns eager-style Python into a static graph, and refuses value-dependent branches."""
from __future__ import annotations

import inspect

import numpy as np
import pytest

from grader.engines import F, TracerError, jit, tensor, trace


def mlp(x, w1, w2):
    h = F.relu(x @ w1)
    if h.shape[-1] > 2:          # control flow on a shape: known while tracing
        h = F.tanh(h)
    return F.softmax(h @ w2, axis=-1)


def test_traced_graph_computes_what_eager_code_computes():
    rng = np.random.default_rng(0)
    x, w1, w2 = rng.standard_normal((5, 3)), rng.standard_normal((3, 4)), rng.standard_normal((4, 2))
    traced = trace(mlp, x, w1, w2)
    assert [p.name for p in traced.inputs] == ["x", "w1", "w2"]
    assert any(n.op == "tanh" for n in traced.graph.nodes)
    eager = mlp(tensor(x), tensor(w1), tensor(w2))
    np.testing.assert_allclose(traced(x, w1, w2), eager.data, rtol=1e-12)
    x2 = rng.standard_normal((5, 3))
    np.testing.assert_allclose(traced(x2, w1, w2), mlp(tensor(x2), tensor(w1), tensor(w2)).data, rtol=1e-12)


def branchy(x):
    total = F.sum(x)
    if total > 0:
        return x * 2
    return -x


def test_if_on_a_value_raises_naming_the_users_line():
    with pytest.raises(TracerError) as caught:
        trace(branchy, np.ones(3))
    line = inspect.getsourcelines(branchy)[1] + 2
    message = str(caught.value)
    assert f"test_tracer.py:{line}" in message and "if total > 0" in message
    assert "where(" in message
    assert branchy(tensor(np.ones(3))).data.tolist() == [2.0, 2.0, 2.0]   # fine eagerly


def test_item_and_float_on_a_traced_value_are_refused():
    def uses_item(x):
        return x * F.sum(x).item()

    def uses_float(x):
        return x * float(F.mean(x))

    for fn in (uses_item, uses_float):
        with pytest.raises(TracerError, match="data-dependent"):
            trace(fn, np.ones(2))


def test_jit_compiles_once_per_signature_and_captures_eager_tensors():
    weight = tensor(np.array([[2.0], [3.0]]))

    @jit
    def project(x):
        return F.sum(x @ weight)

    assert project(np.ones((4, 2))) == pytest.approx(20.0)
    assert project(np.full((4, 2), 2.0)) == pytest.approx(40.0)
    assert len(project.cache) == 1
    assert project(np.ones((1, 2))) == pytest.approx(5.0)
    assert len(project.cache) == 2
