# Vectorised over rows, but the selected entries are gathered with nonzero(): the number of
# entries it returns depends on the data, and torch.compile cannot capture it in one graph.
import torch


def masked_stats(x, threshold):
    rows, cols = torch.nonzero(x > threshold, as_tuple=True)
    values = x[rows, cols]
    count = torch.bincount(rows, minlength=x.shape[0])
    total = torch.zeros(x.shape[0], dtype=x.dtype).index_add(0, rows, values)
    mean = torch.where(count > 0, total / count.clamp(min=1), torch.zeros_like(total))
    top = torch.full((x.shape[0],), float("-inf"), dtype=x.dtype).scatter_reduce(0, rows, values, "amax")
    return count, mean, torch.where(count > 0, top, torch.zeros_like(top))
