# The article's own demo: ops run in the order they were added.
class StaticGraph:
    def __init__(self):
        self._op_list = []
        self._built_flag = False

    def add_op(self, name, func, deps):
        if self._built_flag:
            raise ValueError("graph already built, cannot add ops")
        self._op_list.append({"name": name, "func": func, "deps": deps})

    def build(self):
        self._built_flag = True
        names = [op["name"] for op in self._op_list]
        print("[build] plan:", names)

    def execute(self, feed):
        if not self._built_flag:
            self.build()
        values = dict(feed)
        for op in self._op_list:
            args = [values[d] for d in op["deps"]]
            values[op["name"]] = op["func"](*args)
            print("[exec]", op["name"], "=", values[op["name"]])
        return values
