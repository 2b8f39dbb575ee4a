# Right values, but the debug print of .item() is still there: one graph break.
import torch


def model(x, w):
    h = x @ w
    print("mean activation:", h.mean().item())
    h = torch.where(h.sum() > 0, h * 2.0, h - 1.0)  # both sides are computed; the mask picks
    scale = h.abs().max() + 1e-6                       # stays a 0-d tensor
    return torch.tanh(h / scale)
