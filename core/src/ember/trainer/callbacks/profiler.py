"""Profile a few training steps of a run (``--profile``): a Chrome trace and the table of
the ops that cost the most, in ``OUT/profile``.

PyTorch counterpart: torch/profiler/profiler.py does the recording (``profile`` with a
``schedule``, ``prof.step()`` after each step: ember.profiler); the callback is
Lightning's lightning/pytorch/profilers/pytorch.py (``PyTorchProfiler``, handed to the
``Trainer``, which steps it after each batch). ember's waits ``wait`` steps (the first
steps pay for caches and allocation), warms up, records ``active`` steps once, and writes
``trace.json`` (chrome://tracing, Perfetto) and ``ops.txt`` (``key_averages().table``).
Rank 0 alone profiles.
"""

from ember.trainer.callbacks.callback import Callback

FOLDER = "profile"
ROWS = 20  # of the table in ops.txt


class StepProfiler(Callback):
    """Record training steps ``wait + warmup + 1`` to ``wait + warmup + active`` (from 1)."""

    def __init__(self, wait=1, warmup=1, active=3):
        self.wait, self.warmup, self.active = wait, warmup, active
        self.profile = None

    def on_train_start(self, trainer):
        from ember.profiler import profile, schedule

        if not trainer.is_main:
            return
        plan = schedule(wait=self.wait, warmup=self.warmup, active=self.active,
                        repeat=1)
        self.profile = profile(schedule=plan, record_shapes=True,
                               on_trace_ready=lambda prof: self._save(trainer, prof))
        self.profile.start()

    def on_batch_end(self, trainer, loss, step):
        if self.profile is not None:
            self.profile.step()

    def on_train_end(self, trainer):
        self._close()

    def on_exception(self, trainer, exception):
        self._close()  # (the profile is the dispatcher's mode: it must not outlive the run)

    def _close(self):
        if self.profile is not None:
            self.profile.stop()
            self.profile = None

    def _save(self, trainer, prof):
        folder = trainer.out / FOLDER
        folder.mkdir(parents=True, exist_ok=True)
        prof.export_chrome_trace(str(folder / "trace.json"))
        table = prof.key_averages().table(sort_by="cpu_time_total", row_limit=ROWS)
        (folder / "ops.txt").write_text(table + "\n")
        first = self.wait + self.warmup + 1
        trainer.log(f"profiled steps {first}-{first + self.active - 1}: {folder / 'trace.json'} "
                    f"(chrome://tracing), {folder / 'ops.txt'}")
