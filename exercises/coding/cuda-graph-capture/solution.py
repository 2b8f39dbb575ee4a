"""Reference solution: warm up on a side stream, capture one forward pass, replay it on a static input."""
import torch


def forward(x, weights, biases):
    for w, b in zip(weights, biases):
        x = torch.tanh(x @ w + b)
    return x


class EagerMLP:
    """The baseline: the same layers, launched kernel by kernel from Python on every call."""

    def __init__(self, weights, biases):
        self.weights = [w.cuda() for w in weights]
        self.biases = [b.cuda() for b in biases]

    def __call__(self, x):
        return forward(x.cuda(), self.weights, self.biases)


class GraphedMLP:
    def __init__(self, weights, biases, batch):
        self.weights = [w.cuda() for w in weights]
        self.biases = [b.cuda() for b in biases]
        self.static_x = torch.zeros(batch, self.weights[0].shape[0], device="cuda")
        # Warm up on a side stream so lazy initialisation (cuBLAS handles, allocator pools)
        # happens before capture, where it would be recorded or refused.
        side = torch.cuda.Stream()
        side.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(side):
            for _ in range(3):
                forward(self.static_x, self.weights, self.biases)
        torch.cuda.current_stream().wait_stream(side)
        self.graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(self.graph):
            self.static_y = forward(self.static_x, self.weights, self.biases)
        self.replays = 0

    def __call__(self, x):
        self.static_x.copy_(x)  # new data goes into the captured buffer; its address must not change
        self.graph.replay()
        self.replays += 1
        return self.static_y.clone()  # the next replay overwrites static_y
