"""Checks for jit-cache-guards: the result and the three counters after every call, against the reference."""
import numpy as np

from grader.harness import as_code, check, close, equal, fn, localize

SCALE = "lambda x, k: x * k + 1"
MATMUL = "lambda a, b: a @ b"


def counters(compiled):
    return {"compiles": compiled.compiles.get(), "hits": compiled.hits.get(), "eager_calls": compiled.eager_calls.get()}


def replay(student, reference, source, calls, what, cache_limit=8):
    mine = student.jit(fn(source), cache_limit)
    theirs = reference.jit(fn(source), cache_limit)
    for i, args in enumerate(calls):
        label = localize({"en": "{what}, call {n} ({args})", "zh-hans": "{what}，第 {n} 次调用（{args}）"},
                         what=what, n=i + 1, args=describe(args))
        close(mine(*args), theirs(*args), what=localize({"en": "{label}: the result", "zh-hans": "{label}：结果"}, label=label))
        equal(counters(mine), counters(theirs), what=localize(
            {"en": "{label}: compiles/hits/eager_calls", "zh-hans": "{label}：compiles/hits/eager_calls"}, label=label))


def describe(args):
    return ", ".join(f"{a.dtype}{list(a.shape)}" if isinstance(a, np.ndarray) else repr(a) for a in args)


def ones(*shape, dtype=np.float64):
    return np.ones(shape, dtype=dtype)


@check(points=1, title={"en": "The same shape hits the cache", "zh-hans": "相同形状命中缓存"})
def the_same_shape_hits_the_cache(student, reference, rng):
    replay(student, reference, SCALE, [(ones(4, 3), 2.0), (ones(4, 3) * 2, 2.0), (ones(4, 3) * 3, 2.0)], as_code("x * 2.0 + 1"))


@check(points=1, title={"en": "A new dtype recompiles", "zh-hans": "新的数据类型触发重新编译"})
def a_new_dtype_recompiles(student, reference, rng):
    replay(student, reference, SCALE, [(ones(4, 3), 2.0), (ones(4, 3, dtype=np.float32), 2.0), (ones(4, 3), 2.0)], as_code("x * 2.0 + 1"))


@check(points=2, title={"en": "A size that changes becomes dynamic", "zh-hans": "变化的尺寸会变为动态尺寸"})
def a_size_that_changes_becomes_dynamic(student, reference, rng):
    calls = [(ones(4, 3), 2.0), (ones(5, 3), 2.0), (ones(6, 3), 2.0), (ones(9, 3), 2.0), (ones(9, 4), 2.0), (ones(2, 7), 2.0)]
    replay(student, reference, SCALE, calls, {"en": "batches of changing size", "zh-hans": "大小不断变化的批次"})


@check(points=1, title={"en": "A number that changes becomes dynamic", "zh-hans": "变化的数字会变为动态值"})
def a_number_that_changes_becomes_dynamic(student, reference, rng):
    calls = [(ones(3), 2.0), (ones(3), 3.0), (ones(3), 2.0), (ones(3), 7.5), (ones(3), 2), (ones(3), 5)]
    replay(student, reference, SCALE, calls, {"en": "x * k + 1 for several k", "zh-hans": "取多个 k 值的 x * k + 1"})


@check(points=2, title={"en": "Sizes 0 and 1 stay specialised", "zh-hans": "尺寸 0 和 1 保持特化"})
def sizes_zero_and_one_stay_specialised(student, reference, rng):
    calls = [(ones(4, 3), 2.0), (ones(5, 3), 2.0), (ones(1, 3), 2.0), (ones(7, 3), 2.0), (ones(1, 3), 2.0), (ones(0, 3), 2.0),
             (ones(2, 3), 2.0)]
    replay(student, reference, SCALE, calls, {"en": "batches of 4, 5, 1, 7, 1, 0 and 2 rows",
                                               "zh-hans": "行数为 4、5、1、7、1、0、2 的批次"})


@check(points=1, title={"en": "Past the limit it runs eagerly", "zh-hans": "超过上限后改为立即执行"})
def past_the_limit_it_runs_eagerly(student, reference, rng):
    calls = [(ones(n, 2), 2.0) for n in (4, 5, 1, 0)] + [(ones(3, 2), 2.0), (ones(2), 2.0), (ones(3), 2.0), (ones(1, 2), 2.0)]
    replay(student, reference, SCALE, calls, {
        "en": "shapes 4x2, 5x2, 1x2, 0x2, 3x2, 2, 3, 1x2 with cache_limit=3",
        "zh-hans": "cache_limit=3 时的形状 4x2、5x2、1x2、0x2、3x2、2、3、1x2"}, cache_limit=3)


@check(points=1, title={"en": "matmul with two dynamic arguments", "zh-hans": "带两个动态参数的 matmul"})
def matmul_with_two_dynamic_arguments(student, reference, rng):
    calls = [(ones(2, 3), ones(3, 4)), (ones(5, 3), ones(3, 4)), (ones(5, 3), ones(3, 6)), (ones(8, 3), ones(3, 1)),
             (ones(8, 2), ones(2, 1))]
    replay(student, reference, MATMUL, calls, as_code("a @ b"))


@check(points=3, title={"en": "Random call sequences", "zh-hans": "随机的调用序列"})
def random_call_sequences(student, reference, rng):
    for limit in (2, 4, 8):
        calls = []
        for _ in range(25):
            rows = int(rng.choice([4, 4, 4, 8, 16, 3, 1, 0]))
            cols = int(rng.choice([3, 3, 3, 5, 1]))
            dtype = np.float32 if rng.random() < 0.2 else np.float64
            k = float(rng.choice([2.0, 2.0, 2.0, 0.5])) if rng.random() < 0.9 else int(rng.integers(1, 3))
            x = rng.normal(size=(rows, cols)).astype(dtype)
            if rng.random() < 0.1:
                x = x.reshape(-1)
            calls.append((x, k))
        replay(student, reference, SCALE, calls, localize(
            {"en": "random calls with cache_limit={limit}", "zh-hans": "cache_limit={limit} 时的随机调用"}, limit=limit),
               cache_limit=limit)
