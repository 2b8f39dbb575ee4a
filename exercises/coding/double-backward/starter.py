import torch


def hvp(f, x, v):
    """The Hessian of the scalar f at x, times the vector v, as a tensor shaped like x."""
    raise NotImplementedError


def penalised_loss(loss_fn, w, weight):
    """loss_fn(w) + weight * (squared norm of its gradient), differentiable with respect to w."""
    loss = loss_fn(w)
    (g,) = torch.autograd.grad(loss, w)
    return loss + weight * (g * g).sum()
