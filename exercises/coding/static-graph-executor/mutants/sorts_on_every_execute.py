# Right answers, but the plan is recomputed by a quadratic scan on every execute():
# the whole point of a static graph - plan once, run many times - is lost.
class StaticGraph:
    def __init__(self):
        self._ops = {}
        self._built = False

    def add_op(self, name, func, deps):
        if self._built:
            raise RuntimeError("graph already built")
        self._ops[name] = (func, list(deps))

    def _order(self):
        done, plan = set(), []
        pending = list(self._ops)
        while pending:
            for i, name in enumerate(pending):
                if all(d in done or d not in self._ops for d in self._ops[name][1]):
                    plan.append(name)
                    done.add(name)
                    del pending[i]
                    break
            else:
                raise ValueError(f"the graph has a cycle among {sorted(pending)}")
        return plan

    def build(self):
        self._order()
        self._built = True

    def execute(self, feed):
        self._built = True
        values = dict(feed)
        for name in self._order():
            func, deps = self._ops[name]
            for dep in deps:
                if dep not in values:
                    raise ValueError(f"missing input {dep!r}")
            values[name] = func(*[values[d] for d in deps])
        return values
