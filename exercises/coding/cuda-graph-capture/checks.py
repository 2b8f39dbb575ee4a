"""Checks for cuda-graph-capture: the same values as eager execution, a real CUDAGraph, and faster replay.

Needs an NVIDIA GPU (gpu = true): the judge runs it only on hosts that pass one to the sandbox.
"""
import numpy as np

from grader.harness import Race, check, close, equal, fail, localize, perf
from grader.harness.wire import TensorArray

WIDTH = 64


def tensor(array):
    out = np.asarray(array, dtype=np.float32).view(TensorArray)
    out.torch_dtype = "float32"
    return out


def mlp(rng, depth, width=WIDTH):
    weights = [tensor(rng.normal(size=(width, width)) / np.sqrt(width)) for _ in range(depth)]
    biases = [tensor(rng.normal(size=(width,)) * 0.1) for _ in range(depth)]
    return weights, biases


def batch(rng, rows, width=WIDTH):
    return tensor(rng.normal(size=(rows, width)))


def expected(x, weights, biases):
    """The forward pass on the judge's side, in float64: tanh(x @ w + b), layer after layer."""
    h = np.asarray(x, dtype=np.float64)
    for w, b in zip(weights, biases):
        h = np.tanh(h @ np.asarray(w, dtype=np.float64) + np.asarray(b, dtype=np.float64))
    return h


def agrees(got, x, weights, biases, what):
    if not isinstance(got, TensorArray):
        fail({"en": "{what}: return a torch tensor, got {kind}", "zh-hans": "{what}：应返回 torch 张量，实际返回 {kind}"},
             what=what, kind=type(got).__name__)
    close(np.asarray(got, dtype=np.float64), expected(x, weights, biases), rtol=2e-3, atol=2e-3, what=what)


@check(points=1, title={"en": "Matches eager execution on one batch", "zh-hans": "单个批次上与立即执行结果一致"})
def matches_eager_on_one_batch(student, reference, rng):
    weights, biases = mlp(rng, 4)
    step = student.GraphedMLP(weights, biases, 16)
    x = batch(rng, 16)
    agrees(step(x), x, weights, biases, {"en": "`GraphedMLP(...)(x)` with 4 layers", "zh-hans": "4 层的 `GraphedMLP(...)(x)`"})


@check(points=2, title={"en": "New inputs on every replay", "zh-hans": "每次重放都使用新输入"})
def new_inputs_on_every_replay(student, reference, rng):
    weights, biases = mlp(rng, 4)
    step = student.GraphedMLP(weights, biases, 16)
    for i in range(4):
        x = batch(rng, 16)
        agrees(step(x), x, weights, biases, localize(
            {"en": "call {n} with a new batch", "zh-hans": "用新批次进行的第 {n} 次调用"}, n=i + 1))


@check(points=2, title={"en": "A CUDA graph is captured and replayed", "zh-hans": "CUDA 图被捕获并重放"})
def a_cuda_graph_is_captured_and_replayed(student, reference, rng):
    weights, biases = mlp(rng, 3)
    step = student.GraphedMLP(weights, biases, 8)
    graph = step.graph.get()
    kind = getattr(graph, "_type_name", type(graph).__name__)
    if kind != "CUDAGraph":
        fail({"en": "`.graph` must be the `torch.cuda.CUDAGraph` you captured, got {kind}",
              "zh-hans": "`.graph` 必须是你捕获的 `torch.cuda.CUDAGraph`，实际为 {kind}"},
             kind=kind if graph is not None else None)
    for _ in range(3):
        step(batch(rng, 8))
    equal(step.replays.get(), 3, what={"en": "`.replays` after three calls", "zh-hans": "调用三次之后的 `.replays`"})


@check(points=2, title={"en": "Deeper and wider batches", "zh-hans": "更深更宽的批次"})
def deeper_and_wider_batches(student, reference, rng):
    for depth, rows in ((1, 1), (8, 32), (16, 128)):
        weights, biases = mlp(rng, depth)
        step = student.GraphedMLP(weights, biases, rows)
        for _ in range(2):
            x = batch(rng, rows)
            agrees(step(x), x, weights, biases, localize(
                {"en": "{depth} layers on a batch of {rows}", "zh-hans": "{depth} 层、批大小 {rows}"}, depth=depth, rows=rows))


@perf(points=3, title={"en": "Replay beats launching every kernel (speed)", "zh-hans": "重放快于逐个启动内核（速度）"})
def replay_beats_launching_every_kernel(student, reference, rng):
    weights, biases = mlp(rng, 40)
    graphed = student.GraphedMLP(weights, biases, 32)
    eager = reference.EagerMLP(weights, biases)
    return Race(
        student=graphed,
        reference=reference.GraphedMLP(weights, biases, 32),
        baselines={"eager": eager},
        inputs=lambda rng: (batch(rng, 32),),
        check=lambda got, want: close(np.asarray(got), np.asarray(want), rtol=2e-3, atol=2e-3, what={"en": "a timed call", "zh-hans": "一次计时调用"}),
    )
