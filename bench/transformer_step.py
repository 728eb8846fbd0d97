"""One training step of a Transformer encoder (issue 5): 2 post-LN layers, d_model 256,
4 heads, feed-forward 1024, GELU, dropout 0, batch-first input of 32 sequences of 64
tokens; loss = mean of the squared outputs, backward, plain SGD update. ember against
torch with the same weights (torch's state dict loaded into ember) and the same input.

PyTorch counterpart: torch.nn.TransformerEncoder / TransformerEncoderLayer in training
mode (torch takes its ordinary, non-fused path there, the one ember mirrors).

    python bench/transformer_step.py [THREADS] [--profile]

``--profile`` prints ember's cProfile of a few steps (where the time goes) instead.

# NOTE [ Where the Transformer step's time goes ]
# Measured on the shared 2-core box, 1 thread, quiet moment: ember 266 ms, torch 195 ms
# (1.36x; 2 threads: 201 vs 139 ms, 1.45x, since NumPy's elementwise ops use one core).
# Matrix products: ember 164 ms (of which 15 ms the attention products) against torch's
# 130 ms of mm/addmm plus 15 ms of flash attention; the raw OpenBLAS and MKL products of
# these shapes take the same time, the difference is bias adds and layout copies around
# them. Exact GELU: 46 ms against 10 ms (four passes of a 2048x1024 float32 array through
# a 30-ufunc erfc approximation, NOTE [ A fast normal CDF for float32 ] in ember-activation;
# it was 266 ms with scipy.special.erf, when the ratio was 1.65x). The rest (layer norms,
# softmax, the packed q/k/v projection's unbind backward, dispatch) is about 55 ms against
# torch's 40 ms.
"""


from common import assert_losses_agree, interleaved, libraries, print_profile, report_ms, threads_and_profile

D_MODEL, HEADS, FFN, LAYERS = 256, 4, 1024, 2
BATCH, SEQ = 32, 64
LR = 1e-3


def build(lib):
    layer = lib.nn.TransformerEncoderLayer(D_MODEL, HEADS, dim_feedforward=FFN, dropout=0.0, activation="gelu",
                                           batch_first=True)
    kwargs = {"enable_nested_tensor": False} if lib.__name__ == "torch" else {}
    return lib.nn.TransformerEncoder(layer, LAYERS, **kwargs)


def make_step(lib, model, x_np):
    params = list(model.parameters())
    x = lib.tensor(x_np)

    def step():
        out = model(x)
        loss = (out * out).mean()
        loss.backward()
        with lib.no_grad():
            for p in params:
                p.sub_(p.grad, alpha=LR)
                p.grad = None
        return loss
    return step


def models(ember, torch):
    """The torch model with its random weights and the ember model holding a copy."""
    torch.manual_seed(0)
    t = build(torch)
    e = build(ember)
    e.load_state_dict({k: ember.tensor(v.detach().numpy()) for k, v in t.state_dict().items()})
    return {"ember": e, "torch": t}


def main(threads, profile=False):
    np, torch, ember = libraries(threads)
    x = np.random.default_rng(0).standard_normal((BATCH, SEQ, D_MODEL)).astype(np.float32)
    built = models(ember, torch)
    steps = {"ember": make_step(ember, built["ember"], x), "torch": make_step(torch, built["torch"], x)}
    assert_losses_agree(steps, 1e-4, relative=True)
    if profile:
        print_profile(steps["ember"], rounds=5)
        return
    report_ms("Transformer encoder train step (ms)", threads, interleaved(steps, rounds=10, inner=2))


if __name__ == "__main__":
    main(*threads_and_profile())
