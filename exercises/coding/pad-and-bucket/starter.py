import numpy as np


def plan_buckets(lengths, max_shapes):
    """At most ``max_shapes`` bucket sizes (increasing ints) that waste the fewest padded positions.

    This version compiles a single shape: everything is padded to the longest sequence.
    """
    return [int(max(lengths))]


def batch_by_bucket(sequences, buckets):
    """One (padded float32 array, bool mask) pair per bucket that received a sequence."""
    raise NotImplementedError
