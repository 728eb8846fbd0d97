"""Suite-wide pytest hooks and fixtures.

PyTorch counterpart: none (test infrastructure).
"""

import subprocess

import pytest


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item, call):
    """A child process that failed under ``check=True`` shows what it printed: a
    CalledProcessError alone says only the exit status, which hides why an install or
    a CLI run failed."""
    report = yield
    error = call.excinfo.value if call.excinfo is not None else None
    if isinstance(error, subprocess.CalledProcessError):
        report.sections.append(("child process output",
                                f"--- stdout ---\n{error.stdout or ''}\n--- stderr ---\n{error.stderr or ''}"))
    return report


def pytest_terminal_summary(terminalreporter):
    """The conformance suites' counts (tests/conformance/conformance_summary.py)."""
    from conformance_summary import write_counts

    write_counts(terminalreporter)


@pytest.fixture
def use_plugin():
    """Register plugins for one test; unregister them afterwards."""
    import ember

    names = []

    def use(plugin):
        names.append(ember.plugins.register(plugin))
        return plugin

    yield use
    for name in reversed(names):
        ember.plugins.unregister(name=name)
