# Every distinct length its own bucket: no padding at all, and one compiled shape per length.
import numpy as np


def plan_buckets(lengths, max_shapes):
    return sorted({int(v) for v in lengths})


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
