"""Generated pseudonyms: what a student is called on public boards until they choose a name."""

import secrets

ADJECTIVES = (
    "swift",
    "quiet",
    "eager",
    "lazy",
    "static",
    "dynamic",
    "fused",
    "sparse",
    "dense",
    "traced",
    "frozen",
    "jitted",
    "tiled",
    "strided",
    "pinned",
    "patient",
    "bold",
    "brisk",
    "calm",
    "keen",
)
NOUNS = (
    "tensor",
    "graph",
    "kernel",
    "tape",
    "node",
    "edge",
    "gradient",
    "operator",
    "buffer",
    "scheduler",
    "compiler",
    "tracer",
    "planner",
    "vertex",
    "shape",
    "stride",
    "loop",
    "dispatcher",
    "autograd",
    "op",
)


def pseudonym_generate() -> str:
    """Like ``swift-tensor-4821``: readable, and unlikely to collide (20 * 20 * 9000 names)."""
    return f"{secrets.choice(ADJECTIVES)}-{secrets.choice(NOUNS)}-{secrets.randbelow(9000) + 1000}"
