"""The teaching example examples/train_digits_mlp.py (raw tensors, no nn.Module): the digits
MLP learns (loss falls, held-out accuracy is high) and its first step matches torch."""

import importlib.util
import pathlib

SCRIPT = pathlib.Path(__file__).parents[2] / "examples" / "train_digits_mlp.py"


def load_script():
    spec = importlib.util.spec_from_file_location("train_digits_mlp", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_main_job_reaches_high_held_out_accuracy(capsys):
    accuracy = load_script().main(["--epochs", "10", "--seed", "0"])
    out = capsys.readouterr().out
    assert "final held-out accuracy" in out
    assert accuracy >= 0.93


def test_main_job_matches_torch_on_the_first_step():
    # The same forward, loss and gradient in PyTorch from the same weights and batch.
    import numpy as np
    import torch

    import ember

    job = load_script()
    images, labels = job.load_digits()
    x_np, y_np = images[:32], labels[:32]
    generator = ember.Generator().manual_seed(0)
    params = [*job.init_linear(64, 16, generator), *job.init_linear(16, 10, generator)]
    loss = job.cross_entropy(job.forward(params, ember.from_numpy(x_np)), ember.from_numpy(y_np))
    loss.backward()

    t_params = [torch.tensor(p.detach().numpy(), requires_grad=True) for p in params]
    w1, b1, w2, b2 = t_params
    logits = torch.relu(torch.from_numpy(x_np) @ w1.t() + b1) @ w2.t() + b2
    t_loss = torch.nn.functional.cross_entropy(logits, torch.from_numpy(y_np))
    t_loss.backward()
    np.testing.assert_allclose(loss.item(), t_loss.item(), rtol=1e-5)
    for p, tp in zip(params, t_params):
        np.testing.assert_allclose(p.grad.numpy(), tp.grad.numpy(), rtol=1e-4, atol=1e-6)


def test_main_job_reads_the_digits_shipped_in_ember_data():
    import numpy as np

    import ember

    images, labels = load_script().load_digits()
    assert images.shape == (1797, 64) and labels.shape == (1797,)
    shipped = ember.data.load_dataset("digits", split="all")
    np.testing.assert_array_equal(shipped.data.reshape(-1, 64), images)
    np.testing.assert_array_equal(shipped.targets, labels)
