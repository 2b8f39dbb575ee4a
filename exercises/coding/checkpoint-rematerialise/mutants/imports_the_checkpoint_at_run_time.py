# The same, with the module's name built at run time, which no reading of the source can see:
# the student's process refuses the import itself.
import importlib

library = importlib.import_module(".".join(["torch", "utils", "check" + "point"]))


def checkpoint(fn, *args):
    return library.checkpoint(fn, *args, use_reentrant=False)
