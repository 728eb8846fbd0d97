"""``DataParallel``: split each batch over several devices of one process, run a replica
of the module on each in a thread, and gather the outputs.

PyTorch counterpart: torch/nn/parallel/data_parallel.py (v2.13). Every forward
replicates the module (replicate.py), scatters the inputs along ``dim``
(scatter_gather.py), runs the replicas (parallel_apply.py) and gathers the outputs on
``output_device``; backward flows through all of that into the original parameters.

ember differs in one way, on purpose: ``device_ids`` may name CPU devices (e.g.
``["cpu", "cpu"]``), which runs the replicas in threads on the CPU, so the mechanism
is testable without GPUs; torch runs the module unchanged when no GPU is there, and so
does ember when ``device_ids`` is not given and CUDA is not available.
"""

from ember.nn.modules.module import Module
from ember.nn.parallel.parallel_apply import parallel_apply
from ember.nn.parallel.replicate import replicate
from ember.nn.parallel.scatter_gather import gather, scatter_kwargs


def _default_devices():
    import ember

    if ember.cuda.is_available():
        return [f"cuda:{i}" for i in range(ember.cuda.device_count())]
    return []


class DataParallel(Module):
    """Run ``module`` on slices of the batch, one per device of ``device_ids``."""

    def __init__(self, module, device_ids=None, output_device=None, dim=0):
        super().__init__()
        import ember

        self.module = module
        self.device_ids = [ember.device(d) if not isinstance(d, int) else ember.device("cuda", d)
                           for d in (device_ids if device_ids is not None else _default_devices())]
        self.output_device = (self.device_ids[0] if output_device is None and self.device_ids
                              else output_device)
        self.dim = dim

    def forward(self, *inputs, **kwargs):
        if not self.device_ids:
            return self.module(*inputs, **kwargs)
        for param in self.module.parameters():
            if param.device != self.device_ids[0]:
                raise RuntimeError(f"module must have its parameters and buffers on device "
                                   f"{self.device_ids[0]} (device_ids[0]) but found one of them on device: "
                                   f"{param.device}")
        inputs, kwargs = scatter_kwargs(inputs, kwargs, self.device_ids, self.dim)
        if not inputs and not kwargs:
            inputs, kwargs = ((),), ({},)
        if len(self.device_ids) == 1:
            return self.module(*inputs[0], **kwargs[0])
        used = self.device_ids[:len(inputs)]
        replicas = replicate(self.module, used)
        outputs = parallel_apply(replicas, inputs, kwargs, used)
        return gather(outputs, self.output_device, self.dim)


def data_parallel(module, inputs, device_ids=None, output_device=None, dim=0, module_kwargs=None):
    """The functional form: one ``DataParallel`` forward."""
    if not isinstance(inputs, tuple):
        inputs = (inputs,)
    return DataParallel(module, device_ids, output_device, dim)(*inputs, **(module_kwargs or {}))
