"""Reference solution: keep every shape fixed; a mask says which entries count."""
import torch


def masked_stats(x, threshold):
    keep = x > threshold
    count = keep.sum(dim=1)
    total = torch.where(keep, x, torch.zeros_like(x)).sum(dim=1)
    mean = torch.where(count > 0, total / count.clamp(min=1), torch.zeros_like(total))
    top = torch.where(keep, x, torch.full_like(x, float("-inf"))).amax(dim=1)
    return count, mean, torch.where(count > 0, top, torch.zeros_like(top))
