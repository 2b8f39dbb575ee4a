"""The static engine: building computes nothing, compile() freezes, passes keep results, errors point home."""
from __future__ import annotations

import inspect
import json
import tracemalloc

import numpy as np
import pytest

from grader.engines import (
    CycleError,
    F,
    Graph,
    GraphFrozenError,
    MissingInputError,
    NoValueError,
    ShapeError,
    gradients,
    tensor,
)


def here() -> int:
    """The caller's line number."""
    return inspect.currentframe().f_back.f_lineno


def test_building_computes_nothing_and_the_plan_exists_before_values():
    g = Graph()
    x = g.placeholder((3,), name="x")
    y = (x * 2).exp()
    assert y.shape == (3,) and y.dtype == np.float32
    with pytest.raises(NoValueError):
        y.numpy()
    executable = g.compile(y)
    assert "exp" in str(executable.plan)
    for feed in (np.zeros(3), np.ones(3), np.arange(3.0)):
        np.testing.assert_allclose(executable.run({"x": feed}), np.exp(2 * feed.astype(np.float32)), rtol=1e-6)


def test_adding_an_op_after_compile_is_refused_clearly():
    g = Graph("frozen")
    x = g.placeholder((2,), name="x")
    g.compile(x + 1)
    with pytest.raises(GraphFrozenError) as caught:
        line = here(); x * 3  # noqa: E702
    assert f"test_static.py:{line}" in str(caught.value)
    assert "frozen" in str(caught.value) and "compile()" in str(caught.value)


def test_shape_mismatch_names_the_op_and_the_users_line():
    g = Graph()
    a = g.placeholder((2, 3), name="a")
    b = g.placeholder((4, 5), name="b")
    with pytest.raises(ShapeError) as caught:
        line = here(); a @ b  # noqa: E702
    message = str(caught.value)
    assert message.startswith("matmul at") and f"test_static.py:{line}" in message
    with pytest.raises(ShapeError) as caught:
        line = here(); a + b  # noqa: E702
    assert f"test_static.py:{line}" in str(caught.value) and "add" in str(caught.value)


def test_shape_mismatch_of_nodes_built_by_name_is_found_at_compile_time():
    g = Graph()
    line = here(); g.op("add", ["a", "b"], name="sum")  # noqa: E702
    g.placeholder((2,), name="a")
    g.placeholder((3,), name="b")
    with pytest.raises(ShapeError) as caught:
        g.compile("sum")
    assert f"test_static.py:{line}" in str(caught.value) and "'sum'" in str(caught.value)


def test_cycle_is_detected_with_the_nodes_on_it():
    g = Graph()
    x = g.placeholder((1,), name="x")
    g.op("add", ["b", x], name="a")
    g.op("mul", ["a", x], name="b")
    with pytest.raises(CycleError) as caught:
        g.compile("a")
    assert "a (" in str(caught.value) and "b (" in str(caught.value)


def test_missing_input_and_missing_feed_are_reported():
    g = Graph()
    line = here(); g.op("neg", ["ghost"], name="n")  # noqa: E702
    with pytest.raises(MissingInputError) as caught:
        g.compile("n")
    assert "'ghost'" in str(caught.value) and f"test_static.py:{line}" in str(caught.value)
    h = Graph()
    x = h.placeholder((2,), name="x")
    executable = h.compile(x * 2)
    with pytest.raises(MissingInputError, match="'x'"):
        executable.run({})
    with pytest.raises(ShapeError, match="shape"):
        executable.run({"x": np.ones(3)})


def build_sample(g: Graph):
    """A graph with every optimisation opportunity: constants, repeats, dead code, chains."""
    x = g.placeholder((4, 3), name="x")
    w = g.variable(np.linspace(-1, 1, 6).reshape(3, 2), dtype="float64", name="w")
    c = g.constant(2.0, dtype="float64") * g.constant(3.0, dtype="float64")  # foldable
    h = F.tanh(x @ w) * c + 0
    h2 = F.tanh(x @ w) * c                                                  # repeats h
    _unused = F.exp(h) * 100                                                # dead
    loss = F.mean(F.sigmoid(h + h2) * 1)
    (dw,) = gradients(loss, [w])
    return x, w, loss, dw


@pytest.mark.parametrize("options", [
    dict(optimize=False, fuse=False, plan_memory=False),
    dict(optimize=True, fuse=False, plan_memory=False),
    dict(optimize=True, fuse=True, plan_memory=False),
    dict(optimize=True, fuse=False, plan_memory=True),
    dict(optimize=True, fuse=True, plan_memory=True),
    dict(optimize=False, fuse=True, plan_memory=True),
])
def test_every_pass_preserves_results(options):
    g = Graph()
    x, w, loss, dw = build_sample(g)
    executable = g.compile([loss, dw], **options)
    rng = np.random.default_rng(1)
    for _ in range(3):  # several runs: reused buffers must not leak values between runs
        feed = rng.standard_normal((4, 3)).astype(np.float32)
        got_loss, got_dw = executable.run({"x": feed})
        wt = tensor(g.value_of(w), requires_grad=True)
        h = F.tanh(tensor(feed.astype(np.float64)) @ wt) * 6.0
        expected = F.mean(F.sigmoid(h + h))
        expected.backward()
        np.testing.assert_allclose(got_loss, expected.data, rtol=1e-6)
        np.testing.assert_allclose(got_dw, wt.grad.data, rtol=1e-6, atol=1e-9)


def test_optimisation_passes_do_what_they_say():
    g = Graph()
    _, _, loss, dw = build_sample(g)
    executable = g.compile([loss, dw])
    notes = {name: " ".join(program.notes) for name, program in executable.stages}
    ops_after = [n.op for n in executable.stage("dead_code").nodes]
    assert "exp" not in ops_after                       # dead code removed
    assert "computed" in notes["fold_constants"] and not notes["fold_constants"].startswith("computed 0")
    assert not notes["common_subexpressions"].startswith("merged 0")
    cse_ops = [n.op for n in executable.stage("common_subexpressions").nodes]
    assert cse_ops.count("tanh") == 1
    plain = Graph()
    _, _, loss2, dw2 = build_sample(plain)
    unfused = plain.compile([loss2, dw2], fuse=False)
    assert executable.kernel_count < unfused.kernel_count
    assert executable.op_count == unfused.op_count


def test_fused_kernel_writes_into_preallocated_buffers():
    g = Graph()
    x = g.placeholder((64, 64), name="x")
    y = F.sigmoid(F.tanh(x * 2 + 1) * x - 3)
    z = F.sum(y, axis=1)
    executable = g.compile(z)
    assert executable.kernel_count == 2          # one fused elementwise kernel + the sum
    assert "out=" in executable.source and "def fused_0" in executable.source
    feed = np.random.default_rng(0).standard_normal((64, 64)).astype(np.float32)
    executable.run({"x": feed})
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        tracemalloc.reset_peak()
        result = executable.run({"x": feed})
        extra = tracemalloc.get_traced_memory()[1] - before
    finally:
        tracemalloc.stop()
    assert extra < feed.nbytes // 4   # no intermediate allocated at run time: only the small output
    expected = 1 / (1 + np.exp(-(np.tanh(feed * 2 + 1) * feed - 3)))
    np.testing.assert_allclose(result, expected.sum(axis=1), rtol=1e-5)


def test_memory_plan_reuses_buffers_and_reports_peak():
    g = Graph()
    x = g.placeholder((128, 128), name="x")
    h = x
    for k in range(8):
        h = F.tanh(h @ g.variable(np.eye(128, dtype=np.float32) * 0.5, name=f"w{k}"))
    loss = F.sum(h)
    planned = g.compile(loss, fuse=False)
    assert planned.peak_bytes <= 0.5 * planned.unplanned_bytes
    assert planned.peak_bytes == sum(planned.plan.buffers)
    graph2 = Graph()
    x2 = graph2.placeholder((128, 128), name="x")
    h2 = x2
    for k in range(8):
        h2 = F.tanh(h2 @ graph2.variable(np.eye(128, dtype=np.float32) * 0.5, name=f"w{k}"))
    unplanned = graph2.compile(F.sum(h2), fuse=False, plan_memory=False)
    assert unplanned.peak_bytes == unplanned.unplanned_bytes > planned.peak_bytes
    feed = np.ones((128, 128), np.float32)
    np.testing.assert_allclose(planned.run({"x": feed}), unplanned.run({"x": feed}), rtol=1e-6)


def test_plan_exports_json_and_dot_for_every_stage():
    g = Graph("export")
    _, _, loss, dw = build_sample(g)
    executable = g.compile([loss, dw])
    data = json.loads(executable.to_json_str())
    assert [s["pass"] for s in data["stages"]][0] == "order"
    assert data["stages"][-1]["pass"] == "plan_memory"
    assert data["kernel_count"] == executable.kernel_count and data["peak_bytes"] == executable.peak_bytes
    assert all("source" in n and "line" in n["source"] for n in data["stages"][0]["nodes"])
    for stage in ("order", "fold_constants", -1):
        dot = executable.to_dot(stage)
        assert dot.startswith("digraph") and "->" in dot and dot.rstrip().endswith("}")
    assert "fused" in executable.to_dot()
    assert "== plan_memory" in executable.explain()


def test_variables_keep_state_between_runs():
    g = Graph()
    w = g.variable(np.array([1.0, 2.0]), name="w")
    x = g.placeholder((2,), dtype="float64", name="x")
    executable = g.compile(F.sum(w * x))
    assert executable.run({"x": np.ones(2)}) == pytest.approx(3.0)
    g.assign(w, [10.0, 20.0])
    assert executable.run({"x": np.ones(2)}) == pytest.approx(30.0)


def test_outputs_belong_to_the_caller_after_later_runs():
    g = Graph()
    x = g.placeholder((3,), dtype="float64", name="x")
    y = F.reshape(F.exp(x) * 2, (3, 1))
    executable = g.compile([y, x])
    first, echoed = executable.run({"x": np.zeros(3)})
    executable.run({"x": np.ones(3)})
    np.testing.assert_allclose(first, 2 * np.ones((3, 1)))
    np.testing.assert_allclose(echoed, np.zeros(3))


def test_gradient_of_unconnected_input_is_zero():
    g = Graph()
    x = g.placeholder((2,), dtype="float64", name="x")
    u = g.placeholder((2,), dtype="float64", name="u")
    gx, gu = gradients(F.sum(x * x), [x, u])
    executable = g.compile([gx, gu])
    got_x, got_u = executable.run({"x": np.array([1.0, 2.0]), "u": np.ones(2)})
    np.testing.assert_allclose(got_x, [2.0, 4.0])
    np.testing.assert_allclose(got_u, [0.0, 0.0])
