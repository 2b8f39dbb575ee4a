"""Reference solution: the least padding by dynamic programming over the sorted distinct lengths,
one numpy step per extra bucket."""
import numpy as np


def plan_buckets(lengths, max_shapes):
    sizes, counts = np.unique(np.asarray(lengths, dtype=np.int64), return_counts=True)
    d = len(sizes)
    k = min(max_shapes, d)
    n_before = np.concatenate([[0], np.cumsum(counts)])
    sum_before = np.concatenate([[0], np.cumsum(counts * sizes)])
    # run[i, j]: padding of one bucket at sizes[j] serving the distinct lengths i..j (inf when i > j)
    i, j = np.arange(d)[:, None], np.arange(d)[None, :]
    run = np.where(i <= j, (n_before[j + 1] - n_before[i]) * sizes[j] - (sum_before[j + 1] - sum_before[i]), np.inf)
    best = run[0].copy()
    starts = []
    for _ in range(1, k):
        before = np.concatenate([[np.inf], best[:-1]])  # least padding of lengths 0..i-1 (i == 0: no run before)
        total = before[:, None] + run
        arg = np.argmin(total, axis=0)
        new = total[arg, np.arange(d)]
        better = new < best
        starts.append(np.where(better, arg, 0))
        best = np.where(better, new, best)
    buckets, j = [int(sizes[d - 1])], d - 1
    for layer in reversed(starts):
        start = int(layer[j])
        if start == 0:
            continue
        j = start - 1
        buckets.append(int(sizes[j]))
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
