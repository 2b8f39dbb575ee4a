# Right values, but the whole n-by-n Hessian is built (one backward per row) to use one product of it.
import torch


def hvp(f, x, v):
    return torch.autograd.functional.hessian(f, x.detach()) @ v


def penalised_loss(loss_fn, w, weight):
    loss = loss_fn(w)
    (g,) = torch.autograd.grad(loss, w, create_graph=True)
    return loss + weight * (g * g).sum()
