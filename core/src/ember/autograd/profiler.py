"""``ember.autograd.profiler``: the older spelling of the profiler (``profile`` with
``enabled``, ``function_events`` and ``table``; ``record_function``), over
ember.profiler's recorder (NOTE [ The profiler at the dispatcher ]).

PyTorch counterpart: torch/autograd/profiler.py (``profile``, ``record_function``) (v2.13).
"""

from ember.profiler.profiler import profile as _profile
from ember.profiler.profiler import record_function

__all__ = ["profile", "record_function"]


class profile(_profile):
    """``with ember.autograd.profiler.profile() as prof: ...; print(prof.table())``."""

    def __init__(self, enabled=True, *, use_cuda=False, use_device=None, record_shapes=False, with_flops=False,
                 profile_memory=False, with_stack=False, with_modules=False, use_kineto=False, use_cpu=True,
                 experimental_config=None, acc_events=False, custom_trace_id_callback=None):
        super().__init__(record_shapes=record_shapes, profile_memory=profile_memory, with_stack=with_stack)
        self.enabled = enabled

    def start(self):
        if self.enabled:
            super().start()

    @property
    def function_events(self):
        return self.events()

    def table(self, sort_by=None, row_limit=100, max_name_column_width=55, header=None, top_level_events_only=False):
        return self.events().table(sort_by, row_limit, max_name_column_width, header, top_level_events_only)
