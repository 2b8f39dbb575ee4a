# A do-while: the condition is checked after each step, so every element takes the first step.
from grader.engines import F


def while_loop(cond_fn, body_fn, state, max_iters):
    steps = state * 0.0
    active = F.greater_equal(steps, 0.0)  # all True
    for _ in range(max_iters):
        state = F.where(active, body_fn(state), state)
        steps = F.where(active, steps + 1.0, steps)
        active = F.where(active, cond_fn(state), active)
    return state, steps
