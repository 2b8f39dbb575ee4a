import torch


def per_sample_grads(loss_fn, params, xs, ys):
    """For every sample i, the gradient of loss_fn(params, xs[i], ys[i]) with respect to each tensor
    of params; returns a tuple shaped like params, each with a leading batch dimension.

    Right, but one backward pass per sample: make it one batched computation.
    """
    rows = []
    for x, y in zip(xs, ys):
        leaves = tuple(p.detach().requires_grad_(True) for p in params)
        rows.append(torch.autograd.grad(loss_fn(leaves, x, y), leaves))
    return tuple(torch.stack(column) for column in zip(*rows))
