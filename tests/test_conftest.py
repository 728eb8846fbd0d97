"""The suite-wide hook in tests/conftest.py: a child process that fails under
``check=True`` has its output in the failure report.

PyTorch counterpart: none (test infrastructure).
"""

import pathlib
import shutil
import subprocess
import sys
import textwrap

HERE = pathlib.Path(__file__).resolve().parent


def test_a_failed_child_process_shows_its_output(tmp_path):
    shutil.copy(HERE / "conftest.py", tmp_path / "conftest.py")
    (tmp_path / "test_child.py").write_text(textwrap.dedent("""
        import subprocess, sys

        def test_child_fails():
            code = "import sys; print('written to stdout'); sys.exit('written to stderr')"
            subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True)
    """))
    result = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:xdist", "-p", "no:cacheprovider",
                             str(tmp_path)], capture_output=True, text=True, cwd=tmp_path, timeout=120)
    assert result.returncode == 1, result.stdout + result.stderr
    assert "child process output" in result.stdout
    assert "written to stdout" in result.stdout and "written to stderr" in result.stdout
