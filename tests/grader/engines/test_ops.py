"""Every op of the registry, forward and gradient, against torch.autograd and finite differences."""
from __future__ import annotations

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from grader.engines import OPS, F, tensor

from .conftest import arrays, broadcastable_pair, small_shapes

SETTINGS = settings(max_examples=30, deadline=None)


def eager_and_torch(fn_ours, fn_torch, *values):
    """Run both on float64 copies; return (our output, our grads, torch output, torch grads)."""
    ours = [tensor(v, requires_grad=True) for v in values]
    theirs = [torch.tensor(v, requires_grad=True) for v in values]
    out = fn_ours(*ours)
    ref = fn_torch(*theirs)
    seed = np.random.default_rng(0).standard_normal(ref.shape)
    out.backward(seed)
    ref.backward(torch.tensor(seed))
    return out, [t.grad.data if t.grad is not None else np.zeros_like(t.data) for t in ours], ref, [
        t.grad.numpy() if t.grad is not None else np.zeros_like(t.detach().numpy()) for t in theirs]


def assert_matches_torch(fn_ours, fn_torch, *values, rtol=1e-7, atol=1e-9):
    out, grads, ref, ref_grads = eager_and_torch(fn_ours, fn_torch, *values)
    np.testing.assert_allclose(out.data, ref.detach().numpy(), rtol=rtol, atol=atol)
    assert out.shape == tuple(ref.shape)
    for g, rg in zip(grads, ref_grads, strict=True):
        assert g.shape == rg.shape
        np.testing.assert_allclose(g, rg, rtol=rtol, atol=atol)


BINARY = {
    "add": (F.add, torch.add, {}),
    "sub": (F.sub, torch.sub, {}),
    "mul": (F.mul, torch.mul, {}),
    "div": (F.div, torch.div, {"low_b": 0.5, "high_b": 3.0}),
    "pow": (F.pow, torch.pow, {"low": 0.5, "high": 2.0}),
    "maximum": (F.maximum, torch.maximum, {}),
}


@pytest.mark.parametrize("name", sorted(BINARY))
@SETTINGS
@given(data=st.data())
def test_binary_op_and_gradient_match_torch_with_broadcasting(name, data):
    ours, theirs, bounds = BINARY[name]
    a, b = data.draw(broadcastable_pair(**bounds))
    assert_matches_torch(ours, theirs, a, b)


UNARY = {
    "neg": (F.neg, torch.neg, (-3, 3)),
    "exp": (F.exp, torch.exp, (-3, 3)),
    "log": (F.log, torch.log, (0.1, 5)),
    "tanh": (F.tanh, torch.tanh, (-3, 3)),
    "sigmoid": (F.sigmoid, torch.sigmoid, (-6, 6)),
    "relu": (F.relu, torch.relu, (-3, 3)),
}


@pytest.mark.parametrize("name", sorted(UNARY))
@SETTINGS
@given(data=st.data())
def test_unary_op_and_gradient_match_torch(name, data):
    ours, theirs, (low, high) = UNARY[name]
    x = data.draw(arrays(data.draw(small_shapes), low, high))
    assert_matches_torch(ours, theirs, x)


@st.composite
def reduction_case(draw):
    shape = draw(hnp.array_shapes(min_dims=1, max_dims=3, max_side=4))
    axes = draw(st.one_of(st.none(), st.lists(st.integers(-len(shape), len(shape) - 1), min_size=1,
                                                 max_size=len(shape), unique_by=lambda a: a % len(shape))))
    return draw(arrays(shape)), None if axes is None else tuple(axes), draw(st.booleans())


@pytest.mark.parametrize("name", ["sum", "mean", "max"])
@SETTINGS
@given(case=reduction_case())
def test_reductions_over_axes_match_torch(name, case):
    x, axis, keepdims = case
    dims = tuple(range(x.ndim)) if axis is None else axis
    ours = {"sum": F.sum, "mean": F.mean, "max": F.max}[name]
    theirs = {"sum": torch.sum, "mean": torch.mean, "max": torch.amax}[name]
    assert_matches_torch(lambda t: ours(t, axis=axis, keepdims=keepdims),
                         lambda t: theirs(t, dim=dims, keepdim=keepdims), x)


@SETTINGS
@given(data=st.data())
def test_max_splits_gradient_between_ties_like_torch(data):
    x = data.draw(hnp.arrays(np.float64, (3, 4), elements=st.sampled_from([0.0, 1.0, 2.0])))
    assert_matches_torch(lambda t: F.max(t, axis=1), lambda t: torch.amax(t, dim=1), x)


@st.composite
def matmul_case(draw):
    m, k, n = draw(st.integers(1, 4)), draw(st.integers(1, 4)), draw(st.integers(1, 4))
    batch = draw(st.sampled_from([(), (2,), (1,), (3, 1)]))
    kind = draw(st.sampled_from(["mm", "vec_mat", "mat_vec", "dot", "batched"]))
    if kind == "mm":
        return draw(arrays((m, k))), draw(arrays((k, n)))
    if kind == "vec_mat":
        return draw(arrays((k,))), draw(arrays((k, n)))
    if kind == "mat_vec":
        return draw(arrays((m, k))), draw(arrays((k,)))
    if kind == "dot":
        return draw(arrays((k,))), draw(arrays((k,)))
    other = draw(st.sampled_from([(), (2,), (1,)]))
    return draw(arrays(batch + (m, k))), draw(arrays(other + (k, n)))


@SETTINGS
@given(case=matmul_case())
def test_matmul_with_vectors_and_batches_matches_torch(case):
    a, b = case
    assert_matches_torch(F.matmul, torch.matmul, a, b)


@SETTINGS
@given(data=st.data())
def test_reshape_transpose_broadcast_to_match_torch(data):
    x = data.draw(arrays(data.draw(hnp.array_shapes(min_dims=1, max_dims=3, max_side=4))))
    perm = tuple(data.draw(st.permutations(range(x.ndim))))
    assert_matches_torch(lambda t: F.transpose(t, perm), lambda t: t.permute(*perm), x)
    assert_matches_torch(lambda t: F.reshape(t, (-1,)), lambda t: t.reshape(-1), x)
    target = (2,) + x.shape
    assert_matches_torch(lambda t: F.broadcast_to(t, target), lambda t: t.broadcast_to(target), x)


@SETTINGS
@given(pair=broadcastable_pair(), cond_seed=st.integers(0, 2**16))
def test_where_routes_gradients_like_torch(pair, cond_seed):
    a, b = pair
    shape = np.broadcast_shapes(a.shape, b.shape)
    cond = np.random.default_rng(cond_seed).random(shape) > 0.5
    assert_matches_torch(lambda x, y: F.where(cond, x, y), lambda x, y: torch.where(torch.tensor(cond), x, y), a, b)


@SETTINGS
@given(logits=arrays((3, 5)), labels=hnp.arrays(np.int64, (3,), elements=st.integers(0, 4)))
def test_softmax_and_cross_entropy_composites_match_torch(logits, labels):
    assert_matches_torch(lambda t: F.softmax(t, axis=-1), lambda t: torch.softmax(t, dim=-1), logits)
    assert_matches_torch(lambda t: F.log_softmax(t, axis=0), lambda t: torch.log_softmax(t, dim=0), logits)
    assert_matches_torch(lambda t: F.cross_entropy(t, labels),
                         lambda t: torch.nn.functional.cross_entropy(t, torch.tensor(labels)), logits)


def numeric_gradient(fn, values, index, eps=1e-6):
    """Central differences of sum(fn(...) * seed) with respect to values[index]."""
    x = values[index]
    grad = np.zeros_like(x)
    for i in np.ndindex(x.shape):
        plus, minus = [v.copy() for v in values], [v.copy() for v in values]
        plus[index][i] += eps
        minus[index][i] -= eps
        grad[i] = (fn(*plus) - fn(*minus)) / (2 * eps)
    return grad


DIFFERENTIABLE_SAMPLES = {
    "add": (2, (-2, 2)), "sub": (2, (-2, 2)), "mul": (2, (-2, 2)), "div": (2, (0.5, 2)),
    "pow": (2, (0.5, 2)), "exp": (1, (-2, 2)), "log": (1, (0.5, 3)), "tanh": (1, (-2, 2)),
    "sigmoid": (1, (-3, 3)), "neg": (1, (-2, 2)), "relu": (1, (-2, 2)), "matmul": (2, (-2, 2)),
}


@pytest.mark.parametrize("name", sorted(DIFFERENTIABLE_SAMPLES))
@settings(max_examples=10, deadline=None)
@given(seed=st.integers(0, 2**16))
def test_gradient_matches_finite_differences(name, seed):
    arity, (low, high) = DIFFERENTIABLE_SAMPLES[name]
    rng = np.random.default_rng(seed)
    values = [rng.uniform(low, high, (2, 2)) for _ in range(arity)]
    if name == "relu":  # keep away from the kink, where no derivative exists
        values = [np.where(np.abs(v) < 0.1, 0.5, v) for v in values]
    weights = rng.standard_normal((2, 2))

    def scalar(*arrays):
        return float(np.sum(F.apply(name, *[tensor(a) for a in arrays]).data * weights))

    leaves = [tensor(v, requires_grad=True) for v in values]
    (F.apply(name, *leaves) * weights).sum().backward()
    for k, leaf in enumerate(leaves):
        np.testing.assert_allclose(leaf.grad.data, numeric_gradient(scalar, values, k), rtol=1e-5, atol=1e-6)


def test_every_required_op_is_registered_once_with_rules():
    required = {"add", "sub", "mul", "div", "neg", "pow", "exp", "log", "tanh", "sigmoid", "relu", "matmul",
                "sum", "mean", "reshape", "transpose", "broadcast_to", "where", "maximum"}
    assert required <= set(OPS)
    for op in OPS.values():
        assert callable(op.forward) and callable(op.infer)
        assert op.emit is not None or op.expr is not None, op.name


def test_float32_stays_float32_next_to_python_scalars():
    x = tensor(np.ones(3, np.float32), requires_grad=True)
    y = (2.5 * x + 1).tanh().sum()
    y.backward()
    assert y.dtype == np.float32 and x.grad.dtype == np.float32


COMPOSITE_SAMPLES = {
    "sum": lambda a: F.sum(a, axis=0),
    "mean": lambda a: F.mean(a, axis=1, keepdims=True),
    "max": lambda a: F.max(a, axis=1),
    "reshape": lambda a: F.reshape(a, (4,)),
    "transpose": lambda a: F.transpose(a),
    "broadcast_to": lambda a: F.broadcast_to(a, (3, 2, 2)),
    "where": lambda a: F.where(a > 0, a * a, -a),
    "maximum": lambda a: F.maximum(a, F.transpose(a) * 0.5),
    "softmax": lambda a: F.softmax(a, axis=0),
    "cross_entropy": lambda a: F.cross_entropy(a, np.array([1, 0])),
}


@pytest.mark.parametrize("name", sorted(COMPOSITE_SAMPLES))
@settings(max_examples=10, deadline=None)
@given(seed=st.integers(0, 2**16))
def test_shape_reduction_and_composite_gradients_match_finite_differences(name, seed):
    fn = COMPOSITE_SAMPLES[name]
    rng = np.random.default_rng(seed)
    x = rng.uniform(-2, 2, (2, 2))
    x = np.where(np.abs(x) < 0.1, 0.5, x)  # away from kinks (relu-like where, ties of max)
    weights = rng.standard_normal(np.shape(fn(tensor(x)).data))

    def scalar(a):
        return float(np.sum(fn(tensor(a)).data * weights))

    leaf = tensor(x, requires_grad=True)
    (fn(leaf) * weights).sum().backward()
    np.testing.assert_allclose(leaf.grad.data, numeric_gradient(scalar, [x], 0), rtol=1e-5, atol=1e-6)


@SETTINGS
@given(pair=broadcastable_pair())
def test_comparisons_match_torch_and_carry_no_gradient(pair):
    a, b = pair
    for ours, theirs in [(F.greater, torch.gt), (F.greater_equal, torch.ge), (F.less, torch.lt),
                         (F.less_equal, torch.le), (F.equal, torch.eq)]:
        result = ours(tensor(a, requires_grad=True), tensor(b))
        assert result.dtype == np.bool_ and not result.requires_grad
        np.testing.assert_array_equal(result.data, theirs(torch.tensor(a), torch.tensor(b)).numpy())
