import torch


def forward(x, weights, biases):
    for w, b in zip(weights, biases):
        x = torch.tanh(x @ w + b)
    return x


class GraphedMLP:
    """Run the MLP by replaying a captured CUDA graph instead of launching every kernel from Python."""

    def __init__(self, weights, biases, batch):
        self.weights = [w.cuda() for w in weights]
        self.biases = [b.cuda() for b in biases]
        self.graph = None  # a torch.cuda.CUDAGraph holding one forward pass, once you capture it
        self.replays = 0

    def __call__(self, x):
        # Correct, and every layer's kernels are launched from Python on every call.
        return forward(x.cuda(), self.weights, self.biases)
