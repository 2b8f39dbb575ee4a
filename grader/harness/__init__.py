"""Code that runs inside the sandbox: the trusted judge, the workers, and the checks API.

Exercise authors use::

    from grader.harness import check, perf, close, equal, raises, fail, fn, Race
    from grader.harness import tensor, gradients, run_in, inside, memory_held, peak_memory_bytes, localize, as_code

Whatever a check says to the student is given in every language: ``fail({"en": ...,
"zh-hans": ...}, **params)``, ``what={"en": ..., "zh-hans": ...}``; the content lint
(grader/host/spec.py) refuses checks that say anything in English only.

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
    memory_held,
    peak_memory_bytes,
    perf,
    raises,
    run_in,
    tensor,
)
from grader.harness.messages import as_code, localize

__all__ = [
    "TOLERANCES", "CheckFailed", "ProgramError", "Race", "as_code", "check", "close", "equal", "fail", "fn",
    "gradients", "inside", "localize", "memory_held", "peak_memory_bytes", "perf", "raises", "run_in", "tensor",
]
