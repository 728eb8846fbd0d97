"""``ember.trainer``: the application built on the zoo: the training loop and its modes,
compression, and the ``ember models/train/eval/predict/compress`` commands.

PyTorch counterpart: none in torch, which has no trainer; the shape of torchvision's
training scripts (references/classification/train.py, train_quantization.py, utils.py)
and of Lightning's ``Trainer`` (lightning/pytorch/trainer/trainer.py: fit, validate,
predict), whose name the folder takes, as a PyTorch reader looks for a trainer there.

# NOTE [ The zoo and the trainer ]
# ``ember.zoo`` answers "which models are there, and how is one built": the registry,
# ``create_model``, the weights cache, the ``Task`` a model registers with, and the int8
# structure a compressed checkpoint records (ember/zoo/quantizable.py). This folder is
# what runs the models: ``training.py`` (the loop, ``evaluate``, ``predict``), its modes
# ``distillation.py`` (another criterion), ``qat.py`` (validation that leaves the
# observers alone) and ``distributed_training.py`` (``--nproc N``), the compression
# workflows (``compression.py``), the attention maps of ``predict --explain``
# (``explain.py``), and the command line (``commands.py``). The
# dependencies run one way: the trainer imports the zoo, the zoo never imports the
# trainer, and within the trainer the loop imports only its modes
# (tests/core/trainer/test_layers.py keeps it so).
"""
