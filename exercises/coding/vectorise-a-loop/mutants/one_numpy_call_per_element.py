# Vectorised in name only: numpy is called on one element at a time.
import math

import numpy as np


def softmax(x):
    out = np.empty_like(x)
    for i in range(x.shape[0]):
        row = x[i]
        top = np.max(row)
        for j in range(x.shape[1]):
            out[i, j] = np.exp(row[j] - top)
        out[i] = out[i] / np.sum(out[i])
    return out


def softmax_loop(x):
    """The per-element version: the baseline the fast one is timed against."""
    out = np.empty_like(x)
    rows, cols = x.shape
    for i in range(rows):
        top = -math.inf
        for j in range(cols):
            top = max(top, x[i, j])
        total = 0.0
        for j in range(cols):
            out[i, j] = math.exp(x[i, j] - top)
            total += out[i, j]
        for j in range(cols):
            out[i, j] /= total
    return out
