# Compares with the float64 answer, but with one loose tolerance for every dtype: a float32
# program that silently ran in float16 slips through.
import numpy as np


def agrees(eager, compiled, gold):
    return bool(np.allclose(np.asarray(compiled, dtype=np.float64), gold, rtol=1e-2, atol=1e-3))
