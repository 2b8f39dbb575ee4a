"""Checks for per-sample-gradients: one gradient per sample, equal to a backward per sample, batched."""
import numpy as np

from grader.harness import Race, check, close, fn, localize, perf, tensor

# One sample's loss: params is a tuple of tensors, x one input row, y its target.
LINEAR = "lambda p, x, y: 0.5 * ((x @ p[0] + p[1]) - y) ** 2"
MLP = "lambda p, x, y: -(y * torch.log_softmax(torch.tanh(x @ p[0] + p[1]) @ p[2], -1)).sum()"


def mlp_params(rng, n_in, hidden, classes):
    return (tensor(rng.normal(size=(n_in, hidden)) * 0.5), tensor(rng.normal(size=hidden)),
            tensor(rng.normal(size=(hidden, classes)) * 0.5))


def labelled(rng, n, n_in, classes):
    """Inputs and one-hot targets."""
    return tensor(rng.normal(size=(n, n_in))), tensor(np.eye(classes)[rng.integers(0, classes, size=n)])


def same(student, reference, loss, params, xs, ys, what, against="per_sample_grads_loop"):
    want = getattr(reference, against)(fn(loss), params, xs, ys)
    close(student.per_sample_grads(fn(loss), params, xs, ys), want, what=what)


@check(points=2, title={"en": "Linear regression, checked by hand", "zh-hans": "线性回归，手工核对"})
def linear_regression_by_hand(student, reference, rng):
    params = (tensor([1.0, -2.0]), tensor(0.5))
    xs, ys = tensor([[1.0, 0.0], [0.0, 1.0], [2.0, 3.0]]), tensor([1.0, 0.0, -1.0])
    same(student, reference, LINEAR, params, xs, ys, {
        "en": "per-sample gradients of 0.5 * (x @ w + b - y)^2 for three samples",
        "zh-hans": "三个样本上 0.5 * (x @ w + b - y)^2 的逐样本梯度"})


@check(points=2, title={"en": "A small classifier", "zh-hans": "一个小分类器"})
def a_small_classifier(student, reference, rng):
    params = mlp_params(rng, 4, 6, 3)
    xs, ys = labelled(rng, 5, 4, 3)
    same(student, reference, MLP, params, xs, ys, {
        "en": "per-sample gradients of a 4-6-3 classifier on 5 samples",
        "zh-hans": "4-6-3 分类器在 5 个样本上的逐样本梯度"})


@check(points=1, title={"en": "A batch of one", "zh-hans": "批大小为 1"})
def a_batch_of_one(student, reference, rng):
    params = mlp_params(rng, 3, 4, 2)
    xs, ys = labelled(rng, 1, 3, 2)
    same(student, reference, MLP, params, xs, ys, {"en": "a batch of one sample", "zh-hans": "只有一个样本的批次"})


@check(points=3, title={"en": "Random models and batches", "zh-hans": "随机的模型与批次"})
def random_models_and_batches(student, reference, rng):
    for n, n_in, hidden, classes in ((7, 2, 3, 2), (64, 10, 12, 4), (200, 5, 20, 7)):
        params = mlp_params(rng, n_in, hidden, classes)
        xs, ys = labelled(rng, n, n_in, classes)
        same(student, reference, MLP, params, xs, ys, localize(
            {"en": "a {n_in}-{hidden}-{classes} classifier on {n} samples",
             "zh-hans": "{n_in}-{hidden}-{classes} 分类器，{n} 个样本"}, n_in=n_in, hidden=hidden, classes=classes, n=n),
             against="per_sample_grads")  # also readies the reference's vmap before it is timed


@check(points=1, title={"en": "The parameters are left alone", "zh-hans": "不改动模型参数"})
def the_parameters_are_left_alone(student, reference, rng):
    params = (tensor(rng.normal(size=3)), tensor(0.0))
    xs, ys = tensor(rng.normal(size=(4, 3))), tensor(rng.normal(size=4))
    same(student, reference, LINEAR, params, xs, ys, {"en": "per-sample gradients of a linear model",
                                                       "zh-hans": "线性模型的逐样本梯度"})
    same(student, reference, LINEAR, params, xs * 2.0, ys, {"en": "the same parameters, new inputs",
                                                             "zh-hans": "参数相同，输入换新"})


@perf(points=3, title={"en": "A batch of 1024 (speed)", "zh-hans": "批大小为 1024（速度）"})
def a_batch_of_1024(student, reference, rng):
    loss, params = fn(MLP), mlp_params(rng, 4, 8, 3)
    return Race(student=student.per_sample_grads, reference=reference.per_sample_grads,
                inputs=lambda rng: (loss, params, *labelled(rng, 1024, 4, 3)))
