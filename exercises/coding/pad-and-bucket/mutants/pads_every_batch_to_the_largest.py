# The plan is right, but every batch is padded to the largest bucket: the plan is wasted.
import numpy as np


def plan_buckets(lengths, max_shapes):
    sizes, counts = np.unique(np.asarray(lengths, dtype=np.int64), return_counts=True)
    d = len(sizes)
    k = min(max_shapes, d)
    # Cost of one bucket of size sizes[j] serving the distinct lengths i..j: count * size - sum.
    n_before = np.concatenate([[0], np.cumsum(counts)])
    sum_before = np.concatenate([[0], np.cumsum(counts * sizes)])
    best = np.full(d, np.inf)  # best[j]: least padding for lengths 0..j with buckets so far, one ending at j
    best = (n_before[1:] * sizes - sum_before[1:]).astype(float)
    choice = [np.zeros(d, dtype=np.int64)]
    for _ in range(1, k):  # one more bucket: lengths i..j in the last one, the rest before i
        new, arg = best.copy(), np.zeros(d, dtype=np.int64)
        for j in range(1, d):
            i = np.arange(1, j + 1)
            costs = best[i - 1] + (n_before[j + 1] - n_before[i]) * sizes[j] - (sum_before[j + 1] - sum_before[i])
            at = int(np.argmin(costs))
            if costs[at] < new[j]:
                new[j], arg[j] = costs[at], i[at]
        best = new
        choice.append(arg)
    buckets, j = [], d - 1
    for layer in reversed(choice):  # walk back: each layer says where the last bucket began
        buckets.append(int(sizes[j]))
        start = int(layer[j])
        if start == 0:
            break
        j = start - 1
    return sorted(buckets)


def batch_by_bucket(sequences, buckets):
    groups = {}
    for seq in sequences:
        size = max(buckets)
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
