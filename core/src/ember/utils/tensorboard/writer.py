"""``SummaryWriter``: a training run's curves, histograms, images, text, hyperparameters
and graph, written as TensorBoard event files.

PyTorch counterpart: torch/utils/tensorboard/writer.py (``SummaryWriter``) (v2.13).
Both write through the ``tensorboard`` package's ``EventFileWriter`` (the file format,
queue and flushing are its own), so ``tensorboard --logdir runs`` shows ember's runs.
"""

import os
import socket
import time
from datetime import datetime

from ember.utils.tensorboard import summary


def _event_file_writer(log_dir, max_queue, flush_secs, filename_suffix):
    try:
        from tensorboard.summary.writer.event_file_writer import EventFileWriter
    except ImportError as exc:
        raise ImportError("ember.utils.tensorboard needs the tensorboard package: pip install tensorboard") from exc
    return EventFileWriter(log_dir, max_queue, flush_secs, filename_suffix)


class SummaryWriter:
    """Writes to ``log_dir`` (default ``runs/<date>_<host><comment>``)."""

    def __init__(self, log_dir=None, comment="", purge_step=None, max_queue=10, flush_secs=120,
                 filename_suffix=""):
        if log_dir is None:
            stamp = datetime.now().strftime("%b%d_%H-%M-%S")
            log_dir = os.path.join("runs", f"{stamp}_{socket.gethostname()}{comment}")
        self.log_dir = os.fspath(log_dir)
        self._options = (max_queue, flush_secs, filename_suffix)
        self._writer = _event_file_writer(self.log_dir, *self._options)
        self._add_file_version(purge_step)

    def _add_file_version(self, purge_step=None):
        """The file's first event; with ``purge_step``, at that step and followed by a
        session START there, which tells TensorBoard to hide the events of earlier files
        at that step and later (a crashed run's, which this one writes again), as torch does."""
        from tensorboard.compat.proto.event_pb2 import Event, SessionLog

        if purge_step is None:
            self._writer.add_event(Event(wall_time=time.time(), file_version="brain.Event:2"))
            return
        self._writer.add_event(Event(wall_time=time.time(), step=int(purge_step), file_version="brain.Event:2"))
        self._writer.add_event(Event(wall_time=time.time(), step=int(purge_step),
                                     session_log=SessionLog(status=SessionLog.START)))

    def get_logdir(self):
        return self.log_dir

    def _add(self, summary_pb, global_step, walltime):
        from tensorboard.compat.proto.event_pb2 import Event

        event = Event(summary=summary_pb, wall_time=time.time() if walltime is None else walltime)
        if global_step is not None:
            event.step = int(global_step)
        self._writer.add_event(event)

    def add_scalar(self, tag, scalar_value, global_step=None, walltime=None, new_style=False,
                   double_precision=False):
        self._add(summary.scalar(tag, scalar_value), global_step, walltime)

    def add_scalars(self, main_tag, tag_scalar_dict, global_step=None, walltime=None):
        """Several curves in one chart: each in its own run ``<log_dir>/<main_tag>_<tag>``."""
        for tag, value in tag_scalar_dict.items():
            directory = os.path.join(self.log_dir, f"{main_tag.replace('/', '_')}_{tag}")
            child = SummaryWriter(directory, max_queue=self._options[0], flush_secs=self._options[1])
            child.add_scalar(main_tag, value, global_step, walltime)
            child.close()

    def add_histogram(self, tag, values, global_step=None, bins="tensorflow", walltime=None, max_bins=None):
        self._add(summary.histogram(tag, values, bins, max_bins), global_step, walltime)

    def add_image(self, tag, img_tensor, global_step=None, walltime=None, dataformats="CHW"):
        self._add(summary.image(tag, img_tensor, dataformats), global_step, walltime)

    def add_images(self, tag, img_tensor, global_step=None, walltime=None, dataformats="NCHW"):
        self._add(summary.image(tag, img_tensor, dataformats), global_step, walltime)

    def add_text(self, tag, text_string, global_step=None, walltime=None):
        self._add(summary.text(tag, text_string), global_step, walltime)

    def add_hparams(self, hparam_dict, metric_dict, hparam_domain_discrete=None, run_name=None,
                    global_step=None):
        """The run's hyperparameters and its final metrics, in a run of their own
        (``<log_dir>/<run_name>``) as torch writes them."""
        if not isinstance(hparam_dict, dict) or not isinstance(metric_dict, dict):
            raise TypeError("hparam_dict and metric_dict should be dictionary.")
        child = SummaryWriter(os.path.join(self.log_dir, run_name or str(time.time())))
        child._add(summary.hparams(hparam_dict), global_step, None)
        for key, value in metric_dict.items():
            child.add_scalar(key, value, global_step)
        child.close()

    def add_graph(self, model, input_to_model=None, verbose=False, use_strict_trace=True):
        """The model's traced ops (ember.jit.trace) as TensorBoard's graph."""
        from tensorboard.compat.proto.event_pb2 import Event
        from tensorboard.compat.proto.graph_pb2 import GraphDef
        from tensorboard.compat.proto.node_def_pb2 import NodeDef

        from ember.jit import trace

        traced = trace(model, input_to_model, check_trace=False)
        nodes = [NodeDef(name=node.name, op=str(node.target) if node.op == "call_function" else node.op,
                         input=[str(a) for a in node.all_input_nodes]) for node in traced.graph.nodes]
        self._writer.add_event(Event(graph_def=GraphDef(node=nodes).SerializeToString(), wall_time=time.time()))

    def flush(self):
        self._writer.flush()

    def close(self):
        self._writer.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
