import torch


def model(x, w):
    """A small block written in plain eager style. It works, but torch.compile breaks it into pieces."""
    h = x @ w
    print("mean activation:", h.mean().item())   # printing a value needs it on the host
    if h.sum() > 0:                                # a Python branch on a tensor's value
        h = h * 2.0
    else:
        h = h - 1.0
    scale = float(h.abs().max()) + 1e-6           # float() of a tensor
    return torch.tanh(h / scale)
