"""A static-engine graph, run on the trusted side (DESIGN invariant 5).

An exercise on grader.engines' static engine (static-while-loop) asks the student's code to
build a graph. Compiling and running that graph in the student's process lets the student
answer instead of the graph: its module can replace ``Executable.run`` at import, and give
back values a Python ``while`` computed (tests/security/test_memory_held.py keeps that
attack). So the student's process only builds the graph and sends it as data::

    graph = run_in(student, BUILD, ...)                    # nodes, from the student's process
    values = run_engine_graph(reference, graph, x, grad=True)  # rebuilt, run by the trusted side

``run_engine_graph`` refuses, before anything runs, a graph that is not plain data in the
form ``ENCODE_SOURCE`` writes: nodes in order, each a placeholder, a small constant, or an op
of the engine's registry on earlier nodes, with literal attributes, within ``MAX_NODES``. The
reference's worker (the student's trusted twin, which never runs student code) rebuilds it
with the engine's own ``Graph.op`` (which checks arity and infers every shape, so sizes are
known before memory is spent, within ``MAX_ELEMENTS``), adds the gradients it wants itself,
compiles and runs it on the judge's inputs.

A graph the judge cannot read, one that the engine refuses, that raises when run, or that
brings the reference's worker down is the student's RUNTIME_ERROR, said in every language.
"""
from __future__ import annotations

import math
from typing import Any, NoReturn

from grader.harness.graphs import refuse, run_trusted
from grader.harness.messages import localize
from grader.harness.wire import Fn

MAX_NODES = 8192
MAX_CONSTANT_ITEMS = 4096  # of one constant
MAX_ELEMENTS = 1 << 20  # of one node's value, and (x16) of all of them together
MAX_ATTRIBUTE_ITEMS = 16
DTYPES = frozenset({"float64", "float32", "int64", "int32", "bool"})

# Runs in the student's process, after the checks' own code built the graph: the nodes as
# data, nothing more. ``encode(graph, outputs)`` is what the checks' source calls.
ENCODE_SOURCE = '''
def encode(graph, outputs):
    import numpy as np
    index = {}
    nodes = []
    for node in graph.nodes:
        inputs = []
        for given in node.inputs:
            if not hasattr(given, "id") or given.id not in index:
                return {"error": "node " + str(node.name)[:64] + " uses a node defined after it"}
            inputs.append(index[given.id])
        encoded = {"op": node.op, "inputs": inputs, "attrs": {}}
        for key, value in node.attrs.items():
            if isinstance(value, np.dtype):
                value = value.name
            elif isinstance(value, tuple):
                value = list(value)
            encoded["attrs"][str(key)] = value
        if node.op == "placeholder":
            encoded.update(shape=list(node.shape), dtype=np.dtype(node.dtype).name, name=node.name)
        elif node.op == "constant":
            value = graph.constants[node.id]
            encoded.update(dtype=value.dtype.name, shape=list(value.shape), value=value.ravel().tolist())
        index[node.id] = len(nodes)
        nodes.append(encoded)
    return {"nodes": nodes, "outputs": [index[o.id] for o in outputs]}
'''

# Runs in the reference's worker, on a graph check_engine_graph accepted.
RUN_SOURCE = '''
def run_engine_graph(nodes, outputs, feeds, grad, max_elements):
    import numpy as np
    from grader.engines import F, Graph, gradients, get_op
    graph = Graph()
    built = []
    total = 0
    for node in nodes:
        if node["op"] == "placeholder":
            made = graph.placeholder(node["shape"], node["dtype"], name=node["name"])
        elif node["op"] == "constant":
            made = graph.constant(np.array(node["value"], dtype=node["dtype"]).reshape(node["shape"]))
        else:
            get_op(node["op"])  # an op of the registry, or the engine's own error
            made = graph.op(node["op"], [built[i] for i in node["inputs"]], **node["attrs"])
        if made.shape is None:
            raise ValueError("node " + str(len(built)) + " has no known shape")
        size = int(np.prod(made.shape))
        total += size
        if size > max_elements or total > 16 * max_elements:
            raise ValueError("node " + str(len(built)) + " makes " + str(size) + " elements, more than allowed")
        built.append(made)
    wanted = [built[i] for i in outputs]
    if grad:
        placeholders = [n for n in built if n.op == "placeholder"]
        wanted += gradients(F.sum(wanted[0]), placeholders)
    return graph.compile(wanted).run(feeds)
'''
RUN = Fn("lambda *a: (lambda ns: (exec(" + repr(RUN_SOURCE) + ", ns), ns['run_engine_graph'](*a))[1])({})")


def run_engine_graph(reference: Any, answer: Any, feeds: dict[str, Any], *, grad: bool = False) -> list[Any]:
    """The outputs of the student's graph (``answer``, what ``encode`` sent) on ``feeds``,
    computed by the trusted side; with ``grad``, followed by the gradient of the sum of the
    first output with respect to each placeholder, taken by the trusted side too."""
    if isinstance(answer, dict) and isinstance(answer.get("error"), str):
        refuse(localize({"en": "your graph could not be read: {error}", "zh-hans": "无法读取你的图：{error}"},
                        error=answer["error"][:200]))
    nodes, outputs = _checked(answer, set(feeds))
    values = run_trusted(
        reference, (RUN, nodes, outputs, feeds, grad, MAX_ELEMENTS),
        raised={"en": "building and running your graph again raised {error}",
                "zh-hans": "重新构建并运行你的图时出错：{error}"},
        stopped={"en": "running your graph again stopped the process that ran it",
                 "zh-hans": "重新运行你的图时，运行它的进程停止了"})
    return list(values) if isinstance(values, list) else [values]


def _checked(answer: Any, placeholders: set[str]) -> tuple[list[dict[str, Any]], list[int]]:
    """The nodes and output positions of ``answer``, or the student's RUNTIME_ERROR when it is
    not this module's form: plain data, earlier inputs, literal attributes, small constants."""
    if not isinstance(answer, dict) or set(answer) != {"nodes", "outputs"}:
        refuse({"en": "your graph came back as something other than a graph",
                "zh-hans": "你的图返回的不是一张图"})
    nodes, outputs = answer["nodes"], answer["outputs"]
    if not isinstance(nodes, list) or not 0 < len(nodes) <= MAX_NODES:
        refuse(localize({"en": "a graph is a list of 1 to {limit} nodes",
                         "zh-hans": "图应是 1 到 {limit} 个节点的列表"}, limit=MAX_NODES))
    named: set[str] = set()
    for position, node in enumerate(nodes):
        if not isinstance(node, dict) or not _valid_node(node, position):
            _malformed(position)
        if node["op"] == "placeholder":
            if node["name"] in named or node["name"] not in placeholders:
                _malformed(position)
            named.add(node["name"])
    if named != placeholders:
        refuse(localize({"en": "your graph takes the inputs {names}", "zh-hans": "你的图接收的输入是 {names}"},
                        names=", ".join(sorted(named)) or "-"))
    if not isinstance(outputs, list) or not outputs or not all(
            type(i) is int and 0 <= i < len(nodes) for i in outputs):
        refuse({"en": "your graph's outputs are not nodes of it", "zh-hans": "你的图的输出不是图中的节点"})
    return nodes, outputs


def _valid_node(node: dict[str, Any], position: int) -> bool:
    op, inputs, attrs = node.get("op"), node.get("inputs"), node.get("attrs")
    if type(op) is not str or len(op) > 64 or type(inputs) is not list or type(attrs) is not dict:
        return False
    if not all(type(i) is int and 0 <= i < position for i in inputs):
        return False
    if not all(type(k) is str and len(k) <= 64 and _literal(v, 0) for k, v in attrs.items()):
        return False
    if op == "placeholder":
        return (set(node) == {"op", "inputs", "attrs", "shape", "dtype", "name"} and not inputs and not attrs
                and _shape(node["shape"]) and node["dtype"] in DTYPES
                and type(node["name"]) is str and 0 < len(node["name"]) <= 64)
    if op == "constant":
        value = node.get("value")
        return (set(node) == {"op", "inputs", "attrs", "shape", "dtype", "value"} and not inputs and not attrs
                and _shape(node["shape"]) and node["dtype"] in DTYPES and type(value) is list
                and len(value) <= MAX_CONSTANT_ITEMS and len(value) == math.prod(node["shape"])
                and all(type(v) in (int, float, bool) for v in value))
    return set(node) == {"op", "inputs", "attrs"} and op not in ("placeholder", "constant", "variable")


def _shape(value: Any) -> bool:
    return (type(value) is list and len(value) <= 8 and all(type(s) is int and 0 <= s <= MAX_ELEMENTS for s in value)
            and math.prod(value) <= MAX_ELEMENTS)


def _literal(value: Any, depth: int) -> bool:
    """An attribute: a number, a bool, None, a short string, or a short list of them."""
    if value is None or type(value) in (bool, int):
        return type(value) is not int or abs(value) <= MAX_ELEMENTS
    if type(value) is float:
        return math.isfinite(value)
    if type(value) is str:
        return len(value) <= 32
    return type(value) is list and depth < 2 and len(value) <= MAX_ATTRIBUTE_ITEMS and all(
        _literal(v, depth + 1) for v in value)


def _malformed(position: int) -> NoReturn:
    refuse(localize({"en": "node {node} of your graph is not one these checks can read",
                     "zh-hans": "你的图的第 {node} 个节点无法被这些检查读取"}, node=position))
