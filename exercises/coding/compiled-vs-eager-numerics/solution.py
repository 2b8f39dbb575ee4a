"""Reference solution: judge both results against the float64 answer, not against each other."""
import numpy as np


def rms_error(result, gold):
    diff = np.asarray(result, dtype=np.float64) - gold
    return float(np.sqrt(np.mean(diff * diff)))


def agrees(eager, compiled, gold):
    """A compiled result is acceptable when it is not clearly less accurate than eager itself."""
    gold = np.asarray(gold, dtype=np.float64)
    if np.asarray(compiled).shape != gold.shape or not np.all(np.isfinite(compiled) == np.isfinite(gold)):
        return False
    floor = np.finfo(np.asarray(eager).dtype).eps * float(np.sqrt(np.mean(gold * gold)))  # one rounding of the output
    return bool(rms_error(compiled, gold) <= 3.0 * rms_error(eager, gold) + floor)
