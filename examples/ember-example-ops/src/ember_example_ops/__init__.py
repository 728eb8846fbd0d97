"""ember-example-ops: an example operator plugin (``example::softclamp``).

ember imports this module when it first needs a catalogue and calls the hook below.
The module imports nothing heavy at top level: the op module is imported inside the
hook, so listing plugins stays fast.

PyTorch counterpart: none for the entry module (PyTorch has no plugin hooks); the op it
registers is what torch/library.py's ``custom_op`` makes (see ops.py).
"""

from ember.plugins import hookimpl

__version__ = "0.1.0"


@hookimpl
def ember_register_ops(register):
    from ember_example_ops.ops import softclamp

    register(softclamp)
