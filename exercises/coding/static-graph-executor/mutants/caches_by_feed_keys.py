# Plans correctly, but remembers results by the feed's keys: a second feed with new values
# gets the first feed's answers.
class StaticGraph:
    def __init__(self):
        self._ops = {}
        self._plan = None
        self._cache = {}

    def add_op(self, name, func, deps):
        if self._plan is not None:
            raise RuntimeError("graph already built")
        self._ops[name] = (func, list(deps))

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
        key = tuple(sorted(feed))
        if key in self._cache:
            return dict(self._cache[key])
        values = dict(feed)
        for name in self._plan:
            func, deps = self._ops[name]
            for dep in deps:
                if dep not in values:
                    raise ValueError(f"missing input {dep!r}")
            values[name] = func(*[values[d] for d in deps])
        self._cache[key] = dict(values)
        return values
