"""The ``cpu`` backend's caching allocator (NOTE [ Caching freed memory on the CPU ] in
ember_numpy/allocator.py): the CIFAR-style CNN training step of cnn_step.py with the
cache on and off, alternated round by round in one process, with the page faults each
step takes. Reported as "ember" (cache on) against "baseline" (cache off).

PyTorch counterpart: none measured here (torch's CPU allocator does not cache); see
cnn_step.py for the step against torch.

    python bench/cpu_allocator.py [THREADS]
"""

import resource
import time

from cnn_step import BATCH, initial_weights, make_step
from common import libraries, pin_threads  # noqa: F401  (pinning happens in libraries)
from overhead import parse_args


def main(threads):
    np, torch, ember = libraries(threads)
    from ember_numpy import allocator

    rng = np.random.default_rng(0)
    weights = initial_weights(rng, np)
    x = rng.standard_normal((BATCH, 3, 32, 32)).astype(np.float32)
    y = rng.integers(0, 10, BATCH)
    step = make_step(ember, weights, x, y)
    times = {True: [], False: []}
    faults = {True: [], False: []}
    for _ in range(12):
        for caching in (True, False):
            allocator.enable() if caching else allocator.disable()
            ember.cpu.empty_cache()
            step()  # the first step after switching fills (or drains) the cache
            f0, t0 = resource.getrusage(resource.RUSAGE_SELF).ru_minflt, time.perf_counter()
            for _ in range(3):
                step()
            times[caching].append((time.perf_counter() - t0) / 3)
            faults[caching].append((resource.getrusage(resource.RUSAGE_SELF).ru_minflt - f0) / 3)
    allocator.enable_by_default()
    median = lambda values: sorted(values)[len(values) // 2]
    on, off = median(times[True]), median(times[False])
    import json

    print(json.dumps({"benchmark": "CNN step, cpu cache on vs off (ms)", "threads": threads, "ember": on * 1e3,
                      "baseline": off * 1e3, "ratio": on / off, "page faults per step (on)": median(faults[True]),
                      "page faults per step (off)": median(faults[False])}))


if __name__ == "__main__":
    main(parse_args().threads)
