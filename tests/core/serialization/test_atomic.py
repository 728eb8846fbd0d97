"""Atomic checkpoint writes (ember/serialization/atomic.py): an interrupted or failed save
never damages the previous file and leaves no temporary file behind (except after SIGKILL)."""

import os
import signal
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import numpy as np
import pytest

import ember
from ember.serialization import pickler


def _values(path):
    return ember.load(path)["w"].numpy()


def test_writer_failing_midway_keeps_the_old_file(tmp_path, monkeypatch):
    target = tmp_path / "model.pt"
    ember.save({"w": ember.zeros(3)}, target)

    def failing_payload(self):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(pickler.SavedStorage, "payload", failing_payload)  # after data.pkl is written
    with pytest.raises(OSError, match="No space left"):
        ember.save({"w": ember.ones(3)}, target)
    assert os.listdir(tmp_path) == ["model.pt"]  # no temporary file left
    np.testing.assert_array_equal(_values(target), np.zeros(3))


def test_unsaveable_object_leaves_nothing(tmp_path):
    with pytest.raises(TypeError):
        ember.save({"w": lambda: None}, tmp_path / "x.pt")  # a local function cannot be pickled
    assert os.listdir(tmp_path) == []


def test_sigkill_during_save_keeps_the_old_file(tmp_path):
    target = tmp_path / "model.pt"
    ember.save({"w": ember.zeros(4)}, target)
    started = tmp_path / "started"
    child = textwrap.dedent(f"""
        import time
        import ember
        from ember.serialization import checkpoint
        write = checkpoint._write_record
        def slow_write(archive, name, payload):
            write(archive, name, payload)
            if name.endswith("data.pkl"):
                open({str(started)!r}, "w").close()
                time.sleep(60)
        checkpoint._write_record = slow_write
        ember.save({{"w": ember.ones(1000)}}, {str(target)!r})
    """)
    process = subprocess.Popen([sys.executable, "-c", child])
    try:
        deadline = time.monotonic() + 30
        while not started.exists():
            assert process.poll() is None and time.monotonic() < deadline, "child did not start saving"
            time.sleep(0.02)
        os.kill(process.pid, signal.SIGKILL)
    finally:
        process.wait()
    np.testing.assert_array_equal(_values(target), np.zeros(4))
    leftovers = sorted(set(os.listdir(tmp_path)) - {"model.pt", "started"})
    assert len(leftovers) == 1 and leftovers[0].startswith(f".model.pt.{process.pid}-")
    assert leftovers[0].endswith(".tmp")
    # The next save to the same target removes the killed save's temporary file.
    ember.save({"w": ember.full((4,), 2.0)}, target)
    assert sorted(os.listdir(tmp_path)) == ["model.pt", "started"]
    np.testing.assert_array_equal(_values(target), np.full(4, 2.0))


def test_a_save_keeps_the_temporary_files_of_running_saves(tmp_path):
    alive = tmp_path / f".model.pt.{os.getppid()}-0a1b2c3d.tmp"  # our parent runs: maybe saving
    other = tmp_path / ".other.pt.999999999-0a1b2c3d.tmp"  # another target's
    alive.write_bytes(b"x")
    other.write_bytes(b"x")
    ember.save({"w": ember.zeros(1)}, tmp_path / "model.pt")
    assert sorted(os.listdir(tmp_path)) == sorted([alive.name, other.name, "model.pt"])


def test_sigterm_during_save_removes_the_temporary_file(tmp_path):
    target = tmp_path / "model.pt"
    ember.save({"w": ember.zeros(4)}, target)
    started = tmp_path / "started"
    child = textwrap.dedent(f"""
        import time
        import ember
        from ember.serialization import checkpoint
        write = checkpoint._write_record
        def slow_write(archive, name, payload):
            write(archive, name, payload)
            if name.endswith("data.pkl"):
                open({str(started)!r}, "w").close()
                time.sleep(60)
        checkpoint._write_record = slow_write
        ember.save({{"w": ember.ones(1000)}}, {str(target)!r})
    """)
    process = subprocess.Popen([sys.executable, "-c", child])
    try:
        deadline = time.monotonic() + 30
        while not started.exists():
            assert process.poll() is None and time.monotonic() < deadline, "child did not start saving"
            time.sleep(0.02)
        os.kill(process.pid, signal.SIGTERM)
    finally:
        process.wait(timeout=30)
    assert process.returncode == -signal.SIGTERM  # it still dies of the signal
    assert sorted(os.listdir(tmp_path)) == ["model.pt", "started"]
    np.testing.assert_array_equal(_values(target), np.zeros(4))


def test_resaving_keeps_the_files_permissions(tmp_path):
    target = tmp_path / "model.pt"
    ember.save({"w": ember.zeros(1)}, target)
    os.chmod(target, 0o600)
    ember.save({"w": ember.ones(1)}, target)
    assert oct(os.stat(target).st_mode & 0o777) == "0o600"
    tensors = tmp_path / "model.safetensors"
    ember.save_safetensors({"w": ember.zeros(1)}, tensors)
    os.chmod(tensors, 0o640)
    ember.save_safetensors({"w": ember.ones(1)}, tensors)
    assert oct(os.stat(tensors).st_mode & 0o777) == "0o640"


def test_saving_to_a_symlink_writes_through_it_like_torch(tmp_path):
    import torch

    for lib, name in ((torch, "torch"), (ember, "ember")):
        real = tmp_path / f"{name}-real.pt"
        link = tmp_path / f"{name}-link.pt"
        lib.save({"w": lib.zeros(2)}, real)
        link.symlink_to(real)
        lib.save({"w": lib.ones(2)}, link)
        assert link.is_symlink() and os.readlink(link) == str(real)
        np.testing.assert_array_equal(_values(real), np.ones(2))


def test_concurrent_saves_leave_a_complete_file(tmp_path):
    target = tmp_path / "shared.pt"
    ember.save({"w": ember.zeros(2000)}, target)
    candidates = [np.zeros(2000), np.full(2000, 1.0), np.full(2000, 2.0)]
    errors = []
    stop = threading.Event()

    def writer(value):
        for _ in range(15):
            ember.save({"w": ember.full((2000,), value)}, target)

    def reader():
        while not stop.is_set():
            try:
                seen = _values(target)
                if not any(np.array_equal(seen, c) for c in candidates):
                    errors.append("mixed file")
            except Exception as e:  # any failure to read is the bug this test looks for
                errors.append(repr(e))

    threads = [threading.Thread(target=writer, args=(v,)) for v in (1.0, 2.0)]
    watcher = threading.Thread(target=reader)
    watcher.start()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    stop.set()
    watcher.join()
    assert errors == []
    assert any(np.array_equal(_values(target), c) for c in candidates[1:])
    assert os.listdir(tmp_path) == ["shared.pt"]


def test_read_only_folder_gives_a_clear_message(tmp_path):
    folder = tmp_path / "locked"
    folder.mkdir()
    folder.chmod(0o555)
    try:
        if os.access(folder, os.W_OK):  # root ignores permission bits: use a folder the kernel refuses
            folder = Path("/sys")
        with pytest.raises(PermissionError, match=rf"cannot save '{folder}/m\.pt': the folder '{folder}' is not "
                                                  r"writable"):
            ember.save({"w": ember.ones(1)}, folder / "m.pt")
    finally:
        (tmp_path / "locked").chmod(0o755)


def test_missing_folder(tmp_path):
    with pytest.raises(FileNotFoundError, match="the folder does not exist"):
        ember.save(1, tmp_path / "nope" / "m.pt")


def test_new_file_gets_the_usual_permissions(tmp_path):
    umask = os.umask(0o022)
    os.umask(umask)
    ember.save(1, tmp_path / "m.pt")
    ember.save_safetensors({"w": ember.ones(1)}, tmp_path / "m.safetensors")
    for name in ("m.pt", "m.safetensors"):
        assert (tmp_path / name).stat().st_mode & 0o777 == 0o666 & ~umask


def test_model_and_rng_state_round_trip(tmp_path):
    model = ember.nn.Sequential(ember.nn.Linear(4, 3), ember.nn.ReLU(), ember.nn.Linear(3, 1))
    ember.manual_seed(3)
    checkpoint = {"model": model.state_dict(), "rng": ember.get_rng_state(), "epoch": 7}
    expected_next = ember.rand(3).numpy()
    path = tmp_path / "ckpt.pt"
    ember.save(checkpoint, path)
    loaded = ember.load(path)
    ember.set_rng_state(loaded["rng"])
    np.testing.assert_array_equal(ember.rand(3).numpy(), expected_next)
    fresh = ember.nn.Sequential(ember.nn.Linear(4, 3), ember.nn.ReLU(), ember.nn.Linear(3, 1))
    fresh.load_state_dict(loaded["model"])
    x = ember.randn(2, 4)
    np.testing.assert_array_equal(fresh(x).detach().numpy(), model(x).detach().numpy())
    assert loaded["epoch"] == 7
