"""Sphinx directives that draw the docs' pictures and tables from running ember code,
so that no picture or table can drift from the code.

PyTorch counterpart: none (docs tooling; PyTorch's docs use hand-made images).

- ``ember-autograd-graph``: runs its Python content, then draws the autograd graph of
  the tensor named by ``:tensor:`` (default ``out``) with ``ember.autograd.graph_to_dot``:
  the nodes numbered in the order backward runs them (a replay of the engine's
  ordering), each leaf below its ``AccumulateGrad``, and each ``(None, 0)`` edge ending
  at the input that needs no gradient. ``:params:`` names the inputs; the output's oval
  shows its variable name.
- ``ember-cli-help``: the ``--help`` text of ``ember`` and of each subcommand, from the
  argparse parser in ember/cli.py.
- ``ember-zoo-table``: one row per model registered through ``ember_register_models``.
"""

import argparse

from docutils import nodes
from docutils.parsers.rst import directives
from sphinx.ext.graphviz import graphviz
from sphinx.util.docutils import SphinxDirective


class AutogradGraph(SphinxDirective):
    """Show the code, run it, and draw the graph of the tensor it names."""

    has_content = True
    option_spec = {"tensor": directives.unchanged, "params": directives.unchanged,
                   "caption": directives.unchanged, "hide-code": directives.flag}

    def run(self):
        import ember

        code = "\n".join(self.content)
        namespace = {"__name__": f"ember_docs_graph_{self.env.current_document.docname}"}
        exec(compile(code, f"<{self.env.current_document.docname} graph>", "exec"), namespace)
        name = self.options.get("tensor", "out")
        tensor = namespace[name]
        params = dict(eval(self.options["params"], namespace)) if "params" in self.options else {}
        params.setdefault(name, tensor)  # the output's oval shows the name the code gives it
        node = graphviz()
        node["code"] = ember.autograd.graph_to_dot(tensor, params=params)
        node["options"] = {"docname": self.env.current_document.docname}
        node["alt"] = self.options.get("caption", "autograd graph")
        result = [] if "hide-code" in self.options else [nodes.literal_block(code, code, language="python")]
        if "caption" in self.options:
            figure = nodes.figure("", node)
            figure += nodes.caption(self.options["caption"], self.options["caption"])
            result.append(figure)
        else:
            result.append(node)
        return result


def _subparsers(parser):
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            return action.choices
    return {}


class CliHelp(SphinxDirective):
    """``ember --help`` and ``ember <command> --help``, as argparse prints them."""

    def run(self):
        from ember.cli import build_parser

        parser = build_parser()
        result = []
        for title, sub in [("ember", parser)] + [(f"ember {name}", p) for name, p in _subparsers(parser).items()]:
            section = nodes.section(ids=[nodes.make_id(f"cli-{title}")])
            section += nodes.title(title, title)
            text = sub.format_help()
            section += nodes.literal_block(text, text, language="text")
            result.append(section)
        return result


class ZooTable(SphinxDirective):
    """A table of the zoo: name, plugin, task, input size, parameters, dataset."""

    COLUMNS = [("model", "name"), ("plugin", "plugin"), ("task", "task"), ("family", "family"),
               ("input size", "input_size"), ("parameters", "num_params"), ("default dataset", "default_dataset"),
               ("PyTorch counterpart", "torch_counterpart")]

    def run(self):
        import ember.zoo

        rows = [[_cell(getattr(ember.zoo.model_info(name), field)) for _, field in self.COLUMNS]
                for name in ember.zoo.list_models()]
        return [_table([header for header, _ in self.COLUMNS], rows)]


def _cell(value):
    if value is None:
        return ""
    if isinstance(value, int):
        return f"{value:,}"
    if isinstance(value, tuple):
        return " x ".join(str(v) for v in value)
    return str(value)


def _table(header, rows):
    table = nodes.table()
    group = nodes.tgroup(cols=len(header))
    table += group
    for _ in header:
        group += nodes.colspec(colwidth=1)
    head = nodes.thead()
    group += head
    head += _row(header)
    body = nodes.tbody()
    group += body
    for row in rows:
        body += _row(row)
    return table


def _row(cells):
    row = nodes.row()
    for text in cells:
        entry = nodes.entry()
        entry += nodes.paragraph(text, text)
        row += entry
    return row


def setup(app):
    app.add_directive("ember-autograd-graph", AutogradGraph)
    app.add_directive("ember-cli-help", CliHelp)
    app.add_directive("ember-zoo-table", ZooTable)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
