"""Tests for ember/utils/threads.py, the ``ember`` command's thread policy, and its use
by the CLI (``--threads``, the one line saying what it chose)."""

import os

import pytest
from threadpoolctl import threadpool_info

import ember.cli
from ember.utils.threads import apply_threads, choose_threads


def blas_threads():
    return {pool["num_threads"] for pool in threadpool_info() if pool["user_api"] == "blas"}


def test_requested_count_wins_over_everything():
    choice = choose_threads(3, environ={"OMP_NUM_THREADS": "1"}, cpus=2, load=0.0)
    assert (choice.threads, str(choice)) == (3, "threads: 3 (--threads)")


@pytest.mark.parametrize("variable", ["EMBER_NUM_THREADS", "OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS"])
def test_a_count_the_user_set_in_the_environment_is_kept(variable):
    choice = choose_threads(environ={variable: "1"}, cpus=8, load=0.0)
    assert choice.threads == 1 and variable in str(choice)


@pytest.mark.parametrize("cpus, load, expected", [(2, 0.0, 2), (2, 0.4, 2), (2, 0.6, 1), (2, 7.9, 1),
                                                  (8, 3.2, 5), (1, 0.0, 1)])
def test_auto_uses_the_free_cores_and_at_least_one(cpus, load, expected):
    choice = choose_threads(environ={}, cpus=cpus, load=load)
    assert choice.threads == expected
    assert str(choice) == f"threads: {expected} (auto: {cpus} CPUs, load {load:.1f}; --threads N to change)"


@pytest.mark.parametrize("bad", ["0", "two", "-1"])
def test_a_bad_count_in_the_environment_is_named(bad):
    with pytest.raises(ValueError, match=f"OMP_NUM_THREADS={bad!r} is not a thread count"):
        choose_threads(environ={"OMP_NUM_THREADS": bad}, cpus=2, load=0.0)


def test_apply_limits_the_blas_pool_and_passes_the_count_to_children(monkeypatch):
    monkeypatch.setenv("OPENBLAS_NUM_THREADS", "1")
    limiter = apply_threads(2)
    try:
        assert blas_threads() == {2}
        assert os.environ["OPENBLAS_NUM_THREADS"] == "2" and os.environ["OMP_NUM_THREADS"] == "2"
    finally:
        limiter.restore_original_limits()


def test_cli_says_what_it_chose_runs_under_it_and_puts_things_back(capsys, monkeypatch):
    seen = {}
    monkeypatch.setattr("ember.trainer.training.evaluate",
                        lambda *a, **k: seen.update(threads=blas_threads(), env=os.environ["OMP_NUM_THREADS"])
                        or {"accuracy": 1.0})
    before = blas_threads(), os.environ.get("OMP_NUM_THREADS")
    status = ember.cli.main(["eval", "resnet8_cifar", "--weights", "w.pt", "--data", "digits", "--threads", "2"])
    _, err = capsys.readouterr()
    assert status == 0 and err.splitlines()[0] == "threads: 2 (--threads)"
    assert seen == {"threads": {2}, "env": "2"}
    assert (blas_threads(), os.environ.get("OMP_NUM_THREADS")) == before


def test_listing_commands_say_nothing_about_threads(capsys):
    assert ember.cli.main(["models", "resnet8*"]) == 0
    assert "threads" not in capsys.readouterr().err
    with pytest.raises(SystemExit):
        ember.cli.main(["models", "--threads", "2"])


def test_threads_must_be_a_positive_whole_number(capsys):
    with pytest.raises(SystemExit) as exit:
        ember.cli.main(["train", "resnet8_cifar", "--threads", "0"])
    assert exit.value.code == 2
    assert "expected a whole number of threads, at least 1, got '0'" in capsys.readouterr().err
