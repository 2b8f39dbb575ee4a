# The right dynamic programme, but one Python step per (bucket, first length, last length).
import numpy as np


def plan_buckets(lengths, max_shapes):
    sizes, counts = np.unique(np.asarray(lengths, dtype=np.int64), return_counts=True)
    sizes, counts = [int(s) for s in sizes], [int(c) for c in counts]
    d = len(sizes)
    k = min(max_shapes, d)
    inf = float("inf")
    n_before, sum_before = [0], [0]
    for s, c in zip(sizes, counts):
        n_before.append(n_before[-1] + c)
        sum_before.append(sum_before[-1] + c * s)
    best = [[inf] * d for _ in range(k)]
    start = [[0] * d for _ in range(k)]
    for layer in range(k):
        for j in range(d):
            for i in range(j + 1):
                before = 0 if i == 0 else (best[layer - 1][i - 1] if layer else inf)
                cost = before + (n_before[j + 1] - n_before[i]) * sizes[j] - (sum_before[j + 1] - sum_before[i])
                if cost < best[layer][j]:
                    best[layer][j], start[layer][j] = cost, i
    layer = min(range(k), key=lambda l: best[l][d - 1])
    buckets, j = [], d - 1
    while True:
        buckets.append(sizes[j])
        i = start[layer][j]
        if i == 0:
            break
        j, layer = i - 1, layer - 1
    return sorted(buckets)


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
