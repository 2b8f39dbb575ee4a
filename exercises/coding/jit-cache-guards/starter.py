import numpy as np


class Compiled:
    def __init__(self, fn, cache_limit):
        self.fn = fn
        self.cache_limit = cache_limit
        self.compiles = 0
        self.hits = 0
        self.eager_calls = 0

    def __call__(self, *args):
        # TODO: look for a cache entry whose guards accept these arguments (a hit), else
        #       compile a new entry (making sizes that changed dynamic), up to cache_limit.
        self.compiles += 1
        return self.fn(*args)


def jit(fn, cache_limit=8):
    return Compiled(fn, cache_limit)
