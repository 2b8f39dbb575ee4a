"""Checks for double-backward: Hessian-vector products without the Hessian, and a gradient penalty
that is itself trained through (create_graph)."""
from grader.harness import Race, as_code, check, close, fn, gradients, localize, perf, tensor

# Scalar functions of a 1-D float64 tensor, each with curvature somewhere.
CURVED = [
    "lambda x: torch.sum(torch.tanh(x) ** 2) + (x[:-1] * x[1:]).sum()",
    "lambda x: torch.logsumexp(x, 0) + 0.5 * (x ** 4).sum()",
    "lambda x: torch.sin(x).prod() + torch.cos(x[0] * x[-1])",
]
LOSSES = [
    "lambda w: (torch.sin(w) * w).sum()",
    "lambda w: ((w[:, None] * w[None, :]).tanh() ** 2).mean()",
]


def vec(rng, n, scale=1.0):
    return tensor(rng.normal(size=n) * scale)


@check(points=2, title={"en": "Matches the Hessian on a small function", "zh-hans": "在小函数上与 Hessian 一致"})
def matches_the_hessian_on_a_small_function(student, reference, rng):
    f = fn("lambda x: (x[0] ** 2) * x[1] + torch.exp(x[1] * x[2])")
    x, v = tensor([1.0, 2.0, -0.5]), tensor([0.5, -1.0, 2.0])
    close(student.hvp(f, x, v), reference.hvp(f, x, v), what=as_code("hvp(x0^2 x1 + exp(x1 x2), [1, 2, -0.5], [0.5, -1, 2])"))


@check(points=1, title={"en": "A linear function has zero curvature", "zh-hans": "线性函数的曲率为零"})
def a_linear_function_has_zero_curvature(student, reference, rng):
    f, x, v = fn("lambda x: (3.0 * x).sum() + 1.0"), tensor([1.0, -2.0, 4.0]), tensor([1.0, 1.0, 1.0])
    close(student.hvp(f, x, v), reference.hvp(f, x, v), what={"en": "hvp of the linear `3*sum(x) + 1`", "zh-hans": "线性函数 `3*sum(x) + 1` 的 hvp"})


@check(points=2, title={"en": "The penalty is trained through", "zh-hans": "梯度惩罚项能参与训练"})
def the_penalty_is_trained_through(student, reference, rng):
    loss, w = fn(LOSSES[0]), tensor([0.3, -1.2, 2.0], requires_grad=True)
    close(student.penalised_loss(loss, w, 0.1), reference.penalised_loss(loss, w, 0.1), what={"en": "penalised_loss value", "zh-hans": "penalised_loss 的值"})
    close(gradients(student.penalised_loss, loss, w, 0.1), gradients(reference.penalised_loss, loss, w, 0.1),
          what={"en": "the gradient of `penalised_loss(sum(sin(w) * w), w, 0.1)` with respect to `w`",
                "zh-hans": "`penalised_loss(sum(sin(w) * w), w, 0.1)` 对 `w` 的梯度"})


@check(points=3, title={"en": "Random points and directions", "zh-hans": "随机的点与方向"})
def random_points_and_directions(student, reference, rng):
    for source in CURVED:
        for n in (2, 7, 40):
            f, x, v = fn(source), vec(rng, n, 0.7), vec(rng, n)
            close(student.hvp(f, x, v), reference.hvp(f, x, v), what=localize(
                {"en": "hvp of a function of {n} variables", "zh-hans": "{n} 元函数的 hvp"}, n=n))


@check(points=2, title={"en": "Random penalties", "zh-hans": "随机的惩罚项"})
def random_penalties(student, reference, rng):
    for source in LOSSES:
        w = tensor(rng.normal(size=6), requires_grad=True)
        weight = float(rng.uniform(0.01, 1.0))
        close(gradients(student.penalised_loss, fn(source), w, weight),
              gradients(reference.penalised_loss, fn(source), w, weight), what={"en": "the gradient of a penalised loss", "zh-hans": "带惩罚项损失的梯度"})


@perf(points=2, title={"en": "Curvature of a thousand variables", "zh-hans": "一千个变量的曲率"})
def curvature_of_a_thousand_variables(student, reference, rng):
    f = fn(CURVED[0])
    return Race(student=student.hvp, reference=reference.hvp, inputs=lambda rng: (f, vec(rng, 1000, 0.7), vec(rng, 1000)))
