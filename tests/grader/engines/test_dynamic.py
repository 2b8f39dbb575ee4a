"""The eager engine: values as lines run, the tape, backward, hooks, no_grad, freed graphs."""
from __future__ import annotations

import inspect

import numpy as np
import pytest
import torch

from grader.engines import F, FreedGraphError, GradientError, ShapeError, grad, no_grad, tensor


def test_values_exist_as_soon_as_a_line_runs():
    w, x, b = tensor(2), tensor(5), tensor(-2)
    z = w * x + b
    assert z.item() == 8
    assert (1 if z.item() >= 0 else 0) == 1


def test_backward_accumulates_across_calls_and_uses():
    x = tensor([1.0, 2.0], requires_grad=True)
    (x * x).sum().backward()
    (3 * x).sum().backward()
    np.testing.assert_allclose(x.grad.data, 2 * np.array([1.0, 2.0]) + 3)


def test_value_used_twice_gets_both_contributions():
    x = tensor(3.0, requires_grad=True)
    y = x * x + x
    y.backward()
    assert x.grad.item() == pytest.approx(7.0)


def test_python_control_flow_just_works():
    x = tensor(np.array([0.5, -1.0]), requires_grad=True)
    y = x
    for _ in range(3):
        y = y * 2 if y.sum().item() < 10 else y - 1
    y.sum().backward()
    xt = torch.tensor([0.5, -1.0], requires_grad=True, dtype=torch.float64)
    yt = xt
    for _ in range(3):
        yt = yt * 2 if yt.sum().item() < 10 else yt - 1
    yt.sum().backward()
    np.testing.assert_allclose(x.grad.data, xt.grad.numpy())


def test_deep_chain_needs_no_recursion():
    x = tensor(1.0, requires_grad=True)
    y = x
    for _ in range(20000):
        y = y * 1.0001
    y.backward()
    assert x.grad.item() == pytest.approx(1.0001 ** 20000, rel=1e-9)


def test_second_backward_through_freed_graph_is_refused_with_advice():
    x = tensor([1.0, 2.0], requires_grad=True)
    y = (x.exp() * x).sum()
    y.backward()
    first_line = inspect.currentframe().f_lineno - 1
    with pytest.raises(FreedGraphError) as caught:
        y.backward()
    message = str(caught.value)
    assert "retain_graph=True" in message
    assert f"test_dynamic.py:{first_line}" in message


def test_retain_graph_allows_a_second_backward():
    x = tensor([1.0, 2.0], requires_grad=True)
    y = (x.exp() * x).sum()
    y.backward(retain_graph=True)
    first = x.grad.data.copy()
    y.backward()
    np.testing.assert_allclose(x.grad.data, 2 * first)


def test_no_grad_records_nothing():
    x = tensor([1.0], requires_grad=True)
    with no_grad():
        y = x * 2
    assert not y.requires_grad and y.grad_fn is None
    with pytest.raises(GradientError):
        y.backward()

    @no_grad()
    def doubled(t):
        return t * 2
    assert doubled(x).grad_fn is None
    assert (x * 2).grad_fn == "mul"


def test_hooks_see_and_may_replace_gradients():
    x = tensor([1.0, 2.0], requires_grad=True)
    seen = []
    h = x * 3
    h.register_hook(lambda g: seen.append(g.data.copy()))
    handle = x.register_hook(lambda g: g * 10)
    (h * h).sum().backward()
    np.testing.assert_allclose(seen[0], 2 * 3 * np.array([1.0, 2.0]))
    np.testing.assert_allclose(x.grad.data, 10 * 18 * np.array([1.0, 2.0]))
    handle.remove()
    x.grad = None
    (x * 1).sum().backward()
    np.testing.assert_allclose(x.grad.data, [1.0, 1.0])


def test_retain_grad_keeps_an_intermediate_gradient():
    x = tensor([1.0, 2.0], requires_grad=True)
    h = x * x
    h.retain_grad()
    h.sum().backward()
    np.testing.assert_allclose(h.grad.data, [1.0, 1.0])


def test_grad_returns_gradients_without_touching_dot_grad():
    x = tensor([1.0, 2.0], requires_grad=True)
    w = tensor([3.0, 4.0], requires_grad=True)
    (gx,) = grad((x * w).sum(), [x])
    np.testing.assert_allclose(gx.data, [3.0, 4.0])
    assert x.grad is None and w.grad is None


def test_create_graph_gives_second_derivatives_like_torch():
    x = tensor([0.3, -0.7], requires_grad=True)
    y = (x.tanh() * x.exp()).sum()
    (gx,) = grad(y, [x], create_graph=True)
    gx.sum().backward()
    xt = torch.tensor([0.3, -0.7], dtype=torch.float64, requires_grad=True)
    yt = (xt.tanh() * xt.exp()).sum()
    (gt,) = torch.autograd.grad(yt, [xt], create_graph=True)
    gt.sum().backward()
    np.testing.assert_allclose(gx.data, gt.detach().numpy())
    np.testing.assert_allclose(x.grad.data, xt.grad.numpy())


def test_backward_of_a_vector_needs_a_gradient():
    x = tensor([1.0, 2.0], requires_grad=True)
    with pytest.raises(GradientError, match="single value"):
        (x * 2).backward()


def test_eager_shape_error_names_the_users_line():
    a, b = tensor(np.ones((2, 3))), tensor(np.ones((4,)))
    with pytest.raises(ShapeError) as caught:
        a + b
    line = inspect.currentframe().f_lineno - 1
    assert f"test_dynamic.py:{line}" in str(caught.value)
    assert "add" in str(caught.value)


def test_integer_tensors_cannot_require_grad():
    with pytest.raises(GradientError, match="floating point"):
        tensor([1, 2], requires_grad=True)
    assert F.relu(tensor([-1, 2])).data.tolist() == [0, 2]
