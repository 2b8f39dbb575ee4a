# Runs the block with autograd recording, as if there were no checkpoint: right gradients,
# and every intermediate activation is kept for backward.
import torch


def checkpoint(fn, *args):
    return fn(*args)
