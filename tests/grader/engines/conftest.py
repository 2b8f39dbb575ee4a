"""Shared strategies for the engine tests: small shapes, well-conditioned values."""
from __future__ import annotations

import numpy as np
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

small_shapes = hnp.array_shapes(min_dims=0, max_dims=3, min_side=1, max_side=4)


def arrays(shape, low=-3.0, high=3.0, dtype=np.float64):
    return hnp.arrays(dtype, shape, elements=st.floats(low, high, allow_nan=False, allow_infinity=False, width=64))


@st.composite
def broadcastable_pair(draw, low=-3.0, high=3.0, low_b=None, high_b=None):
    """Two arrays whose shapes broadcast together (numpy's rule), sometimes of different rank."""
    shape = draw(small_shapes)
    shapes = draw(hnp.mutually_broadcastable_shapes(num_shapes=2, base_shape=shape, max_side=4))
    a = draw(arrays(shapes.input_shapes[0], low, high))
    b = draw(arrays(shapes.input_shapes[1], low if low_b is None else low_b, high if high_b is None else high_b))
    return a, b
