# The right rule, measured with nanmean: a NaN in the compiled result is simply skipped.
import numpy as np


def agrees(eager, compiled, gold):
    gold = np.asarray(gold, dtype=np.float64)
    errors = []
    for result in (eager, compiled):
        diff = np.asarray(result, dtype=np.float64) - gold
        errors.append(float(np.sqrt(np.nanmean(diff * diff))))
    floor = np.finfo(np.asarray(eager).dtype).eps * float(np.sqrt(np.mean(gold * gold)))
    return bool(errors[1] <= 3.0 * errors[0] + floor)
