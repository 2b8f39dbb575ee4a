class TracerError(RuntimeError):
    pass


class Proxy:
    """Stands in for an input while tracing: operators should record steps instead of computing."""

    def __init__(self, tracer, index):
        self._tracer = tracer
        self._index = index

    # TODO: __add__, __radd__, __sub__, __rsub__, __mul__, __rmul__, __truediv__, __rtruediv__,
    #       __matmul__, __pow__, __gt__, __lt__, __neg__ that record a step and return a new Proxy
    # TODO: __bool__, __float__, __int__ must raise TracerError("data-dependent control flow ...")


class Traced:
    def __init__(self, fn, num_inputs):
        self.fn = fn
        self.num_inputs = num_inputs
        self.ops = []  # TODO: the recorded op names, in order

    def run(self, *inputs):
        return self.fn(*inputs)  # TODO: replay the recorded steps instead of calling fn again


def trace(fn, num_inputs):
    return Traced(fn, num_inputs)
