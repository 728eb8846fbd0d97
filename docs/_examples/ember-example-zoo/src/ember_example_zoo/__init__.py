"""ember-example-zoo: a model plugin in one file -- a tiny model, the ``Task`` that
trains it, and the hook that registers both (the walkthrough of docs/chapters/11-plugins.md).

PyTorch counterpart: none; PyTorch has no model registry. torchvision's
``register_model`` in torchvision/models/_api.py (v0.28) is the nearest, and it knows
nothing about training.

The model fits ``y = sin(x)`` on [-3, 3] with a one-hidden-layer MLP. It is small on
purpose: the point is the plugin's shape, which is the same for a ResNet or a detector
(ember-zoo-resnet, ember-zoo-yolo).
"""

from ember.plugins import hookimpl
from ember.zoo import Task


def tiny_sine_mlp(hidden=16):
    """``Linear(1, hidden) -> Tanh -> Linear(hidden, 1)``: 49 parameters with
    ``hidden=16``."""
    from ember import nn

    return nn.Sequential(nn.Linear(1, hidden), nn.Tanh(), nn.Linear(hidden, 1))


def sine_dataset(num_samples, seed):
    """``TensorDataset`` of ``x`` uniform in [-3, 3] and ``sin(x)``, both ``(num_samples, 1)``."""
    import ember

    generator = ember.Generator().manual_seed(seed)
    x = ember.rand(num_samples, 1, generator=generator) * 6 - 3
    return ember.data.TensorDataset(x, ember.sin(x))


class SineRegressionTask(Task):
    """Regression of ``sin(x)``: mean squared error to train, R^2 as the headline
    metric."""

    name = "sine-regression"
    metric = "r2"  # higher is better, as the training loop assumes

    def datasets(self, data, seed=0):
        # The task brings its own data: "sine" is generated, not looked up in
        # ember.data.
        if data != "sine":
            raise ValueError(
                f"{self.name} trains on the generated 'sine' data, not {data!r}")
        return sine_dataset(512, seed), sine_dataset(128, seed + 1)

    def describe(self, dataset):
        # Plain data saved in the checkpoint; no builder keyword depends on the data.
        return {"model_overrides": {}, "input_shape": [1]}

    def loss(self, model, batch):
        import ember.nn.functional as F

        x, y = batch
        return F.mse_loss(model(x), y)

    def evaluate(self, model, loader):
        import ember

        was_training = model.training
        model.eval()
        squared_error, total, total_sq, count = 0.0, 0.0, 0.0, 0
        with ember.no_grad():
            for x, y in loader:
                squared_error += ((model(x) - y) ** 2).sum().item()
                total += y.sum().item()
                total_sq += (y ** 2).sum().item()
                count += len(y)
        model.train(was_training)
        variance = total_sq - total * total / count  # sum of squares around the mean
        return {"loss": squared_error / count, "r2": 1.0 - squared_error / variance,
                "samples": count}

    def predict(self, model, input, meta, out_dir=None, top_k=5):
        """``input`` is a comma-separated list of x values, e.g. ``"0,1.5"``."""
        import math

        import ember

        values = [float(v) for v in input.split(",")]
        model.eval()
        with ember.no_grad():
            predicted = model(ember.tensor(values).reshape(-1, 1)).reshape(-1).tolist()
        return [f"x={x:g}: model {p:.3f}, sin(x) {math.sin(x):.3f}"
                for x, p in zip(values, predicted)]


@hookimpl
def ember_register_models(register):
    register(tiny_sine_mlp, name="tiny_sine_mlp", task=SineRegressionTask(),
             family="example", description="MLP 1-16-1 fitting sin(x) on [-3, 3]",
             input_size=(1,), num_params=49,
             default_dataset="sine", torch_counterpart="none (an example)",
             recipe={"epochs": 30, "batch_size": 32, "optimizer": "Adam", "lr": 0.02})
