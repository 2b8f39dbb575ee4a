"""Compiler passes. Each takes a Program and returns a new one, so every stage can be shown."""
from .cse import eliminate_common_subexpressions
from .dce import eliminate_dead_code
from .fold import fold_constants, simplify
from .fusion import fuse_elementwise
from .infer import infer_shapes
from .memory import plan_memory, unplanned_peak_bytes
from .order import order_graph

__all__ = ["order_graph", "infer_shapes", "fold_constants", "simplify", "eliminate_common_subexpressions",
           "eliminate_dead_code", "fuse_elementwise", "plan_memory", "unplanned_peak_bytes"]
