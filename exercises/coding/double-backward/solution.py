"""Reference solution: differentiate the gradient itself, keeping the graph of the first backward."""
import torch


def hvp(f, x, v):
    x = x.detach().requires_grad_(True)
    (g,) = torch.autograd.grad(f(x), x, create_graph=True)  # g is itself a function of x
    if not g.requires_grad:  # f is linear (or constant): its gradient does not depend on x
        return torch.zeros_like(x)
    (hv,) = torch.autograd.grad(g, x, grad_outputs=v, allow_unused=True)
    return torch.zeros_like(x) if hv is None else hv.detach()


def penalised_loss(loss_fn, w, weight):
    loss = loss_fn(w)
    (g,) = torch.autograd.grad(loss, w, create_graph=True)  # keep the graph: the penalty is trained through
    return loss + weight * (g * g).sum()
