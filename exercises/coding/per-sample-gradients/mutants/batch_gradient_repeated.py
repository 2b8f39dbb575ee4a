# One backward of the mean batch loss, the same gradient handed to every sample: what a plain
# backward gives, and exactly what per-sample gradients (for clipping, for DP-SGD) are not.
import torch


def per_sample_grads(loss_fn, params, xs, ys):
    leaves = tuple(p.detach().requires_grad_(True) for p in params)
    total = sum(loss_fn(leaves, x, y) for x, y in zip(xs, ys)) / len(xs)
    grads = torch.autograd.grad(total, leaves)
    return tuple(g.expand(len(xs), *g.shape).clone() for g in grads)
