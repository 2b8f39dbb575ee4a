# Never compiles at all: no recompilations, and no compiled graph either.
def compile_for_stream(fn, backend):
    return fn
