"""GraphDojo's reference engines: one op registry, a static and a dynamic engine, and a tracer.

* ``Graph`` / ``placeholder`` / ``compile``: the static engine (define-then-run).
* ``Tensor`` / ``tensor`` / ``backward``: the dynamic engine (define-by-run).
* ``trace`` / ``jit``: turn eager-style Python into a static graph.
* ``F``: the functional API (``F.exp(x)``, ``F.cross_entropy(logits, labels)``) for all three.

Pure Python and numpy; nothing here imports Django, so it runs inside the sandbox too.
"""
from . import functional as F
from .dynamic import Tensor, enable_grad, grad, is_grad_enabled, no_grad, tensor
from .errors import (
    CycleError,
    EngineError,
    FreedGraphError,
    GradientError,
    GraphError,
    GraphFrozenError,
    MissingInputError,
    NoValueError,
    ShapeError,
    SourceLocation,
    TracerError,
)
from .ops import OPS, OpDef, describe_ops, get_op
from .static import (
    Executable,
    Graph,
    Node,
    Program,
    compile,
    constant,
    get_default_graph,
    gradients,
    placeholder,
    reset_default_graph,
    variable,
)
from .tracer import TracedFunction, jit, trace

__all__ = [
    "F", "OPS", "OpDef", "get_op", "describe_ops",
    "Tensor", "tensor", "no_grad", "enable_grad", "is_grad_enabled", "grad",
    "Graph", "Node", "Executable", "Program", "compile", "placeholder", "constant", "variable", "gradients",
    "get_default_graph", "reset_default_graph",
    "trace", "jit", "TracedFunction",
    "EngineError", "GraphError", "ShapeError", "CycleError", "MissingInputError", "GraphFrozenError",
    "NoValueError", "TracerError", "FreedGraphError", "GradientError", "SourceLocation",
]
