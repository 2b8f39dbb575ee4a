# Buckets at evenly spaced sizes up to the longest length: simple, and far from the least padding.
import numpy as np


def plan_buckets(lengths, max_shapes):
    top = int(max(lengths))
    return sorted({int(np.ceil(top * (i + 1) / max_shapes)) for i in range(max_shapes)})


def batch_by_bucket(sequences, buckets):
    groups = {}
    for seq in sequences:
        size = next(b for b in buckets if b >= len(seq))
        groups.setdefault(size, []).append(seq)
    out = []
    for size in sorted(groups):
        seqs = groups[size]
        padded = np.zeros((len(seqs), size), dtype=np.float32)
        mask = np.zeros((len(seqs), size), dtype=bool)
        for row, seq in enumerate(seqs):
            padded[row, : len(seq)] = seq
            mask[row, : len(seq)] = True
        out.append((padded, mask))
    return out
