"""Quantization-aware training as a mode of the training loop: the validation that leaves
a QAT model's observers as training left them.

PyTorch counterpart: none as a file; torchvision's reference script
references/classification/train_quantization.py switches observers off by hand in its own
loop (``disable_observer`` after a set number of epochs). The model's QAT structure is
ember/zoo/quantizable.py ``prepare_qat_resnet``; the workflow that runs the fine-tuning
and converts the result is ember/trainer/compression.py ``finetune_qat``.
"""


# NOTE [ Quantization-aware training of the zoo's CIFAR ResNets ]
# ``ember compress MODEL --weights CKPT --quantize qat`` rewrites the model as static
# quantization does (fused conv-bn(-relu), stubs, ``skip_add``), gives it torch's QAT
# qconfig for x86 and ``prepare_qat``s it: every conv and the classifier fake-quantize
# their weights, every observed output is fake-quantized, and the straight-through
# gradient lets SGD fine-tune the float weights under int8 rounding. The fine-tuning is
# an ordinary ``ember train`` run (option ``quantize="qat"`` with ``init_weights``):
# progress bar, checkpoints of the prepared model (recorded as ``{"quantize": "qat",
# "stage": "prepared"}``, which ``create_model`` rebuilds, so ``--resume`` and ``ember
# eval`` read them), per-epoch validation. Validation freezes the observers
# (``QatTask``), so the validation split never moves the scale and zero point. Then
# ``convert`` gives the same int8 modules as static quantization, and the compressed
# checkpoint records ``{"quantize": "qat"}``. ember fuses BatchNorm before QAT (its
# fusion is eval-mode only), so the fine-tuned convolutions carry the folded BatchNorm;
# torch's ConvBn QAT modules, which keep BatchNorm training, are not ported.
class QatTask:
    """A task whose evaluation leaves a QAT model's observers as training left them."""

    def __init__(self, task):
        self.task = task

    def __getattr__(self, name):
        return getattr(self.task, name)

    def evaluate(self, model, loader):
        fake_quantizers = [m for m in model.modules() if type(m).__name__ == "FakeQuantize"]
        states = [int(m.observer_enabled[0]) for m in fake_quantizers]
        for module in fake_quantizers:
            module.disable_observer()
        try:
            return self.task.evaluate(model, loader)
        finally:
            for module, state in zip(fake_quantizers, states):
                module.enable_observer(bool(state))
