"""Acceptance: the zoo's ResNet-8 on digits survives compression (issue 15's figures, bounded).

Trains resnet8_cifar for 6 epochs (about 40 s on one thread), then: 50% global L1 pruning
plus one fine-tuning epoch stays within 1 point of the dense accuracy; static int8 stays
within 1 point and writes a checkpoint at least 3.5x smaller than the dense weights file;
a width-4 student taught by the dense model beats the same student trained alone on 10%
of the training split (mean of 2 seeds, 15 epochs).
"""

import pytest

import ember
from ember.trainer import compression, training
from ember.trainer.compression import distill

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def dense(tmp_path_factory):
    out = tmp_path_factory.mktemp("dense")
    metrics = training.train("resnet8_cifar", "digits", out, seed=0, progress=False, log=lambda line: None,
                             epochs=6)
    return out / "best.pt", metrics


def accuracies(rows):
    rows = dict(rows)
    return rows["before"]["metric"], rows["after"]["metric"]


def test_half_pruned_and_fine_tuned_stays_within_a_point(dense, tmp_path):
    weights, _ = dense
    before, after = accuracies(compression.compress("resnet8_cifar", weights, "digits", tmp_path, prune=0.5,
                                                    finetune_epochs=1, log=lambda line: None))
    assert before >= 0.97
    assert after >= before - 0.01


def test_static_int8_stays_within_a_point_and_is_3_5x_smaller(dense, tmp_path):
    weights, _ = dense
    rows = compression.compress("resnet8_cifar", weights, "digits", tmp_path, quantize="static",
                                log=lambda line: None)
    before, after = accuracies(rows)
    assert after >= before - 0.01
    dense_file = tmp_path / "dense_weights.pt"
    ember.save(ember.load(weights)["model"], dense_file)
    assert dense_file.stat().st_size >= 3.5 * dict(rows)["after"]["bytes"]


def test_a_taught_student_beats_the_same_student_alone_on_little_data(dense, tmp_path):
    weights, _ = dense

    def mean_accuracy(teacher):  # the training loop, the distillation loss as criterion or not
        runs = [distill(teacher, weights, "resnet8_cifar", "digits", tmp_path / f"{teacher}-{seed}",
                        student_overrides={"width": 4}, fraction=0.1, epochs=15, seed=seed,
                        log=lambda line: None)["final"]["accuracy"] for seed in (0, 1)]
        return sum(runs) / len(runs)

    assert mean_accuracy("resnet8_cifar") > mean_accuracy(None)
