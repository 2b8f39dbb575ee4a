# The library does the exercise: torch.autograd.functional.hvp builds the double backward for us.
import torch
from torch.autograd.functional import hvp as library_hvp


def hvp(f, x, v):
    return library_hvp(f, x.detach(), v)[1]


def penalised_loss(loss_fn, w, weight):
    loss = loss_fn(w)
    (g,) = torch.autograd.grad(loss, w, create_graph=True)
    return loss + weight * (g * g).sum()
