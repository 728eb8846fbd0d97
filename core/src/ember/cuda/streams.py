"""CUDA streams and events: ``Stream``, ``Event``, ``current_stream``, ``stream(...)``.

PyTorch counterpart: torch/cuda/streams.py (``Stream``, ``Event``) and the stream
functions of torch/cuda/__init__.py (``current_stream``, ``default_stream``,
``set_stream``, ``StreamContext``, ``stream``) (v2.13).

A stream is a queue of kernels on one device; kernels on one stream run in order,
kernels on different streams may overlap. An event is a marker recorded on a stream:
another stream can wait for it, the host can wait for it or ask whether the work before
it is done, and two timing events measure the milliseconds between them on the device.
ember's CUDA kernels are CuPy's, and CuPy launches them on its *current* stream, so
each class here wraps the CuPy object (``cupy.cuda.Stream``, ``cupy.cuda.Event``) and
``with ember.cuda.stream(s):`` makes ``s`` CuPy's current stream for the block.

Without CUDA, as in torch's CPU build: creating a ``Stream`` or an ``Event`` raises a
RuntimeError, ``ember.cuda.stream(None)`` and ``set_stream(None)`` do nothing, and
``current_stream``/``default_stream`` raise (torch: an AssertionError "Torch not
compiled with CUDA enabled"; ember: the RuntimeError that says why there is no CUDA,
as ``ember.cuda.synchronize`` does). ember leaves out IPC handles, external streams and
graph capture.
"""


def _cupy(what):
    """CuPy, through the ``cuda`` backend; without CUDA, ``what`` requires CUDA support and why not."""
    from ember import cuda

    try:
        return cuda._usable_backend().module.cupy()
    except RuntimeError as exc:
        raise RuntimeError(f"{what} requires CUDA support ({exc})") from None


def _device_index(device):
    from ember import cuda

    index = cuda._index(device)
    return cuda.current_device() if index is None or index < 0 else index


class Stream:
    """A CUDA stream on ``device`` (default: the current one); lower ``priority`` runs first."""

    def __init__(self, device=None, priority=0, **kwargs):
        cp = _cupy("ember.cuda.Stream")
        self.device_index = _device_index(device)
        self.priority = priority
        with cp.cuda.Device(self.device_index):
            self._stream = cp.cuda.Stream(**({"priority": priority} if priority else {}))

    @classmethod
    def _of(cls, raw, device_index):
        """Wrap a CuPy stream that already exists (the current or the null stream)."""
        stream = cls.__new__(cls)
        stream._stream, stream.device_index, stream.priority = raw, device_index, 0
        return stream

    @property
    def device(self):
        from ember.device import device

        return device("cuda", self.device_index)

    @property
    def cuda_stream(self):
        """The raw ``cudaStream_t`` as an int (0 for the default stream)."""
        return int(self._stream.ptr)

    def wait_event(self, event):
        """Work queued on this stream from now on waits until ``event`` has completed."""
        self._stream.wait_event(event._event)

    def wait_stream(self, stream):
        """Work queued on this stream from now on waits for what ``stream`` has queued so far."""
        self.wait_event(stream.record_event())

    def record_event(self, event=None):
        """Record ``event`` (a new one when None) on this stream; returns it."""
        event = Event() if event is None else event
        event.record(self)
        return event

    def query(self):
        """True when every kernel queued on this stream has finished."""
        return bool(self._stream.done)

    def synchronize(self):
        """Block the host until every kernel queued on this stream has finished."""
        self._stream.synchronize()

    def __eq__(self, other):
        return isinstance(other, Stream) and (self.cuda_stream, self.device_index) == (other.cuda_stream,
                                                                                          other.device_index)

    def __hash__(self):
        return hash((self.cuda_stream, self.device_index))

    def __repr__(self):
        return f"<ember.cuda.Stream device={self.device} cuda_stream={hex(self.cuda_stream)}>"


class Event:
    """A marker on a stream: wait for it, ask about it, or time between two of them."""

    def __init__(self, enable_timing=False, blocking=False, interprocess=False, external=False):
        cp = _cupy("ember.cuda.Event")
        if interprocess:
            raise NotImplementedError("ember.cuda.Event: ember leaves out interprocess events (IPC handles)")
        self.enable_timing = enable_timing
        self.blocking = blocking
        self._event = cp.cuda.Event(block=blocking, disable_timing=not enable_timing)
        self._cupy = cp
        self._recorded = False

    def record(self, stream=None):
        """Record the event on ``stream`` (default: the current stream)."""
        stream = current_stream() if stream is None else stream
        self._event.record(stream._stream)
        self._recorded = True

    def wait(self, stream=None):
        """Make ``stream`` (default: the current one) wait for this event."""
        (current_stream() if stream is None else stream).wait_event(self)

    def query(self):
        """True when the work recorded before this event has finished (True if never recorded)."""
        return bool(self._event.done)

    def synchronize(self):
        """Block the host until the work recorded before this event has finished."""
        self._event.synchronize()

    def elapsed_time(self, end_event):
        """Milliseconds on the device between this event and ``end_event`` (both recorded, both timing)."""
        if not (self.enable_timing and end_event.enable_timing):
            raise RuntimeError("Both events must be created with argument 'enable_timing=True'.")
        if not (self._recorded and end_event._recorded):
            raise RuntimeError("Both events must be recorded before calculating elapsed time.")
        return float(self._cupy.cuda.get_elapsed_time(self._event, end_event._event))

    @property
    def cuda_event(self):
        return int(self._event.ptr)

    def ipc_handle(self):
        raise NotImplementedError("ember.cuda.Event: ember leaves out interprocess events (IPC handles)")

    def __repr__(self):
        return f"<ember.cuda.Event {hex(self.cuda_event)}>" if self._recorded else "<ember.cuda.Event uninitialized>"


def current_stream(device=None):
    """The stream kernels on ``device`` are queued on now (CuPy's current stream)."""
    cp = _cupy("ember.cuda.current_stream")
    index = _device_index(device)
    with cp.cuda.Device(index):
        return Stream._of(cp.cuda.get_current_stream(), index)


def default_stream(device=None):
    """The device's default (null) stream."""
    cp = _cupy("ember.cuda.default_stream")
    return Stream._of(cp.cuda.Stream.null, _device_index(device))


def set_stream(stream):
    """Make ``stream`` the current stream (None: do nothing, as torch)."""
    if stream is not None:
        stream._stream.use()


class StreamContext:
    """``with StreamContext(s):`` queues the block's kernels on ``s``, then restores the
    stream that was current; with None it does nothing (so code written for CUDA runs on
    CPU unchanged, as torch's)."""

    def __init__(self, stream):
        self.stream = stream
        self._previous = None

    def __enter__(self):
        if self.stream is None:
            return None
        self._previous = current_stream(self.stream.device_index)
        self.stream._stream.use()
        return self.stream

    def __exit__(self, *exc):
        if self._previous is not None:
            self._previous._stream.use()
            self._previous = None


def stream(stream):
    """The context manager ``StreamContext(stream)``."""
    return StreamContext(stream)
