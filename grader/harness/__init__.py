"""Code that runs inside the sandbox: the trusted judge, the workers, and the checks API.

Exercise authors use::

    from grader.harness import check, perf, close, equal, raises, fail, fn, Race
    from grader.harness import tensor, gradients, run_in, inside, peak_memory_bytes

Standard library, numpy and (only where an exercise needs it) torch.
"""
from grader.harness.api import (
    TOLERANCES,
    CheckFailed,
    ProgramError,
    Race,
    check,
    close,
    equal,
    fail,
    fn,
    gradients,
    inside,
    peak_memory_bytes,
    perf,
    raises,
    run_in,
    tensor,
)

__all__ = [
    "TOLERANCES", "CheckFailed", "ProgramError", "Race", "check", "close", "equal", "fail", "fn", "gradients", "inside",
    "peak_memory_bytes", "perf", "raises", "run_in", "tensor",
]
