# Restores the saved random state for the recomputation but never puts the caller's back:
# every random number drawn after backward repeats an old one.
import torch


class _Checkpoint(torch.autograd.Function):
    @staticmethod
    def forward(ctx, fn, *args):
        ctx.fn = fn
        ctx.rng_state = torch.get_rng_state()  # the recomputation must draw the same random numbers
        ctx.tensor_at = [i for i, a in enumerate(args) if isinstance(a, torch.Tensor)]
        ctx.others = [None if isinstance(a, torch.Tensor) else a for a in args]
        ctx.save_for_backward(*(args[i] for i in ctx.tensor_at))
        with torch.no_grad():  # nothing inside the block is recorded: that is the memory saved
            return fn(*args)

    @staticmethod
    def backward(ctx, grad_out):
        args = list(ctx.others)
        for i, saved in zip(ctx.tensor_at, ctx.saved_tensors):
            args[i] = saved.detach().requires_grad_(saved.requires_grad)
        torch.set_rng_state(ctx.rng_state)
        with torch.enable_grad():
            out = ctx.fn(*args)
        wanted = [args[i] for i in ctx.tensor_at if args[i].requires_grad]
        grads = iter(torch.autograd.grad(out, wanted, grad_out, allow_unused=True) if wanted else ())
        by_position = [next(grads) if i in ctx.tensor_at and args[i].requires_grad else None for i in range(len(args))]
        return (None, *by_position)


def checkpoint(fn, *args):
    return _Checkpoint.apply(fn, *args)
