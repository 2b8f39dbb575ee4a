"""Reference solution: unroll max_iters steps and let a per-element mask decide which steps count."""
from grader.engines import F


def while_loop(cond_fn, body_fn, state, max_iters):
    active = cond_fn(state)  # an element runs only while its condition has held at every check so far
    steps = state * 0.0
    for _ in range(max_iters):
        state = F.where(active, body_fn(state), state)
        steps = F.where(active, steps + 1.0, steps)
        active = F.where(active, cond_fn(state), active)  # once finished, an element stays finished
    return state, steps
