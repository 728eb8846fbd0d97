"""``parallel_apply``: run each replica on its inputs in its own thread.

PyTorch counterpart: torch/nn/parallel/parallel_apply.py (v2.13). NumPy and CuPy
release the GIL in their kernels, so replicas on different devices (or CPU cores)
overlap. An exception in a replica is re-raised in the caller with its type, the
replica's index and device, and the replica's traceback (torch's ``ExceptionWrapper``).
"""

import threading
import traceback


def parallel_apply(modules, inputs, kwargs_tup=None, devices=None):
    """``[modules[i](*inputs[i], **kwargs_tup[i]) for i]``, computed in threads."""
    import ember

    if len(modules) != len(inputs):
        raise AssertionError(f"The number of modules {len(modules)} is not equal to the number of inputs "
                             f"{len(inputs)}")
    kwargs_tup = kwargs_tup or ({},) * len(modules)
    devices = devices or [None] * len(modules)
    results = [None] * len(modules)
    grad_enabled = ember.is_grad_enabled()  # grad mode is per thread: carry the caller's

    def work(i):
        try:
            with ember.set_grad_enabled(grad_enabled):
                args = inputs[i] if isinstance(inputs[i], (list, tuple)) else (inputs[i],)
                results[i] = modules[i](*args, **kwargs_tup[i])
        except Exception as exc:
            results[i] = (exc, traceback.format_exc())

    threads = [threading.Thread(target=work, args=(i,)) for i in range(len(modules))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for i, result in enumerate(results):
        if isinstance(result, tuple) and len(result) == 2 and isinstance(result[0], Exception):
            exc, text = result
            raise type(exc)(f"Caught {type(exc).__name__} in replica {i} on device {devices[i]}.\n"
                            f"Original {text}") from exc
    return results
