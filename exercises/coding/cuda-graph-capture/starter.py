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
        self.graph = None  # TODO: a torch.cuda.CUDAGraph captured from one forward pass
        self.replays = 0

    def __call__(self, x):
        # TODO: copy x into the captured input buffer and replay the graph
        return forward(x.cuda(), self.weights, self.biases)
