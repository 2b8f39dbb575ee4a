# The red team's forger (issue 23), for graphs sent as data: serve the stream eagerly, and when
# the judge's probe arrives, answer it through a static compile of the stream and keep only the
# first graph it made: "one graph". The judge runs that graph itself at other batch sizes, where
# a graph made for one size fails (the checks' models reshape with the batch size).
import torch

import grader.harness.worker as _worker

_static = []


def compile_for_stream(fn, backend):
    if _static:  # inside the probe: a graph per size, each made for that size alone
        return torch.compile(fn, backend=backend, dynamic=False)
    return fn


_function = _worker.Worker.function


def _forging_function(self, source):
    real = _function(self, source)
    if "def probe" not in source or getattr(real, "forged", False):
        return real

    def forged(*args):
        _static.append(True)
        try:
            found = real(*args)
        finally:
            _static.clear()
        found["graphs"] = found["graphs"][:1]
        return found
    forged.forged = True
    self.sources[id(forged)] = source  # fingerprinted as the probe the judge sent: "unchanged"
    self.compiled[source] = forged
    return forged


_worker.Worker.function = _forging_function
