# Right values, but the whole n-by-n Hessian is built (one backward per row) to use one product of it.
import torch


def hvp(f, x, v):
    x = x.detach().requires_grad_(True)
    (g,) = torch.autograd.grad(f(x), x, create_graph=True)
    flat = g.reshape(-1)
    if not flat.requires_grad:
        return torch.zeros_like(x)
    rows = []
    for i in range(flat.numel()):
        (row,) = torch.autograd.grad(flat[i], x, retain_graph=True, allow_unused=True)
        rows.append(torch.zeros_like(x).reshape(-1) if row is None else row.reshape(-1))
    return (torch.stack(rows) @ v.reshape(-1)).reshape(x.shape).detach()


def penalised_loss(loss_fn, w, weight):
    loss = loss_fn(w)
    (g,) = torch.autograd.grad(loss, w, create_graph=True)
    return loss + weight * (g * g).sum()
