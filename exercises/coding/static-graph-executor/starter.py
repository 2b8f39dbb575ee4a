class StaticGraph:
    """Define first, run later: add ops, build a plan once, then execute it with fed inputs."""

    def __init__(self):
        self._ops = []
        self._built = False

    def add_op(self, name, func, deps):
        # Record the op; nothing is computed yet.
        self._ops.append((name, func, deps))

    def build(self):
        # TODO: order the ops by their dependencies and reject cycles.
        # TODO: once built, adding ops must fail.
        self._built = True

    def execute(self, feed):
        if not self._built:
            self.build()
        values = dict(feed)
        for name, func, deps in self._ops:  # insertion order: only right if ops were added in order
            values[name] = func(*[values[d] for d in deps])
        return values
