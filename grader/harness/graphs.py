"""One graph, proved on the trusted side (DESIGN invariant 5).

A count or a compiler fact read back from the student's process is the student's to choose:
its torch, its worker and the probe the checks send are all within its reach. So the fact is
not asked for. The student's process sends the graph itself as data instead: what
``torch.compile(..., fullgraph=True)`` captures with torch.compile's default settings (a graph
break fails it), written in ATen operators (``make_fx`` of that captured, pure graph). The
trusted side believes only what it can check itself::

    graph = exported(student, "model", x, w)           # data from the student's process
    outputs = run_graph(reference, graph, [x2, w2])    # run by the trusted side, fresh inputs

``run_graph`` refuses, before anything runs, a graph that is not plain data in this module's
small form: nodes in order, each an ATen operator from ``OPERATORS`` (pure, functional, with
their own shape checks: no in-place, strided, indexing or data-dependent-size operator), its
arguments literals or earlier nodes, within ``MAX_NODES``. The reference's worker (the
student's trusted twin, which never runs student code) then runs it on meta tensors first,
so every intermediate's size is known before memory is spent, within ``MAX_ELEMENTS``, and
only then on the inputs, which the student never saw. A graph that computes the reference's
values on inputs the student never saw, on both sides of a branch, is one graph that does the
work: a wrapped probe cannot make one without writing it.

What this does not prove: that Dynamo made the graph. The student's process can send a graph
another tracer made (torch.fx's symbolic tracer runs a print of ``.item()`` on a proxy), so a
function whose only break is such a print passes; tests/security/test_redteam_judge.py keeps
that as a strict xfail.

Why not strict ``torch.export`` of the function itself: it captures more than torch.compile
does (in torch 2.13 it traces ``print(t.item())`` and keeps going), so it would pass a graph
break the exercise is about. What an honest process sends is what torch.compile captured.

No pickle anywhere: ``torch.export.save``/``load`` is not used because ``load`` unpickles its
constants and weights (torch 2.13's ``pt2_archive/_package.py`` calls ``torch.load(...,
weights_only=False)`` and ``pickle.loads``). The graph crosses the wire as JSON.

A graph the judge cannot read, one that raises when run, or one that brings the reference's
worker down is the student's RUNTIME_ERROR; one that calls an operator outside the set (e.g.
``aten.item``: a value leaving the graph) is a wrong answer. Either is said in every
language, and neither is a retry of the grading.
"""
from __future__ import annotations

import math
from typing import Any, NoReturn

from grader.harness.api import CheckFailed, ProgramError, ProgramStopped, run_in
from grader.harness.messages import Localized, Message, localize
from grader.harness.wire import Fn

MAX_NODES = 512
MAX_ARGUMENT_ITEMS = 64  # in one argument list, e.g. a shape or a list of dims
MAX_NAME = 64
MAX_ELEMENTS = 1 << 22  # of one intermediate tensor, and (x4) of all of them together
MAX_INTEGER = 1 << 24
MAX_MATMUL_WORK = 1 << 30  # multiply-adds of all matrix products together
RUN_TIMEOUT_S = 60.0  # far above what any graph within these limits needs
DTYPES = frozenset({"float32", "float64", "int64", "int32", "bool"})
LITERAL_TAGS = frozenset({("device", "cpu"), ("layout", "strided"), ("memory_format", "preserve_format")})

# Pure operators with their own argument and shape checks; nothing here writes into a tensor,
# takes strides or indices, or gives an output whose size depends on the values.
OPERATORS = frozenset(
    f"aten.{name}"
    for name in (
        "matmul.default", "mm.default", "t.default", "transpose.int", "permute.default",
        "unsqueeze.default", "squeeze.dim", "view.default", "reshape.default", "expand.default",
        "sum.default", "sum.dim_IntList", "mean.default", "mean.dim", "amax.default", "amin.default",
        "max.default", "min.default", "prod.default",
        "abs.default", "neg.default", "tanh.default", "relu.default", "exp.default", "log.default",
        "sigmoid.default", "sqrt.default", "sign.default", "reciprocal.default",
        "add.Tensor", "add.Scalar", "sub.Tensor", "sub.Scalar", "rsub.Scalar", "mul.Tensor", "mul.Scalar",
        "div.Tensor", "div.Scalar", "pow.Tensor_Scalar", "maximum.default", "minimum.default",
        "clamp.default", "clamp_min.default", "clamp_max.default",
        "gt.Scalar", "gt.Tensor", "ge.Scalar", "ge.Tensor", "lt.Scalar", "lt.Tensor", "le.Scalar", "le.Tensor",
        "eq.Scalar", "eq.Tensor", "ne.Scalar", "ne.Tensor",
        "logical_and.default", "logical_or.default", "logical_not.default",
        "where.self", "where.ScalarSelf", "where.ScalarOther", "where.Scalar",
        "zeros_like.default", "ones_like.default", "full_like.default", "_to_copy.default",
        "scalar_tensor.default", "alias.default", "clone.default",
    )
)

SCALAR_OUTPUTS = frozenset({"aten.item.default", "aten._local_scalar_dense.default"})
DATA_DEPENDENT_SIZES = frozenset(
    f"aten.{name}" for name in (
        "nonzero.default", "masked_select.default", "bincount.default", "unique_dim.default", "_unique2.default",
        "unique_consecutive.default", "repeat_interleave.Tensor", "_assert_scalar.default", "sym_size.int",
    )
)

# Runs in the student's process: an ATen graph (what make_fx or aot_autograd traced) as the
# data ``check_graph`` reads, or a reason it cannot be. Also part of probes that capture the
# graphs torch.compile hands a backend (dynamic-shape-recompiles).
ENCODE_SOURCE = '''
def encode_graph(graph):
    if any(node.op == "get_attr" for node in graph.nodes):
        return {"error": "the captured graph holds tensors of its own (parameters, buffers or constants)"}

    def encode(value):
        if isinstance(value, torch.fx.Node):
            return {"node": value.name}
        if isinstance(value, (list, tuple)):
            return [encode(v) for v in value]
        if isinstance(value, torch.dtype):
            return {"dtype": str(value).removeprefix("torch.")}
        if isinstance(value, torch.device):
            return {"device": value.type}
        if isinstance(value, torch.layout):
            return {"layout": str(value).removeprefix("torch.")}
        if isinstance(value, torch.memory_format):
            return {"memory_format": str(value).removeprefix("torch.")}
        return value

    nodes = []
    for node in graph.nodes:
        if node.op == "placeholder":
            nodes.append({"op": "input", "name": node.name})
        elif node.op == "call_function":
            nodes.append({"op": "call", "name": node.name, "target": str(node.target),
                          "args": encode(list(node.args)), "kwargs": {k: encode(v) for k, v in node.kwargs.items()}})
        elif node.op == "output":
            returned = node.args[0]
            returned = list(returned) if isinstance(returned, (list, tuple)) else [returned]
            nodes.append({"op": "output", "args": encode(returned)})
        else:
            nodes.append({"op": str(node.op)})
    return {"graph": nodes}
'''

# Runs in the student's process: its answer is data the trusted side checks, nothing more.
EXPORT_SOURCE = ENCODE_SOURCE + '''
def export_graph(name, *args):
    import sys
    program = sys.modules.get("submission") or sys.modules["solution"]
    function = getattr(program, name)
    captured = []

    def backend(graph_module, example_inputs):
        captured.append((graph_module, example_inputs))
        return graph_module.forward

    torch._dynamo.reset()
    try:
        # torch.compile's own defaults, whatever the program set: with these on, Dynamo would
        # capture a value leaving the graph or a data-dependent size instead of breaking there.
        with torch._dynamo.config.patch(capture_scalar_outputs=False, capture_dynamic_output_shape_ops=False):
            torch.compile(function, fullgraph=True, backend=backend)(*args)
        (graph_module, example_inputs), = captured
        # Dynamo's graph in ATen operators: it is pure, so tracing it runs nothing of the program.
        from torch.fx.experimental.proxy_tensor import make_fx
        graph = make_fx(graph_module)(*example_inputs).graph
    except Exception as error:
        lines = [line.strip() for line in str(error).splitlines() if line.strip()]
        return {"error": (type(error).__name__ + ": " + " ".join(lines[:2]))[:400]}
    return encode_graph(graph)
'''
EXPORT = Fn(
    "lambda *a: (lambda ns: (exec(" + repr(EXPORT_SOURCE) + ", ns), ns['export_graph'](*a))[1])({'torch': torch})")

# Runs in the reference's worker, on a graph check_graph accepted: meta tensors first (sizes
# without memory), then the judge's inputs.
RUN_SOURCE = '''
def run_graph(nodes, inputs, operators, max_elements, max_work):
    def operator(target):
        if target not in operators:
            raise ValueError("operator not allowed: " + target)
        _, name, overload = target.split(".")
        return getattr(getattr(torch.ops.aten, name), overload)

    def run(values, device):
        env = {}
        fed = iter(values)

        def decode(value):
            if isinstance(value, list):
                return [decode(v) for v in value]
            if isinstance(value, dict):
                if "node" in value:
                    return env[value["node"]]
                if "dtype" in value:
                    return getattr(torch, value["dtype"])
                if "device" in value:
                    return torch.device(device)
                if "memory_format" in value:
                    return torch.preserve_format
                return torch.strided
            return value

        total = work = 0
        for node in nodes:
            if node["op"] == "input":
                env[node["name"]] = next(fed)
            elif node["op"] == "call":
                kwargs = {k: decode(v) for k, v in node["kwargs"].items()}
                value = operator(node["target"])(*decode(node["args"]), **kwargs)
                if not isinstance(value, torch.Tensor):
                    raise ValueError(node["target"] + " gave no tensor")
                if value.numel() > max_elements:
                    raise ValueError(node["target"] + " makes a tensor of " + str(value.numel()) + " elements")
                if node["target"] in ("aten.matmul.default", "aten.mm.default"):
                    work += value.numel() * max(1, decode(node["args"])[0].shape[-1])
                    if work > max_work:
                        raise ValueError("the graph's matrix products take more than " + str(max_work) + " steps")
                total += value.numel()
                if total > 4 * max_elements:
                    raise ValueError("the graph's tensors hold more than " + str(4 * max_elements) + " elements")
                env[node["name"]] = value
            else:
                return [decode(v) for v in node["args"]]

    # An int input is a size the judge chose (a symbolic batch dimension's value): kept as is.
    run([torch.empty_like(x, device="meta") if isinstance(x, torch.Tensor) else x for x in inputs], "meta")
    with torch.no_grad():
        return run(inputs, "cpu")
'''
RUN = Fn("lambda *a: (lambda ns: (exec(" + repr(RUN_SOURCE) + ", ns), ns['run_graph'](*a))[1])({'torch': torch})")


class GraphRefused(Exception):
    """The student's graph is not one the trusted side runs; ``reason`` says why, in every
    language; ``kind`` is the verdict: RUNTIME_ERROR for what cannot be read, WRONG_ANSWER for
    a readable graph with an operator outside the set."""

    def __init__(self, reason: Localized, kind: str = "RUNTIME_ERROR"):
        super().__init__(reason["en"])
        self.reason = reason
        self.kind = kind


def exported(student: Any, name: str, *args: Any) -> dict[str, Any]:
    """``{"graph": nodes}``, the one graph torch.compile(fullgraph=True) captures of ``name`` in
    the student's process, or ``{"error": text}`` when it could not (a graph break).
    Untrusted: run_graph checks it."""
    answer = run_in(student, EXPORT, name, *args)
    if not isinstance(answer, dict) or not (isinstance(answer.get("error"), str) or "graph" in answer):
        refuse({"en": "the export of your function came back as something other than a graph",
                "zh-hans": "你的函数导出后返回的不是一张图"})
    if isinstance(answer.get("error"), str):
        return {"error": answer["error"][:400]}
    return answer


def run_graph(reference: Any, graph: Any, inputs: list[Any], *, raising_is_wrong: bool = False) -> list[Any]:
    """The outputs of ``graph`` (the student's export) on ``inputs`` (tensors, or ints for the
    graph's symbolic sizes), computed by the trusted side.

    Refuses (the student's RUNTIME_ERROR, or a wrong answer for an operator outside the set) a
    graph check_graph refuses, one that raises when run, and one that stops the reference's worker.
    With ``raising_is_wrong``, a graph that raises is a wrong answer instead: where the checks
    run it on sizes it must serve, a graph made for one size fails a shape check at another."""
    try:
        check_graph(graph, len(inputs))
    except GraphRefused as refused:
        if refused.kind == "WRONG_ANSWER":
            raise CheckFailed(Message("check.failed", detail=refused.reason)) from None
        refuse(refused.reason)
    outputs = run_trusted(
        reference, (RUN, graph, list(inputs), sorted(OPERATORS), MAX_ELEMENTS, MAX_MATMUL_WORK),
        raised={"en": "running your graph on fresh inputs raised {error}",
                "zh-hans": "在新的输入上运行你的图时出错：{error}"},
        stopped={"en": "running your graph on fresh inputs stopped the process that ran it",
                 "zh-hans": "在新的输入上运行你的图时，运行它的进程停止了"}, raising_is_wrong=raising_is_wrong)
    return list(outputs)


def run_trusted(reference: Any, call: tuple[Any, ...], *, raised: dict[str, str], stopped: Localized,
                raising_is_wrong: bool = False) -> Any:
    """What ``call`` returns on the reference's worker (the trusted twin, which never runs the
    student's code), under its own timeout rather than the reference's budget: a slow graph is
    the student's to answer for. An error or a stop there is the student's RUNTIME_ERROR,
    worded by ``raised`` (a template with ``{error}``) or ``stopped``; with ``raising_is_wrong``
    an error (the worker still answering) is a wrong answer instead."""
    try:
        value, _ = reference._program.timed_call(None, None, call, {}, timeout=RUN_TIMEOUT_S)
    except ProgramError as error:
        if error.side != "reference":
            raise
        reason = localize(raised, error=f"{error.type_name}: {error.message[:300]}")
        if raising_is_wrong:
            raise CheckFailed(Message("check.failed", detail=reason)) from None
        refuse(reason)
    except ProgramStopped as stop:
        if stop.side != "reference":
            raise
        refuse(stopped)
    return value


def check_graph(graph: Any, input_count: int) -> None:
    """Raise GraphRefused unless ``graph`` is this module's form: plain data, allowed operators,
    arguments that are literals or earlier nodes, ``input_count`` inputs, one output list."""
    if not isinstance(graph, list) or not 0 < len(graph) <= MAX_NODES:
        raise GraphRefused(localize({"en": "a graph is a list of 1 to {limit} nodes",
                                     "zh-hans": "图应是 1 到 {limit} 个节点的列表"}, limit=MAX_NODES))
    names: set[str] = set()
    inputs = 0
    for position, node in enumerate(graph):
        if not isinstance(node, dict):
            raise _malformed(position)
        op = node.get("op")
        last = position == len(graph) - 1
        if op == "output" and last and set(node) == {"op", "args"}:
            _check_argument(node["args"], names, position, depth=0)
            if not isinstance(node["args"], list):
                raise _malformed(position)
            continue
        name = node.get("name")
        if last or not isinstance(name, str) or not 0 < len(name) <= MAX_NAME or name in names:
            raise _malformed(position)
        if op == "input" and set(node) == {"op", "name"}:
            inputs += 1
        elif op == "call" and set(node) == {"op", "name", "target", "args", "kwargs"}:
            target = node["target"]
            if not isinstance(target, str):
                raise _malformed(position)
            if target not in OPERATORS:
                raise _outside_the_set(target[:80])
            if not isinstance(node["args"], list) or not isinstance(node["kwargs"], dict):
                raise _malformed(position)
            _check_argument(node["args"], names, position, depth=0)
            for key, value in node["kwargs"].items():
                if not isinstance(key, str) or len(key) > MAX_NAME:
                    raise _malformed(position)
                _check_argument(value, names, position, depth=1)
        else:
            raise _malformed(position)
        names.add(name)
    if graph[-1].get("op") != "output" or inputs != input_count:
        raise GraphRefused(localize({"en": "a graph takes {count} inputs and ends in its outputs",
                                     "zh-hans": "图应接收 {count} 个输入，并以输出结尾"}, count=input_count))


def _check_argument(value: Any, names: set[str], position: int, depth: int) -> None:
    if value is None or type(value) is bool:
        return
    if type(value) is int:
        if abs(value) > MAX_INTEGER:
            raise GraphRefused(localize(
                {"en": "node {node} of your graph holds the integer {value}, larger than these checks allow",
                 "zh-hans": "你的图的第 {node} 个节点含有整数 {value}，超出了这些检查允许的范围"},
                node=position, value=value))
        return
    if type(value) is float:
        if math.isnan(value):
            raise _malformed(position)
        return
    if type(value) is list and depth < 3 and len(value) <= MAX_ARGUMENT_ITEMS:
        for item in value:
            _check_argument(item, names, position, depth + 1)
        return
    if type(value) is dict and len(value) == 1:
        ((key, tag),) = value.items()
        if key == "node" and tag in names:
            return
        if (key, tag) in LITERAL_TAGS or (key == "dtype" and tag in DTYPES):
            return
    raise _malformed(position)


def _outside_the_set(target: str) -> GraphRefused:
    if target in DATA_DEPENDENT_SIZES:
        return GraphRefused(localize(
            {"en": "your graph calls `{target}`, whose output size depends on the values (a data-dependent "
                   "shape), so its graph is not one fixed graph; keep shapes fixed and let a mask select",
             "zh-hans": "你的图调用了 `{target}`，它的输出尺寸取决于数值（数据相关的形状），因此不是一张形状固定的图；"
                        "请保持形状固定，用掩码来表达选择"}, target=target), "WRONG_ANSWER")
    if target in SCALAR_OUTPUTS or not target.startswith("aten."):
        return GraphRefused(localize(
            {"en": "your graph takes a value out of a tensor as a Python number (`{target}`: `.item()`, `float()`, "
                   "`int()`), which torch.compile's defaults make a graph break",
             "zh-hans": "你的图把张量中的值取出为 Python 数（`{target}`：`.item()`、`float()`、`int()`），"
                        "在 torch.compile 的默认设置下这是一次图中断"}, target=target), "WRONG_ANSWER")
    return GraphRefused(localize(
        {"en": "your graph calls `{target}`, which is not among the operators these checks run",
         "zh-hans": "你的图调用了 `{target}`，它不在这些检查会运行的算子之列"}, target=target), "WRONG_ANSWER")


def _malformed(position: int) -> GraphRefused:
    return GraphRefused(localize({"en": "node {node} of your graph is not one these checks can read",
                                  "zh-hans": "你的图的第 {node} 个节点无法被这些检查读取"}, node=position))


def refuse(reason: Localized) -> NoReturn:
    """End the check as the student's RUNTIME_ERROR, saying why in every language."""
    raise ProgramStopped("student", "RUNTIME_ERROR", Message("check.failed", detail=reason))
