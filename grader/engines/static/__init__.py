"""The static engine (define-then-run): build a graph, compile it once, run it many times."""
from .compile import Executable, compile_graph, default_passes
from .graph import (
                    Graph,
                    Node,
                    compile,
                    constant,
                    get_default_graph,
                    gradients,
                    placeholder,
                    reset_default_graph,
                    variable,
)
from .ir import IRNode, Program

__all__ = ["Graph", "Node", "Executable", "Program", "IRNode", "compile", "compile_graph", "default_passes",
           "placeholder", "constant", "variable", "gradients", "get_default_graph", "reset_default_graph"]
