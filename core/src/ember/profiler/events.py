"""What the profiler recorded: one ``FunctionEvent`` per op call or ``record_function``
range, and ``EventList`` with ``key_averages`` and the text ``table``.

PyTorch counterpart: torch/autograd/profiler_util.py (``FunctionEvent``,
``FunctionEventAvg``, ``EventList``, ``_build_table``) (v2.13). Times are microseconds
of the process's performance counter; an event's self time is its total minus its
children's (the events it encloses on its thread).
"""

import json
import os


class FunctionEvent:
    """One op call or ``record_function`` range."""

    def __init__(self, name, start_us, end_us, thread, input_shapes=(), cpu_memory_usage=0, stack=(),
                 is_user_annotation=False):
        self.name, self.key = name, name
        self.time_range = (start_us, end_us)
        self.thread = thread
        self.input_shapes = [list(s) for s in input_shapes]
        self.cpu_memory_usage = cpu_memory_usage
        self.stack = list(stack)
        self.is_user_annotation = is_user_annotation
        self.cpu_children = []
        self.cpu_parent = None
        self.count = 1

    @property
    def cpu_time_total(self):
        return self.time_range[1] - self.time_range[0]

    @property
    def self_cpu_time_total(self):
        return self.cpu_time_total - sum(child.cpu_time_total for child in self.cpu_children)

    @property
    def cpu_time(self):
        return self.cpu_time_total

    @property
    def self_cpu_memory_usage(self):
        return self.cpu_memory_usage - sum(child.cpu_memory_usage for child in self.cpu_children)

    def __repr__(self):
        return (f"<FunctionEvent name={self.name} cpu_time_total={self.cpu_time_total:.3f}us "
                f"input_shapes={self.input_shapes}>")


class FunctionEventAvg:
    """The events of one name (and input shapes, when grouped by them), summed."""

    def __init__(self, key, input_shapes):
        self.key, self.name, self.input_shapes = key, key, input_shapes
        self.count = 0
        self.cpu_time_total = self.self_cpu_time_total = 0.0
        self.cpu_memory_usage = self.self_cpu_memory_usage = 0

    def add(self, event):
        self.count += event.count
        self.cpu_time_total += event.cpu_time_total
        self.self_cpu_time_total += event.self_cpu_time_total
        self.cpu_memory_usage += event.cpu_memory_usage
        self.self_cpu_memory_usage += event.self_cpu_memory_usage
        return self

    @property
    def cpu_time(self):
        return self.cpu_time_total / max(self.count, 1)

    def __repr__(self):
        return f"<FunctionEventAvg key={self.key} count={self.count} cpu_time_total={self.cpu_time_total:.3f}us>"


class EventList(list):
    """The recorded events, in start order, with torch's summaries."""

    def __init__(self, events=(), profile_memory=False, with_shapes=False):
        super().__init__(events)
        self.profile_memory = profile_memory
        self.with_shapes = with_shapes

    def key_averages(self, group_by_input_shape=False, group_by_stack_n=0):
        groups = {}
        for event in self:
            shapes = str(event.input_shapes) if group_by_input_shape else ""
            stack = tuple(event.stack[:group_by_stack_n]) if group_by_stack_n else ()
            key = (event.key, shapes, stack)
            if key not in groups:
                groups[key] = FunctionEventAvg(event.key, event.input_shapes if group_by_input_shape else [])
            groups[key].add(event)
        return EventList(groups.values(), self.profile_memory, with_shapes=group_by_input_shape)

    @property
    def self_cpu_time_total(self):
        return sum(event.self_cpu_time_total for event in self)

    def table(self, sort_by=None, row_limit=100, max_name_column_width=55, header=None, top_level_events_only=False):
        """torch's text table: name, self and total CPU time with their shares, the
        average, the calls (and input shapes, memory where recorded)."""
        rows = list(self)
        if top_level_events_only:
            rows = [e for e in rows if getattr(e, "cpu_parent", None) is None]
        if sort_by is not None:
            rows.sort(key=lambda e: getattr(e, sort_by.replace("cuda", "cpu").replace("device", "cpu")),
                      reverse=True)
        rows = rows[:row_limit] if row_limit is not None and row_limit >= 0 else rows
        total = self.self_cpu_time_total
        width = min(max_name_column_width, max([len(e.key) for e in rows] + [4]) + 4)
        columns = [("Name", width)] + [(title, 12) for title in ("Self CPU %", "Self CPU", "CPU total %",
                                                                  "CPU total", "CPU time avg")]
        if self.profile_memory:
            columns += [("CPU Mem", 12), ("Self CPU Mem", 12)]
        columns.append(("# of Calls", 12))
        if self.with_shapes:
            columns.append(("Input Shapes", 20))
        line = "".join("-" * w + "  " for _, w in columns)
        out = [line] if header is None else [header, line]
        out += ["".join(title.rjust(w) + "  " for title, w in columns), line]
        for e in rows:
            name = e.key if len(e.key) <= width - 4 else e.key[:width - 7] + "..."
            cells = [name, _percent(e.self_cpu_time_total, total), _time(e.self_cpu_time_total),
                     _percent(e.cpu_time_total, total), _time(e.cpu_time_total), _time(e.cpu_time)]
            if self.profile_memory:
                cells += [_memory(e.cpu_memory_usage), _memory(e.self_cpu_memory_usage)]
            cells.append(str(e.count))
            if self.with_shapes:
                cells.append(str(e.input_shapes)[:20])
            out.append("".join(cell.rjust(w) + "  " for cell, (_, w) in zip(cells, columns)))
        out += [line, f"Self CPU time total: {_time(total)}", ""]
        return "\n".join(out)

    def export_chrome_trace(self, path):
        """The events as a Chrome trace (chrome://tracing, Perfetto)."""
        events = [{"ph": "X", "cat": "user_annotation" if e.is_user_annotation else "cpu_op", "name": e.name,
                   "pid": os.getpid(), "tid": e.thread, "ts": e.time_range[0], "dur": e.cpu_time_total,
                   "args": {"Input Dims": e.input_shapes}} for e in self]
        with open(path, "w") as f:
            json.dump({"traceEvents": events, "displayTimeUnit": "ms"}, f)


def _time(us):
    if us >= 1e6:
        return f"{us / 1e6:.3f}s"
    if us >= 1e3:
        return f"{us / 1e3:.3f}ms"
    return f"{us:.3f}us"


def _percent(part, whole):
    return f"{100 * part / whole:.2f}%" if whole else "0.00%"


def _memory(nbytes):
    for unit, size in (("Gb", 2 ** 30), ("Mb", 2 ** 20), ("Kb", 2 ** 10)):
        if abs(nbytes) >= size:
            return f"{nbytes / size:.2f} {unit}"
    return f"{nbytes} b"
