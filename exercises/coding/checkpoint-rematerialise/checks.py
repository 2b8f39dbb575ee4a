"""Checks for checkpoint-rematerialise: the same outputs and gradients as running the block
plainly, with only the inputs kept for backward, and the same random numbers when it runs again.

PROBE runs inside each program: it seeds the RNG, runs the block (checkpointed, or plainly in
the reference), reseeds, and backpropagates. What autograd keeps is not asked of the student's
process, which could say anything about itself: a fresh worker runs a chain of blocks and keeps
the output, and the judge reads the memory its processes hold (grader.harness.memory_held)
before backward runs through the same chain, whose gradients must be right.
"""
from grader.harness import as_code, check, close, fail, fn, localize, memory_held, run_in, tensor

PROBE_SOURCE = '''
def probe(how, block, seed, *args):
    import sys
    program = sys.modules.get("submission") or sys.modules["solution"]
    args = [a.detach().requires_grad_(True) if isinstance(a, torch.Tensor) and a.is_floating_point() else a
            for a in args]
    torch.manual_seed(seed)
    out = program.checkpoint(block, *args) if how == "checkpoint" else block(*args)
    torch.manual_seed(seed + 1)  # backward must not lean on whatever the RNG holds by then
    out.sum().backward()
    after = torch.rand(1)  # a checkpoint must leave the caller's random stream where it was
    grads = [a.grad for a in args if isinstance(a, torch.Tensor) and a.requires_grad]
    return {"out": out.detach(), "grads": grads, "after": after}
'''
PROBE = fn("lambda *a: (lambda ns: (exec(" + repr(PROBE_SOURCE) + ", ns), ns['probe'](*a))[1])({'torch': torch})")

# A chain of blocks, each on the last one's output: what a checkpoint keeps grows with the
# chain, and no block can share what it keeps with another.
HOLD_SOURCE = '''
def hold(block, x, *weights):
    import sys
    import types
    program = sys.modules.get("submission") or sys.modules["solution"]
    inputs = [t.detach().requires_grad_(True) for t in (x, *weights)]
    out = inputs[0]
    for w in inputs[1:]:
        out = program.checkpoint(block, out, w)
    try:
        # Memory the block used for a moment and freed, glibc may keep in its heap: given back,
        # it is not counted as held. (A program that undoes this only counts more against itself.)
        import ctypes
        ctypes.CDLL("libc.so.6").malloc_trim(0)
    except (OSError, AttributeError):
        pass
    return types.SimpleNamespace(inputs=inputs, out=out)  # a handle: it all stays in this process
'''
HOLD = fn("lambda *a: (lambda ns: (exec(" + repr(HOLD_SOURCE) + ", ns), ns['hold'](*a))[1])({})")
BACKWARD = fn("lambda held: (held.out.sum().backward(), "
              "{'out': held.out.detach(), 'grads': [t.grad for t in held.inputs]})[1]")
CHAINED = "lambda x, w: torch.tanh(torch.tanh(x @ w) @ w.T)"

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


def keeps_only_inputs(student, reference, rng, depth, batch, width, hidden, what):
    """A chain of ``depth`` blocks, each keeping a ``batch`` x ``hidden`` float32 activation when
    run plainly: the student's process may hold at most half of those more than the reference's."""
    x = tensor(rng.normal(size=(batch, width)), "float32")
    weights = [tensor(rng.normal(size=(width, hidden)) / width**0.5, "float32") for _ in range(depth)]
    compare(student, reference, CHAINED, (x, weights[0]), localize(
        {"en": "{what}, its first block alone", "zh-hans": "{what}，单看其第一个模块"}, what=what))
    held, chain = memory_held(student, HOLD, fn(CHAINED), x, *weights)
    got = run_in(student, BACKWARD, chain)
    want_held, chain = memory_held(reference, HOLD, fn(CHAINED), x, *weights)
    want = run_in(reference, BACKWARD, chain)
    close(got, want, what=localize({"en": "{what}: the output and the gradients", "zh-hans": "{what}：输出和梯度"},
                                   what=what))
    activations = depth * batch * hidden * 4
    if held - want_held > activations // 2:
        fail({"en": "{what}: before backward, your program held {more} MB more memory than the reference "
                    "solution, measured from outside it; keeping every activation of the chain is about {all} MB",
              "zh-hans": "{what}：反向传播之前，从程序外部测得你的程序比参考解多占用 {more} MB 内存；"
                         "保留整条链的所有激活值大约需要 {all} MB"},
             what=what, more=round((held - want_held) / 2**20), all=round(activations / 2**20))


def mlp_args(rng, batch=16, width=32, hidden=128):
    return (tensor(rng.normal(size=(batch, width)), "float32"), tensor(rng.normal(size=(width, hidden)) * 0.2, "float32"),
            tensor(rng.normal(size=(width, 3)), "float32"))


@check(points=2, title={"en": "Same gradients as running without checkpoints", "zh-hans": "梯度与不做检查点时相同"})
def same_gradients_as_running_plainly(student, reference, rng):
    x, w1, w2 = tensor([[1.0, -1.0], [0.5, 2.0]]), tensor([[0.3, 0.1], [-0.2, 0.4]]), tensor([[1.0], [2.0]])
    compare(student, reference, MLP, (x, w1, w2), as_code("checkpoint(tanh(tanh(x @ w1) @ w1.T) @ w2)"))


@check(points=3, title={"en": "Keeps only the inputs", "zh-hans": "只保留输入"})
def keeps_only_the_inputs(student, reference, rng):
    keeps_only_inputs(student, reference, rng, 24, 256, 32, 4096, {
        "en": "a chain of 24 blocks `tanh(tanh(x @ w) @ w.T)` on a 256x32 batch, 4096 wide inside",
        "zh-hans": "由 24 个 `tanh(tanh(x @ w) @ w.T)` 模块组成的链，批次 256x32，内部宽 4096"})


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
        x, w1, w2 = mlp_args(rng, batch, width, hidden)
        compare(student, reference, MLP, (x, w1, w2), localize({"en": "a {width}-{hidden} block", "zh-hans": "{width}-{hidden} 的模块"}, width=width, hidden=hidden))
        x, w = tensor(rng.normal(size=(batch, width))), tensor(rng.normal(size=(width, hidden)))
        compare(student, reference, DROPOUT, (x, w), localize({"en": "dropout in a {width}-{hidden} block", "zh-hans": "{width}-{hidden} 模块中的 dropout"},
                                              width=width, hidden=hidden), seed=int(rng.integers(1 << 30)))
    depth, hidden = int(rng.integers(20, 25)), int(rng.choice([4096, 5120]))
    keeps_only_inputs(student, reference, rng, depth, 256, 24, hidden, localize(
        {"en": "a chain of {depth} blocks, {hidden} wide inside", "zh-hans": "{depth} 个模块组成的链，内部宽 {hidden}"},
        depth=depth, hidden=hidden))
