"""Tests for ember/trainer/compression.py and ``ember compress``: pruning, int8, the checkpoint eval reads."""

import zipfile

import ember_quantization as eq
import numpy as np
import pytest

import ember
from ember.trainer import compression
from ember.trainer.commands import compression_table
from ember.zoo.errors import ZooError


@pytest.fixture
def checkpoint(tmp_path):
    ember.manual_seed(0)
    overrides = {"num_classes": 10, "in_channels": 1}  # what `ember train ... --data digits` records
    model = ember.zoo.create_model("resnet8_cifar", **overrides)
    path = tmp_path / "dense.pt"
    ember.save({"model_name": "resnet8_cifar", "model": model.state_dict(), "model_overrides": overrides,
                "data": {"name": "digits"}}, path)
    return path


def test_prune_and_quantize_write_a_checkpoint_that_create_model_reads(checkpoint, tmp_path):
    lines = []
    rows = compression.compress("resnet8_cifar", checkpoint, "digits", tmp_path / "out", prune=0.5,
                                quantize="dynamic", finetune_epochs=0, log=lines.append)
    assert lines == []  # no training run to log: the table is the command's to print
    before, after = dict(rows)["before"], dict(rows)["after"]
    assert after["nonzero"] <= before["nonzero"] - 0.45 * 78042  # half the conv/linear weights are zero
    assert after["parameters"] == before["parameters"]
    table = compression_table(rows, "accuracy").splitlines()
    assert "accuracy" in table[0] and table[1].startswith("before") and table[2].startswith("after")
    assert f"{after['nonzero']:,}" in table[2]
    loaded = ember.zoo.create_model("resnet8_cifar", pretrained=tmp_path / "out" / "compressed.pt")
    assert type(loaded.fc).__name__ == "Linear" and type(loaded.fc).__module__.startswith("ember_quantization")
    x = ember.randn(2, 1, 8, 8)
    with ember.no_grad():
        assert loaded.eval()(x).shape == (2, 10)


def test_pruned_weights_stay_zero_through_finetuning(checkpoint, tmp_path):
    compression.compress("resnet8_cifar", checkpoint, "digits", tmp_path / "out", prune=0.3, method="ln",
                         finetune_epochs=1, lr=0.01, log=lambda line: None)
    state = ember.load(tmp_path / "out" / "compressed.pt")["model"]
    conv = state["layer1.0.conv1.weight"].numpy()
    zero_channels = (np.abs(conv).reshape(conv.shape[0], -1).sum(1) == 0).sum()
    assert zero_channels == round(0.3 * conv.shape[0])
    assert not any(key.endswith(("_orig", "_mask")) for key in state)  # pruning made permanent


def test_static_int8_of_a_cifar_resnet_is_3_5x_smaller_on_disk_and_reloads(checkpoint, tmp_path):
    rows = dict(compression.compress("resnet8_cifar", checkpoint, "digits", tmp_path / "out", quantize="static",
                                     log=lambda line: None))
    assert type(ember.zoo.create_model("resnet8_cifar", pretrained=checkpoint).layer1[0].conv1).__name__ == "Conv2d"
    dense = tmp_path / "dense_weights.pt"  # the float weights alone, as ember.save writes a state dict
    ember.save(ember.load(checkpoint)["model"], dense)
    assert rows["after"]["file_bytes"] == (tmp_path / "out" / "compressed.pt").stat().st_size
    assert rows["after"]["bytes"] < rows["after"]["file_bytes"]  # the weights alone, without the file's metadata
    assert dense.stat().st_size / rows["after"]["bytes"] >= 3.5
    assert rows["before"]["bytes"] / rows["after"]["bytes"] >= 3.4  # (float32 -> int8, its scales and zero points)
    loaded = ember.zoo.create_model("resnet8_cifar", pretrained=tmp_path / "out" / "compressed.pt").eval()
    assert type(loaded.layer1[0].conv1).__name__ == "Conv2d" and loaded.layer1[0].conv1._relu
    assert type(loaded.fc).__module__.startswith("ember_quantization")  # the classifier is int8 too
    assert loaded(ember.randn(2, 1, 8, 8)).shape == (2, 10)


def test_the_compressed_checkpoint_shares_storages_and_torch_reads_it_into_its_own_modules(checkpoint, tmp_path):
    import torch
    import torch.ao.nn.quantized as tnnq

    compression.compress("resnet8_cifar", checkpoint, "digits", tmp_path / "out", quantize="static",
                         log=lambda line: None)
    path = tmp_path / "out" / "compressed.pt"
    with zipfile.ZipFile(path) as archive:  # one storage per dtype / qdtype, not one per tensor
        assert len([n for n in archive.namelist() if "/data/" in n]) <= 5
    ours = ember.zoo.create_model("resnet8_cifar", pretrained=path).eval()
    theirs = torch.load(path, weights_only=True)["model"]
    conv = tnnq.Conv2d(16, 32, 3, stride=2, padding=1)
    conv.load_state_dict({k[len("layer2.0.conv1."):]: v for k, v in theirs.items() if k.startswith("layer2.0.conv1.")})
    x = torch.quantize_per_tensor(torch.rand(2, 16, 8, 8), 0.02, 3, torch.quint8)
    our_x = eq.QTensor(ember.tensor(x.int_repr().numpy()), eq.quint8, 0.02, 3)
    steps = np.abs(ours.layer2[0].conv1(our_x).int_repr().numpy().astype(int) - conv(x).int_repr().numpy().astype(int))
    assert steps.max() <= 1 and (steps == 0).mean() >= 0.9  # the quantized conv's parity (test_quantized_modules)
    assert float(theirs["fc.scale"]) == ours.fc.scale and theirs["quant.scale"].shape == (1,)


def test_ember_compress_qat_fine_tunes_through_the_training_loop_and_eval_predict_read_it(checkpoint, tmp_path,
                                                                                            capsys):
    from ember.cli import main

    out = tmp_path / "qat"
    assert main(["compress", "resnet8_cifar", "--weights", str(checkpoint), "--data", "digits", "--quantize", "qat",
                 "--finetune-epochs", "1", "--out", str(out), "--threads", "1"]) == 0
    printed = capsys.readouterr().out
    assert "epoch 1/1" in printed and "after" in printed  # the training loop's epoch line, then the table
    assert ember.load(out / "compressed.pt")["compression"] == {"quantize": "qat", "classifier": "int8"}
    model = ember.zoo.create_model("resnet8_cifar", pretrained=out / "compressed.pt").eval()
    assert type(model.layer1[0].conv1).__module__.startswith("ember_quantization.nn.quantized")
    assert main(["eval", "resnet8_cifar", "--weights", str(out / "compressed.pt"), "--threads", "1"]) == 0
    assert "accuracy" in capsys.readouterr().out
    assert main(["predict", "resnet8_cifar", "--weights", str(out / "compressed.pt"), "digits:0-1"]) == 0
    assert capsys.readouterr().out.count("digits[") == 2
    # the fine-tuning run's checkpoint is a prepared QAT model that --resume continues
    assert main(["train", "resnet8_cifar", "--data", "digits", "--resume", str(out / "qat" / "checkpoint.pt"),
                 "--epochs", "2", "--out", str(out / "qat"), "--no-progress", "--threads", "1"]) == 0
    assert ember.load(out / "qat" / "checkpoint.pt")["epoch"] == 2


@pytest.mark.parametrize("kwargs, message", [({"quantize": "int4"}, "choose dynamic"),
                                             ({}, "nothing to do"),
                                             ({"prune": 0.5, "method": "l2"}, "unknown pruning method")])
def test_unsupported_requests_are_named(checkpoint, tmp_path, kwargs, message):
    with pytest.raises(ZooError, match=message):
        compression.compress("resnet8_cifar", checkpoint, "digits", tmp_path / "out", finetune_epochs=0,
                             log=lambda line: None, **kwargs)


@pytest.mark.parametrize("arguments, message", [
    (["--prune", "1.5"], "--prune takes the fraction of weights to remove, in [0, 1]; got 1.5"),
    (["--quantize", "qat", "--finetune-epochs", "-1"], "--finetune-epochs must be 0 or more"),
    (["--prune", "0.5", "--temperature", "2"], "--temperature only applies with --distill-from TEACHER"),
    (["--quantize", "static", "--data", "reverse"], "dataset 'reverse' does not fit model 'resnet8_cifar'"),
    (["--quantize", "static", "--weights", None], "--weights CKPT is needed"),
    (["--distill-from", "resnet8_cifar", "--teacher-weights", "{ckpt}", "--student-overrides", "{width"],
     "--student-overrides takes a JSON object"),
])
def test_a_compress_mistake_is_one_line_and_leaves_no_folder(arguments, message, checkpoint, tmp_path, capsys):
    from ember.cli import main

    argv = ["compress", "resnet8_cifar", "--weights", str(checkpoint), "--data", "digits", "--out",
            str(tmp_path / "out"), "--threads", "1"]
    for flag, value in zip(arguments[::2], arguments[1::2]):
        if flag in argv:  # replace the default (or drop it, for None)
            index = argv.index(flag)
            del argv[index:index + 2]
        if value is not None:
            argv += [flag, str(checkpoint) if value == "{ckpt}" else value]
    assert main(argv) != 0
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err
    assert len([line for line in err.splitlines() if line.startswith("ember compress")]) == 1
    assert not (tmp_path / "out").exists()


def test_a_checkpoint_of_another_model_is_refused_by_name(checkpoint, tmp_path):
    with pytest.raises(ZooError, match="is a checkpoint of model 'resnet8_cifar', not 'transformer_seq2seq_tiny'"):
        compression.compress("transformer_seq2seq_tiny", checkpoint, "reverse", tmp_path / "out", quantize="dynamic",
                             log=lambda line: None)


def test_the_table_compares_weights_with_weights_and_counts_parameters_as_train(tmp_path):
    """NOTE [ Like with like in the compression table ]: a training checkpoint holding
    AdamW's state is twice the model; the "before" row measures the model alone, and
    counts what ``ember train`` prints as its parameters."""
    from ember.trainer import training

    lines = []
    training.train("resnet8_cifar", "digits", tmp_path / "run", epochs=1, batch_size=256, train_fraction=0.25,
                   optimizer="adamw", progress=False, log=lines.append)
    trained = int(lines[0].split(":")[1].split("parameters")[0].replace(",", ""))
    weights = tmp_path / "run" / "checkpoint.pt"
    rows = dict(compression.compress("resnet8_cifar", weights, "digits", tmp_path / "out", prune=0.2,
                                     finetune_epochs=0, log=lambda line: None))
    assert rows["before"]["parameters"] == rows["after"]["parameters"] == trained
    model = ember.zoo.create_model("resnet8_cifar", pretrained=weights)
    assert trained == sum(p.numel() for p in model.parameters())
    assert weights.stat().st_size > 2 * rows["before"]["bytes"]  # the optimizer's moments are no part of it
    # pruning zeroes weights but stores them all: the weights' bytes barely move
    assert 0.95 <= rows["after"]["bytes"] / rows["before"]["bytes"] <= 1.05
