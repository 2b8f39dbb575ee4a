# Masks the state but counts a step for every element on every iteration.
from grader.engines import F


def while_loop(cond_fn, body_fn, state, max_iters):
    active = cond_fn(state)
    steps = state * 0.0
    for _ in range(max_iters):
        state = F.where(active, body_fn(state), state)
        steps = steps + 1.0
        active = F.where(active, cond_fn(state), active)
    return state, steps
