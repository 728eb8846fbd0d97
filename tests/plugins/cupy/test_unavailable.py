"""ember-cupy where CUDA cannot be used: CuPy missing, CuPy without a driver, no device,
a hidden device. These run on every machine: each simulates its case, whatever the
machine has, and checks ember against a CPU-only PyTorch where PyTorch has an answer."""

import re
import subprocess
import sys
import textwrap
import types

import pytest
import torch
from ember_cupy import runtime

import ember
import ember.cli


@pytest.fixture
def probe_again():
    """Forget the cached probe before and after the test, so each test's simulated
    machine is what the backend sees, and later tests see the real one."""
    runtime.forget()
    yield
    runtime.forget()


@pytest.fixture
def no_cupy(monkeypatch, probe_again):
    monkeypatch.setitem(sys.modules, "cupy", None)  # `import cupy` raises ImportError


class _CUDARuntimeError(RuntimeError):
    """Stands in for cupy_backends' CUDARuntimeError (a RuntimeError subclass)."""


def _fake_cupy(count=None, error=None, driver=0):
    """A module shaped like CuPy whose runtime reports ``count`` devices or raises ``error``."""
    def get_device_count():
        if error is not None:
            raise error
        return count

    cuda_runtime = types.SimpleNamespace(getDeviceCount=get_device_count, driverGetVersion=lambda: driver)
    return types.SimpleNamespace(cuda=types.SimpleNamespace(runtime=cuda_runtime))


@pytest.fixture
def cupy_without_driver(monkeypatch, probe_again):
    error = _CUDARuntimeError("cudaErrorInsufficientDriver: CUDA driver version is insufficient "
                              "for CUDA runtime version")
    monkeypatch.setitem(sys.modules, "cupy", _fake_cupy(error=error))


UNAVAILABLE = ["no_cupy", "cupy_without_driver"]

# What a CPU-only torch answers. Where this torch is CPU-only (CI) the tests ask it; on a
# GPU machine its CUDA build answers otherwise, so the tests compare with these values,
# read off the CPU-only build.
TORCH_IS_CPU_ONLY = not torch.cuda.is_available()
CPU_ONLY_TORCH_ANSWERS = {"is_available": False, "device_count": 0, "memory_allocated": 0,
                          "max_memory_allocated": 0, "empty_cache": None}


def cpu_only_torch_answer(name):
    return getattr(torch.cuda, name)() if TORCH_IS_CPU_ONLY else CPU_ONLY_TORCH_ANSWERS[name]


def test_the_plugin_registers_the_cuda_backend_whatever_the_machine():
    from ember.plugins import registry

    backend = registry.find_backend("cuda")
    assert backend is not None and backend.plugin == "cupy" and backend.name == "cuda"
    info = {i.name: i for i in ember.plugins.list_plugins()}["cupy"]
    assert info.status == "ok" and info.distribution == "ember-cupy"
    assert info.registered == {"backends": ["cuda"], "comm_backends": ["nccl"]}


@pytest.mark.parametrize(("case", "reason"), [
    ("no_cupy", r"CuPy is not installed.*pip install -e '.*plugins/cupy\[cuda12\]' \(ember-cupy\)"),
    ("cupy_without_driver", r"CUDA is not usable: _CUDARuntimeError: cudaErrorInsufficientDriver.*no NVIDIA driver"),
])
def test_unavailable_with_the_reason(request, case, reason):
    request.getfixturevalue(case)
    assert runtime.is_available() is False
    assert runtime.unavailable_reason() is not None
    assert ember.cuda.is_available() is cpu_only_torch_answer("is_available") is False
    assert re.search(reason, runtime.unavailable_reason())


@pytest.mark.parametrize(("fake", "reason"), [
    (_fake_cupy(count=0), "CuPy found no CUDA device"),
    (_fake_cupy(error=ValueError("boom"), driver=12040), "CUDA is not usable: ValueError: boom"),
])
def test_zero_devices_or_any_error_from_the_runtime_is_unavailable(monkeypatch, probe_again, fake, reason):
    monkeypatch.setitem(sys.modules, "cupy", fake)
    assert not ember.cuda.is_available() and ember.cuda.device_count() == 0
    assert runtime.unavailable_reason() == reason


def test_an_empty_cuda_visible_devices_hides_every_gpu(monkeypatch, probe_again):
    monkeypatch.setitem(sys.modules, "cupy", _fake_cupy(count=2))
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "")
    assert not ember.cuda.is_available()
    assert "CUDA_VISIBLE_DEVICES" in runtime.unavailable_reason()


def test_a_visible_device_is_available(monkeypatch, probe_again):
    # The probe's positive answer, with a stand-in CuPy (the services need a real GPU).
    monkeypatch.setitem(sys.modules, "cupy", _fake_cupy(count=2))
    monkeypatch.setattr(runtime, "_track_peak", lambda cp: None)
    assert runtime.is_available() and runtime.unavailable_reason() is None


@pytest.mark.parametrize("case", UNAVAILABLE)
def test_ember_cuda_answers_like_a_cpu_only_torch(request, case):
    request.getfixturevalue(case)
    for name in ["is_available", "device_count", "memory_allocated", "max_memory_allocated", "empty_cache"]:
        assert getattr(ember.cuda, name)() == cpu_only_torch_answer(name), name
    assert ember.cuda.manual_seed(3) is torch.cuda.manual_seed(3) is None
    assert ember.cuda.manual_seed_all(3) is torch.cuda.manual_seed_all(3) is None
    assert ember.cuda.memory_reserved() == 0 and ember.cuda.memory_stats() == {}
    with pytest.raises(ValueError, match="Expected a cuda device, but got: cpu"):
        ember.cuda.set_device("cpu")
    with pytest.raises(ValueError, match="Expected a cuda device, but got: cpu"):
        torch.cuda.set_device("cpu")


@pytest.mark.parametrize("case", UNAVAILABLE)
@pytest.mark.parametrize("call", ["current_device", "set_device", "synchronize", "get_device_name",
                                  "reset_peak_memory_stats", "get_device_properties", "get_device_capability"])
def test_what_needs_a_device_raises_embers_error_with_the_reason(request, case, call):
    request.getfixturevalue(case)
    args = (0,) if call == "set_device" else ()
    reason = "no cuda device is available: (CuPy is not installed|CUDA is not usable)"
    with pytest.raises(RuntimeError, match=reason) as info:
        getattr(ember.cuda, call)(*args)
    assert type(info.value) is RuntimeError  # ember's own error, never CuPy's


CUDA_TENSORS = {
    "zeros": lambda: ember.zeros(2, device="cuda"),
    "tensor": lambda: ember.tensor([1.0, 2.0], device="cuda:0"),
    "randn": lambda: ember.randn(2, 3, device=ember.device("cuda", 0)),
    "arange": lambda: ember.arange(4, device="cuda"),
    "to": lambda: ember.ones(2).to("cuda"),
    "to_index": lambda: ember.ones(2).to("cuda:0"),
    "to_device_dtype": lambda: ember.ones(2).to("cuda", ember.float64),
    "cuda": lambda: ember.ones(2).cuda(),
    "module_to": lambda: ember.nn.Linear(2, 3).to("cuda"),
}


@pytest.mark.parametrize("case", UNAVAILABLE)
@pytest.mark.parametrize("make", CUDA_TENSORS.values(), ids=CUDA_TENSORS.keys())
def test_asking_for_a_cuda_tensor_raises_embers_error_naming_the_reason(request, case, make):
    request.getfixturevalue(case)
    with pytest.raises(RuntimeError, match="device type 'cuda' .*no cuda device is available: .+") as info:
        make()
    assert type(info.value) is RuntimeError
    assert "CuPy is not installed" in str(info.value) or "cudaErrorInsufficientDriver" in str(info.value)


@pytest.mark.parametrize("case", UNAVAILABLE)
def test_pinning_fails_and_nothing_is_pinned_as_in_a_cpu_only_torch(request, case):
    request.getfixturevalue(case)
    x, t = ember.ones(2, 3), torch.ones(2, 3)
    assert x.is_pinned() is t.is_pinned() is False
    assert ember.empty(0).is_pinned() is torch.empty(0).is_pinned() is False
    if TORCH_IS_CPU_ONLY:
        with pytest.raises(RuntimeError, match="Cannot access accelerator device when none is available"):
            t.pin_memory()
    with pytest.raises(RuntimeError, match="Cannot access accelerator device when none is available"):
        x.pin_memory()


@pytest.mark.parametrize("case", UNAVAILABLE)
def test_the_cli_lists_the_backend_as_unavailable_with_the_reason(request, capsys, monkeypatch, case):
    request.getfixturevalue(case)
    monkeypatch.setenv("COLUMNS", "400")  # ember plugins cuts lines to the terminal's width
    assert ember.cli.main(["plugins"]) == 0
    out = capsys.readouterr().out
    line = next(line for line in out.splitlines() if line.strip().startswith("backends: cuda"))
    assert "cuda (unavailable: " in line
    assert ("CuPy is not installed" in line) if case == "no_cupy" else ("cudaErrorInsufficientDriver" in line)


def _run(code):
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True, timeout=120)


def test_import_ember_and_ember_plugins_never_fail_without_cupy():
    result = _run("""
        import sys
        sys.modules["cupy"] = None
        import ember, ember.cli
        assert ember.cuda.is_available() is False
        sys.exit(ember.cli.main(["plugins"]))
    """)
    assert result.returncode == 0, result.stderr
    assert "cuda (unavailable: CuPy is not installed" in result.stdout
    assert "Traceback" not in result.stderr and "Warning" not in result.stderr


def test_registering_the_plugin_imports_no_cupy():
    result = _run("""
        import sys
        import ember
        from ember.plugins import registry
        assert registry.find_backend("cuda").plugin == "cupy"
        assert "cupy" not in sys.modules, "the hookimpl must not import CuPy"
        ember.ones(2) + 1  # cpu work never probes CUDA
        assert "cupy" not in sys.modules
    """)
    assert result.returncode == 0, result.stderr


@pytest.mark.parametrize("case", UNAVAILABLE)
def test_the_cuda_version_is_none_as_in_a_cpu_only_torch(request, case):
    request.getfixturevalue(case)
    assert ember.version.cuda is None
    if TORCH_IS_CPU_ONLY:
        assert torch.version.cuda is None
