# Depth-first ordering that never notices a cycle: ops on it are silently dropped or misordered.
class StaticGraph:
    def __init__(self):
        self._ops = {}
        self._plan = None

    def add_op(self, name, func, deps):
        if self._plan is not None:
            raise RuntimeError("graph already built")
        self._ops[name] = (func, list(deps))

    def build(self):
        if self._plan is not None:
            return
        plan, seen = [], set()

        def visit(name):
            if name in seen or name not in self._ops:
                return
            seen.add(name)
            for dep in self._ops[name][1]:
                visit(dep)
            plan.append(name)

        for name in self._ops:
            visit(name)
        self._plan = plan

    def execute(self, feed):
        self.build()
        values = dict(feed)
        for name in self._plan:
            func, deps = self._ops[name]
            for dep in deps:
                if dep not in values:
                    raise ValueError(f"missing input {dep!r}")
            values[name] = func(*[values[d] for d in deps])
        return values
