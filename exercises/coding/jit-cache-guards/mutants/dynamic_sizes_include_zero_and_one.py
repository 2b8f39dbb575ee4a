# A dynamic size accepts every size, 0 and 1 included: no 0/1 specialisation.
import numpy as np


def describe(arg):
    """What a guard can look at for one argument: its kind, its type or dtype, and its sizes or value."""
    if isinstance(arg, np.ndarray):
        return ("array", arg.dtype.str, tuple(int(n) for n in arg.shape))
    if isinstance(arg, (bool, int, float, str)):
        return ("number" if type(arg) in (int, float) else "constant", type(arg).__name__, arg)
    raise TypeError(f"jit: cannot guard on an argument of type {type(arg).__name__}")


class Compiled:
    def __init__(self, fn, cache_limit):
        self.fn = fn
        self.cache_limit = cache_limit
        self.entries = []  # one guard per compiled version
        self.first = None  # the first call's description: what "changed" is measured against
        self.changed = set()  # (argument, dimension) pairs, or (argument, None) for a number, seen to change
        self.compiles = self.hits = self.eager_calls = 0

    def __call__(self, *args):
        seen = tuple(describe(a) for a in args)
        if any(self._passes(guard, seen) for guard in self.entries):
            self.hits += 1
        elif self.compiles >= self.cache_limit:
            self.eager_calls += 1  # past the limit: no new version, plain Python
        else:
            self._note_changes(seen)
            self.entries.append(self._guard(seen))
            self.compiles += 1
        return self.fn(*args)

    def _note_changes(self, seen):
        if self.first is None:
            self.first = seen
            return
        if len(seen) != len(self.first):
            return
        for i, (now, then) in enumerate(zip(seen, self.first)):
            if now[0] == then[0] == "array" and len(now[2]) == len(then[2]):  # whatever the dtypes
                self.changed |= {(i, d) for d, (a, b) in enumerate(zip(now[2], then[2])) if a != b}
            elif now[0] == then[0] == "number" and now[2] != then[2]:  # an int may follow a float
                self.changed.add((i, None))

    def _guard(self, seen):
        guard = []
        for i, (kind, type_name, value) in enumerate(seen):
            if kind == "array":
                value = tuple(None if (i, d) in self.changed else n for d, n in enumerate(value))
            elif kind == "number" and (i, None) in self.changed:
                value = None
            guard.append((kind, type_name, value))
        return tuple(guard)

    @staticmethod
    def _passes(guard, seen):
        if len(guard) != len(seen):
            return False
        for (kind, type_name, want), (k, t, got) in zip(guard, seen):
            if (kind, type_name) != (k, t):
                return False
            if kind == "array":
                if len(want) != len(got) or any(w is not None and w != g for w, g in zip(want, got)):
                    return False
            elif want is not None and want != got:
                return False
        return True


def jit(fn, cache_limit=8):
    return Compiled(fn, cache_limit)
