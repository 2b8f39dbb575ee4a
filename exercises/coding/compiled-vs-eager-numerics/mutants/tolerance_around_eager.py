# Compares the compiled result with eager, within torch.testing's float32 tolerance: fine for a
# reordered float32 sum, and it rejects a compiled float16 sum that is more accurate than eager.
import numpy as np


def agrees(eager, compiled, gold):
    return bool(np.allclose(compiled, eager, rtol=1.3e-6, atol=1e-5))
