"""Reference solution: the same block with no value leaving the graph."""
import torch


def model(x, w):
    h = x @ w
    h = torch.where(h.sum() > 0, h * 2.0, h - 1.0)  # both sides are computed; the mask picks
    scale = h.abs().max() + 1e-6                       # stays a 0-d tensor
    return torch.tanh(h / scale)
