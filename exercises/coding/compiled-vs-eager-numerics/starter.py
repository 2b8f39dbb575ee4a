import numpy as np


def agrees(eager, compiled, gold):
    """True when the compiled result is an acceptable stand-in for the eager one.

    eager, compiled: arrays in the program's dtype (float32 or float16); gold: the same
    computation in float64. Comparing bit for bit rejects every legitimate compiler.
    """
    return bool(np.array_equal(eager, compiled))
