# Every new size is a new exact specialisation: a growing batch recompiles on every call.
import numpy as np


def describe(args):
    """What the guards look at: per argument, an array's dtype and shape, or a scalar's type and value."""
    out = []
    for arg in args:
        if isinstance(arg, np.ndarray):
            out.append(("array", arg.dtype.str, tuple(arg.shape)))
        elif isinstance(arg, (bool, int, float, str)):
            out.append(("scalar", type(arg).__name__, arg))
        else:
            raise TypeError(f"jit: cannot guard on an argument of type {type(arg).__name__}")
    return tuple(out)


def guard_passes(guard, seen):
    if len(guard) != len(seen):
        return False
    for g, s in zip(guard, seen):
        if g[0] != s[0] or g[1] != s[1]:
            return False
        if g[0] == "scalar":
            if g[2] != s[2]:
                return False
        elif len(g[2]) != len(s[2]) or any(p is not None and p != d for p, d in zip(g[2], s[2])):
            return False
    return True


def generalise(guard, seen):
    """The guard with every size that differs from ``seen`` made dynamic, or None if more than sizes differ."""
    if len(guard) != len(seen):
        return None
    out = []
    for g, s in zip(guard, seen):
        if g[0] != s[0] or g[1] != s[1] or (g[0] == "scalar" and g[2] != s[2]):
            return None
        if g[0] == "array":
            if len(g[2]) != len(s[2]):
                return None
            g = ("array", g[1], tuple(p if p == d else None for p, d in zip(g[2], s[2])))
        out.append(g)
    return tuple(out)


class Compiled:
    def __init__(self, fn, cache_limit):
        self.fn = fn
        self.cache_limit = cache_limit
        self.entries = []  # guards, in the order they were compiled
        self.compiles = 0
        self.hits = 0
        self.eager_calls = 0

    def __call__(self, *args):
        seen = describe(args)
        for guard in self.entries:
            if guard_passes(guard, seen):
                self.hits += 1
                return self.fn(*args)
        if self.compiles >= self.cache_limit:
            self.eager_calls += 1  # past the limit: stop compiling, run as plain Python
            return self.fn(*args)
        guard = seen
        for earlier in []:  # a size changed before: make it dynamic now
            wider = generalise(earlier, seen)
            if wider is not None:
                guard = wider
                break
        self.entries.append(guard)
        self.compiles += 1
        return self.fn(*args)


def jit(fn, cache_limit=8):
    return Compiled(fn, cache_limit)
