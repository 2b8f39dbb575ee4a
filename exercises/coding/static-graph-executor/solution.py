"""Reference solution: a define-then-run graph that plans once and executes many times."""


class StaticGraph:
    def __init__(self):
        self._ops = {}  # name -> (func, deps), in insertion order
        self._plan = None  # op names in dependency order, once built

    def add_op(self, name, func, deps):
        if self._plan is not None:
            raise RuntimeError(f"cannot add op {name!r}: the graph is already built")
        if name in self._ops:
            raise ValueError(f"op {name!r} is already defined")
        self._ops[name] = (func, list(deps))

    def build(self):
        """Order the ops so that every op comes after the ops it depends on (Kahn's algorithm)."""
        if self._plan is not None:
            return
        waiting = {name: {d for d in deps if d in self._ops} for name, (_, deps) in self._ops.items()}
        users = {name: [] for name in self._ops}
        for name, deps in waiting.items():
            for dep in deps:
                users[dep].append(name)
        ready = [name for name, deps in waiting.items() if not deps]
        plan = []
        while ready:
            name = ready.pop()
            plan.append(name)
            for user in users[name]:
                waiting[user].discard(name)
                if not waiting[user]:
                    ready.append(user)
        if len(plan) < len(self._ops):
            stuck = sorted(name for name, deps in waiting.items() if deps)
            raise ValueError(f"the graph has a cycle through: {', '.join(stuck)}")
        self._plan = plan

    def execute(self, feed):
        self.build()
        values = dict(feed)
        for name in self._plan:
            func, deps = self._ops[name]
            for dep in deps:
                if dep not in values:
                    raise ValueError(f"op {name!r} needs {dep!r}, which is neither an op nor in the feed")
            values[name] = func(*[values[dep] for dep in deps])
        return values
