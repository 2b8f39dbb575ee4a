import torch


def checkpoint(fn, *args):
    """fn(*args), with the same output and gradients, but keeping only the inputs for backward:
    the activations inside fn are recomputed when backward needs them."""
    return fn(*args)  # correct, and autograd keeps every activation inside fn until backward
