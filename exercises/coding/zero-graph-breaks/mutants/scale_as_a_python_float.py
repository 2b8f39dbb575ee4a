# torch.where for the branch, but float() for the scale: still a graph break.
import torch


def model(x, w):
    h = x @ w
    h = torch.where(h.sum() > 0, h * 2.0, h - 1.0)  # both sides are computed; the mask picks
    scale = float(h.abs().max()) + 1e-6
    return torch.tanh(h / scale)
