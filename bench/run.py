"""Run every benchmark at one thread and at the machine's default thread count, each
in its own process (thread counts are fixed at NumPy/torch import), and print a table
of ember vs torch with ratios (below 1.0 means ember is faster).

    python bench/run.py            # all benchmarks, 1 thread and default
    python bench/run.py --threads 1
"""

import argparse
import json
import os
import pathlib
import subprocess
import sys

HERE = pathlib.Path(__file__).parent
BENCHMARKS = [
    "overhead.py",
    "mlp_step.py",
    "conv_layer.py",
    "conv_small.py",  # the fixed cost of tiny convolutions (forward, forward+backward; NCHW, channels_last)
    "cnn_step.py",
    "cnn_memory.py",
    "cpu_allocator.py",  # the cpu cache on against off ("baseline"), one process
    "loss_cross_entropy.py",
    "layer_norm.py",  # fused layer-norm forward + backward, (32, 64, 256)
    "norms.py",  # batch norm (train, eval), group, instance and RMS norm against torch
    "optim_step.py",
    "dataloader.py",
    "transformer_step.py",
    "lstm_step.py",
    "yolo_infer.py",
    "quantized_infer.py",  # int8 Linear/Conv2d: ember vs torch's int8 (fbgemm) and vs ember float32
    "resnet_step.py",
    "allreduce.py",  # 2 ranks under mpiexec: ember (MPI) vs torch (gloo)
    "ddp_step.py",  # 2 ranks: DDP ResNet-18 step, and the share of the all-reduce hidden behind backward
    "cli_threads.py",  # the CLI's default thread policy against THREADS (its "torch" column)
]


def run(script, threads):
    """The JSON result lines a benchmark script prints (one per variant it measures)."""
    out = subprocess.run([sys.executable, str(HERE / script), str(threads)], cwd=HERE, check=True,
                         capture_output=True, text=True)
    return [json.loads(line) for line in out.stdout.strip().splitlines() if line.startswith("{")]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--threads", type=int, nargs="*", default=[1, os.cpu_count() or 1])
    args = parser.parse_args()
    print(f"{'benchmark':<48} {'threads':>7} {'ember':>10} {'torch':>10} {'ratio':>7}")
    for threads in dict.fromkeys(args.threads):
        for script in BENCHMARKS:
            for r in run(script, threads):
                extra = f"  (forward only {r['forward ratio']:.2f})" if "forward ratio" in r else ""
                baseline = r["torch"] if "torch" in r else r["baseline"]
                print(f"{r['benchmark']:<48} {threads:>7} {r['ember']:>10.3f} {baseline:>10.3f} "
                      f"{r['ratio']:>7.2f}{extra}")


if __name__ == "__main__":
    main()
