"""Checks for checkpoint-rematerialise: the same outputs and gradients as running the block
plainly, with only the inputs kept for backward, and the same random numbers when it runs again.

The probe runs inside each program: it seeds the RNG, runs the block (checkpointed, or plainly
in the reference), counts the bytes that autograd packs for backward through
torch.autograd.graph.saved_tensors_hooks, reseeds, and backpropagates.
"""
from grader.harness import as_code, check, close, fail, fn, localize, run_in, tensor

PROBE_SOURCE = '''
def probe(how, block, seed, *args):
    import sys
    program = sys.modules.get("submission") or sys.modules["solution"]
    args = [a.detach().requires_grad_(True) if isinstance(a, torch.Tensor) and a.is_floating_point() else a
            for a in args]
    saved = []

    def pack(t):
        saved.append(t.numel() * t.element_size())
        return t

    torch.manual_seed(seed)
    with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        out = program.checkpoint(block, *args) if how == "checkpoint" else block(*args)
    torch.manual_seed(seed + 1)  # backward must not lean on whatever the RNG holds by then
    out.sum().backward()
    after = torch.rand(1)  # a checkpoint must leave the caller's random stream where it was
    grads = [a.grad for a in args if isinstance(a, torch.Tensor) and a.requires_grad]
    return {"out": out.detach(), "grads": grads, "saved": sum(saved), "after": after}
'''
PROBE = fn("lambda *a: (lambda ns: (exec(" + repr(PROBE_SOURCE) + ", ns), ns['probe'](*a))[1])({'torch': torch})")

MLP = "lambda x, w1, w2: torch.tanh(torch.tanh(x @ w1) @ w1.T) @ w2"
DROPOUT = "lambda x, w: torch.nn.functional.dropout(torch.relu(x @ w), 0.5, training=True) @ w.T"


def compare(student, reference, block, args, what, seed=1234):
    """The student's checkpoint against the block run plainly; returns (student's, plain) reports."""
    got = run_in(student, PROBE, "checkpoint", fn(block), seed, *args)
    plain = run_in(reference, PROBE, "plain", fn(block), seed, *args)
    close(got["out"], plain["out"], what=localize({"en": "{what}: the output", "zh-hans": "{what}：输出"}, what=what))
    close(got["grads"], plain["grads"], what=localize({"en": "{what}: the gradients", "zh-hans": "{what}：梯度"}, what=what))
    close(got["after"], plain["after"], what=localize(
        {"en": "{what}: the next random number after backward", "zh-hans": "{what}：反向传播之后的下一个随机数"}, what=what))
    return got, plain


def keeps_only_inputs(student, reference, block, args, what):
    got, plain = compare(student, reference, block, args, what)
    inputs = run_in(reference, PROBE, "checkpoint", fn(block), 1234, *args)["saved"]
    if got["saved"] > inputs:
        fail({"en": "{what}: autograd kept {saved} bytes for backward; the inputs alone are {inputs} bytes "
                    "(running the block plainly keeps {plain})",
              "zh-hans": "{what}：autograd 为反向传播保存了 {saved} 字节，而输入本身只有 {inputs} 字节"
                         "（不做检查点直接运行该模块会保存 {plain} 字节）"},
             what=what, saved=got["saved"], inputs=inputs, plain=plain["saved"])


def mlp_args(rng, batch=16, width=32, hidden=128):
    return (tensor(rng.normal(size=(batch, width)), "float32"), tensor(rng.normal(size=(width, hidden)) * 0.2, "float32"),
            tensor(rng.normal(size=(width, 3)), "float32"))


@check(points=2, title={"en": "Same gradients as running without checkpoints", "zh-hans": "梯度与不做检查点时相同"})
def same_gradients_as_running_plainly(student, reference, rng):
    x, w1, w2 = tensor([[1.0, -1.0], [0.5, 2.0]]), tensor([[0.3, 0.1], [-0.2, 0.4]]), tensor([[1.0], [2.0]])
    compare(student, reference, MLP, (x, w1, w2), as_code("checkpoint(tanh(tanh(x @ w1) @ w1.T) @ w2)"))


@check(points=3, title={"en": "Keeps only the inputs", "zh-hans": "只保留输入"})
def keeps_only_the_inputs(student, reference, rng):
    keeps_only_inputs(student, reference, MLP, mlp_args(rng), {"en": "a two-layer block on a 16x32 batch",
                                                                  "zh-hans": "16x32 批次上的两层模块"})


@check(points=2, title={"en": "Dropout draws the same mask again", "zh-hans": "重算时 dropout 生成同样的掩码"})
def dropout_draws_the_same_mask_again(student, reference, rng):
    x, w = tensor(rng.normal(size=(8, 6))), tensor(rng.normal(size=(6, 10)))
    compare(student, reference, DROPOUT, (x, w), {"en": "a block with `dropout(p=0.5)`", "zh-hans": "带 `dropout(p=0.5)` 的模块"})


@check(points=1, title={"en": "Arguments that are not trained", "zh-hans": "不参与训练的参数"})
def arguments_that_are_not_trained(student, reference, rng):
    block = "lambda x, w, scale, mask: (torch.sin(x @ w) * scale).masked_fill(mask, 0.0)"
    x, w = tensor(rng.normal(size=(5, 4))), tensor(rng.normal(size=(4, 3)))
    mask = tensor(rng.random(size=(5, 3)) < 0.3, dtype="bool")
    compare(student, reference, block, (x, w, 2.5, mask), {
        "en": "a block with a float and a bool mask among its arguments",
        "zh-hans": "参数中含一个浮点数和一个布尔掩码的模块"})


@check(points=2, title={"en": "Random blocks", "zh-hans": "随机的计算块"})
def random_blocks(student, reference, rng):
    for batch, width, hidden in ((4, 3, 7), (32, 16, 64)):
        keeps_only_inputs(student, reference, MLP, mlp_args(rng, batch, width, hidden), localize({"en": "a {width}-{hidden} block", "zh-hans": "{width}-{hidden} 的模块"}, width=width, hidden=hidden))
        x, w = tensor(rng.normal(size=(batch, width))), tensor(rng.normal(size=(width, hidden)))
        compare(student, reference, DROPOUT, (x, w), localize({"en": "dropout in a {width}-{hidden} block", "zh-hans": "{width}-{hidden} 模块中的 dropout"},
                                              width=width, hidden=hidden), seed=int(rng.integers(1 << 30)))
