# Correct ordering, but adding an op after build() is quietly accepted (and re-plans).
class StaticGraph:
    def __init__(self):
        self._ops = {}
        self._plan = None

    def add_op(self, name, func, deps):
        self._ops[name] = (func, list(deps))
        self._plan = None

    def build(self):
        if self._plan is not None:
            return
        done, plan = set(), []
        pending = dict(self._ops)
        while pending:
            ready = [n for n, (_, deps) in pending.items() if all(d in done or d not in self._ops for d in deps)]
            if not ready:
                raise ValueError(f"cycle among {sorted(pending)}")
            for name in ready:
                plan.append(name)
                done.add(name)
                del pending[name]
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
