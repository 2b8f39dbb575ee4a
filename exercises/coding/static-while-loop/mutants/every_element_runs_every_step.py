# Unrolls max_iters steps with no mask: every element takes every step, whatever its condition says.
from grader.engines import F


def while_loop(cond_fn, body_fn, state, max_iters):
    steps = state * 0.0
    for _ in range(max_iters):
        state = body_fn(state)
        steps = steps + 1.0
    return state, steps
