"""One training step of a character-level LSTM language model (issue 12): embedding 64,
a 2-layer LSTM of 256, a linear decoder to 96 characters; batch-first windows of 32
sequences of 64 characters; loss = cross-entropy of the next character, backward, plain
SGD update. ember against torch with the same weights and the same batch.

PyTorch counterpart: torch.nn.LSTM in training mode on the CPU (ATen's RNN.cpp loop over
time steps; oneDNN's fused LSTM kernel is used by torch where it applies).

    python bench/lstm_step.py [THREADS] [--profile]

``--profile`` prints ember's cProfile of a few steps in CPU time (where the time goes) instead.

# NOTE [ Where the LSTM step's time goes ]
# One thread each. Last session: on an idle 16-core host (torch 2.11 there) ember
# 161-210 ms vs torch 95-109 ms (1.7-1.9x); on the shared 2-core box 1.07x-1.29x.
# ember's own Python overhead (dispatch, autograd, cross-entropy, embedding backward,
# optimizer) is a few ms of the step; the time is in the two layer kernels and the
# products around them. The BLAS products alone (the per-step h @ W_hh^T and
# dG @ W_hh, the input projections, dW_hh, dW_ih, dx, the decoder) take 0.73-0.78 of
# torch's whole step on the shared box, measured in the same process. The rest is
# NumPy's elementwise passes inside the time loops: one ufunc call per operation on a
# B x 4H row, where oneDNN fuses them into its GEMM. NOTE [ LSTM kernels in place ]
# (ember/native/fused_lstm.py) cut them to one exp pass for the four gates and
# in-place ``out=`` calls on preallocated buffers; that moved the ratio on the shared
# box (load 11-13, three interleaved runs each) from 1.44-1.48 to 1.28-1.35 in CPU time
# and from 1.38-1.46 to 1.26-1.30 in wall time. The forward is the weaker half
# (about 1.5x torch's forward, the backward about 1.1x): per step, NumPy's exp and tanh
# and about a dozen small calls cost nearly as much again as the product.
"""

import os
import time

from common import assert_losses_agree, interleaved, libraries, print_profile, report_ms, threads_and_profile

VOCAB, EMBED, HIDDEN, LAYERS = 96, 64, 256, 2
BATCH, SEQ = 32, 64
LR = 0.1


class CharLM:
    """The model in either library: ``decoder(lstm(encoder(idx)))``."""

    def __init__(self, lib):
        self.encoder = lib.nn.Embedding(VOCAB, EMBED)
        self.lstm = lib.nn.LSTM(EMBED, HIDDEN, LAYERS, batch_first=True)
        self.decoder = lib.nn.Linear(HIDDEN, VOCAB)
        self.model = lib.nn.Sequential(self.encoder, self.lstm, self.decoder)  # parameters and state dict

    def __call__(self, idx):
        output, _ = self.lstm(self.encoder(idx))
        return self.decoder(output)


def make_step(lib, model, idx_np, target_np):
    params = list(model.model.parameters())
    idx, target = lib.tensor(idx_np), lib.tensor(target_np)

    def step():
        logits = model(idx)
        loss = lib.nn.functional.cross_entropy(logits.reshape(-1, VOCAB), target.reshape(-1))
        loss.backward()
        with lib.no_grad():
            for p in params:
                p.sub_(p.grad, alpha=LR)
                p.grad = None
        return loss
    return step


def models(ember, torch):
    torch.manual_seed(0)
    t, e = CharLM(torch), CharLM(ember)
    e.model.load_state_dict({k: ember.tensor(v.detach().numpy()) for k, v in t.model.state_dict().items()})
    return {"ember": e, "torch": t}


def main(threads, profile=False):
    np, torch, ember = libraries(threads)
    rng = np.random.default_rng(0)
    idx = rng.integers(0, VOCAB, (BATCH, SEQ + 1))
    built = models(ember, torch)
    steps = {name: make_step(lib, built[name], idx[:, :-1], idx[:, 1:])
             for name, lib in (("ember", ember), ("torch", torch))}
    assert_losses_agree(steps, 1e-4, relative=True)
    if profile:
        print_profile(steps["ember"], rounds=3, clock=time.process_time)
        return
    wall = interleaved(steps, rounds=6, inner=2)
    cpu = interleaved(steps, rounds=6, inner=2, clock=time.process_time)
    # The load average goes with every figure: on a shared machine the wall-clock ratio
    # moves with it (torch suffers more), the CPU-time ratio much less.
    report_ms("char LSTM LM train step (ms)", threads, wall, **{
        "ember cpu": round(cpu["ember"] * 1e3, 1), "torch cpu": round(cpu["torch"] * 1e3, 1),
        "cpu ratio": round(cpu["ember"] / cpu["torch"], 3), "load": round(os.getloadavg()[0], 2)})


if __name__ == "__main__":
    main(*threads_and_profile())
