import torch


def masked_stats(x, threshold):
    """For each row of x: how many entries exceed threshold, their mean and their maximum
    (0.0 for both when none does). Right in eager mode; under torch.compile every row's
    selection has a size that depends on the data."""
    counts, means, tops = [], [], []
    for row in x:
        chosen = row[row > threshold]
        counts.append(chosen.numel())
        means.append(chosen.mean() if chosen.numel() else row.new_zeros(()))
        tops.append(chosen.max() if chosen.numel() else row.new_zeros(()))
    return torch.tensor(counts), torch.stack(means), torch.stack(tops)
