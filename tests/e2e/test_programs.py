"""PyTorch programs run on ember with nothing changed but the import: each script in
tests/e2e/programs/ is run once as written (``import torch``) and once with its torch
imports pointing at ember, and the numbers each prints (JSON, last line) must agree to
the tolerance the script's docstring declares."""

import json
import pathlib
import re
import subprocess
import sys

import pytest

PROGRAMS = pathlib.Path(__file__).parent / "programs"


def _as_ember(source):
    """The one change a user makes: the torch imports name ember."""
    source = re.sub(r"(?m)^import torch$", "import ember as torch", source)
    source = re.sub(r"(?m)^import torch\.(\S+) as (\w+)$", r"import ember.\1 as \2", source)
    return re.sub(r"(?m)^from torch(\S*) import", r"from ember\1 import", source)


def _run(source, tmp_path, name):
    script = tmp_path / name
    script.write_text(source)
    env = {"OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1", "MKL_NUM_THREADS": "1", "PYTHONHASHSEED": "0",
           "PATH": "/usr/bin:/bin"}
    done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=300, env=env)
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


def _close(a, b, tolerance, where):
    if isinstance(a, list):
        assert isinstance(b, list) and len(a) == len(b), where
        for i, (x, y) in enumerate(zip(a, b)):
            _close(x, y, tolerance, f"{where}[{i}]")
    elif isinstance(a, float) or isinstance(b, float):
        assert abs(a - b) <= tolerance * max(1.0, abs(b)), f"{where}: ember {a} vs torch {b}"
    else:
        assert a == b, f"{where}: ember {a!r} vs torch {b!r}"


@pytest.mark.slow
@pytest.mark.parametrize("program", sorted(p.name for p in PROGRAMS.glob("*.py")))
def test_program_gives_torchs_numbers(program, tmp_path):
    source = (PROGRAMS / program).read_text()
    tolerance = float(re.search(r"tolerance: (\S+)", source).group(1))
    ember_source = _as_ember(source)
    assert ember_source != source and "import torch" not in ember_source.replace("import ember as torch", "")
    expected = _run(source, tmp_path, "torch_" + program)
    actual = _run(ember_source, tmp_path, "ember_" + program)
    assert actual.keys() == expected.keys()
    for key in expected:
        _close(actual[key], expected[key], tolerance, key)
