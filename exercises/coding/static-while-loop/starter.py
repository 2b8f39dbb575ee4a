from grader.engines import F


def while_loop(cond_fn, body_fn, state, max_iters):
    """Per element: while cond_fn(state) holds and fewer than max_iters steps were taken,
    state = body_fn(state). Returns (final state, steps taken per element), both graph nodes.

    This is how you would write it for numbers. A graph node has no value while the graph is
    built, so the `while` below cannot be decided.
    """
    steps = state * 0.0
    taken = 0
    while cond_fn(state) and taken < max_iters:
        state = body_fn(state)
        steps = steps + 1.0
        taken += 1
    return state, steps
