# Like torch.jit.trace: a branch on a traced value takes one side (trace only warns).
import operator


class TracerError(RuntimeError):
    pass


OPS = {
    "add": operator.add, "sub": operator.sub, "mul": operator.mul, "truediv": operator.truediv,
    "matmul": operator.matmul, "pow": operator.pow, "gt": operator.gt, "lt": operator.lt, "neg": operator.neg,
}


class Proxy:
    """A value that does not exist yet: operating on it appends a step to the trace."""

    def __init__(self, tracer, index):
        self._tracer = tracer
        self._index = index

    def _record(self, op, *args):
        return self._tracer.record(op, args)

    def __add__(self, other): return self._record("add", self, other)
    def __radd__(self, other): return self._record("add", other, self)
    def __sub__(self, other): return self._record("sub", self, other)
    def __rsub__(self, other): return self._record("sub", other, self)
    def __mul__(self, other): return self._record("mul", self, other)
    def __rmul__(self, other): return self._record("mul", other, self)
    def __truediv__(self, other): return self._record("truediv", self, other)
    def __rtruediv__(self, other): return self._record("truediv", other, self)
    def __matmul__(self, other): return self._record("matmul", self, other)
    def __rmatmul__(self, other): return self._record("matmul", other, self)
    def __pow__(self, other): return self._record("pow", self, other)
    def __gt__(self, other): return self._record("gt", self, other)
    def __lt__(self, other): return self._record("lt", self, other)
    def __neg__(self): return self._record("neg", self)

    def _refuse(self, what):
        raise TracerError(
            f"data-dependent control flow: {what} needs the value of a traced tensor, which does not exist "
            "while tracing; express the choice with arithmetic (e.g. mask = x > 0; x * mask) instead"
        )

    def __bool__(self): return True
    def __float__(self): self._refuse("float() of a traced value")
    def __int__(self): self._refuse("int() of a traced value")
    def __index__(self): self._refuse("using a traced value as an index")


class Traced:
    def __init__(self, num_inputs, steps, output):
        self.num_inputs = num_inputs
        self._steps = steps  # (op, args) where an arg is ("value", i) or ("const", c)
        self._output = output

    @property
    def ops(self):
        return [op for op, _ in self._steps]

    def run(self, *inputs):
        if len(inputs) != self.num_inputs:
            raise TypeError(f"expected {self.num_inputs} inputs, got {len(inputs)}")
        values = list(inputs)
        for op, args in self._steps:
            values.append(OPS[op](*[values[a] if kind == "value" else a for kind, a in args]))
        kind, where = self._output
        return values[where] if kind == "value" else where


class Tracer:
    def __init__(self):
        self.steps = []
        self.count = 0

    def new_value(self):
        self.count += 1
        return Proxy(self, self.count - 1)

    def record(self, op, args):
        encoded = [("value", a._index) if isinstance(a, Proxy) else ("const", a) for a in args]
        self.steps.append((op, encoded))
        return self.new_value()


def trace(fn, num_inputs):
    tracer = Tracer()
    inputs = [tracer.new_value() for _ in range(num_inputs)]
    out = fn(*inputs)
    output = ("value", out._index) if isinstance(out, Proxy) else ("const", out)
    return Traced(num_inputs, tracer.steps, output)
