# No graph break, but the else side is gone: wrong whenever the sum is negative.
import torch


def model(x, w):
    h = x @ w
    h = h * 2.0
    scale = h.abs().max() + 1e-6                       # stays a 0-d tensor
    return torch.tanh(h / scale)
