"""The public names of ember, listed at build time from the objects themselves and from the
plugin catalogues, so that the API reference cannot miss a name a plugin registers.

PyTorch counterpart: none (docs tooling; torch's reference is hand-written autosummary pages).

``.. ember-api:: GROUP`` writes one Python-domain entry (signature without annotations,
and the first paragraph of the docstring) per public name of the group; GROUPS lists them.
tests/docs/test_public_api.py checks that every public name is declared by a group the
page uses, or autodoc'd in docs/reference/api.rst.
"""

import inspect
import re
import sys

# group -> (title, namespace, how to list the names); names are read when the page is built.
GROUPS = {}


def group(key, title, namespace):
    def decorate(fn):
        GROUPS[key] = (title, namespace, fn)
        return fn
    return decorate


def _public(obj, modules=False):
    return sorted(n for n in dir(obj) if not n.startswith("_") and n.isidentifier()
                  and (modules or not inspect.ismodule(getattr(obj, n))))


def _with_attributes(names, namespace):
    """The catalogue's names and the namespace's own public names (core functions, helpers)."""
    return sorted(set(names) | set(_public(resolve(*namespace.rsplit(".", 1)) if "." in namespace
                                           else __import__(namespace))))


def _catalogue(name, kinds=None):
    from ember.plugins import registry

    entries = registry.catalogue(name)
    return [n for n, r in entries.items() if kinds is None or r.extra.get("kind") in kinds]


@group("tensor", "Tensor methods and attributes", "ember.Tensor")
def _tensor():
    import ember
    return _public(ember.Tensor)


@group("ember", "Functions, classes and constants of ember", "ember")
def _ember():
    import ember
    return _public(ember)


@group("modules", "Modules registered in ember.nn", "ember.nn")
def _modules():
    return _with_attributes(_catalogue("modules"), "ember.nn")


@group("functionals", "Functionals registered in ember.nn.functional", "ember.nn.functional")
def _functionals():
    return _with_attributes(_catalogue("functionals"), "ember.nn.functional")


@group("optimizers", "Optimizers", "ember.optim")
def _optimizers():
    return _with_attributes(_catalogue("optimizers", {"optimizer"}), "ember.optim")


@group("lr_schedulers", "Learning-rate schedulers", "ember.optim.lr_scheduler")
def _schedulers():
    return _with_attributes(_catalogue("optimizers", {"lr_scheduler"}), "ember.optim.lr_scheduler")


@group("swa_utils", "Stochastic weight averaging", "ember.optim.swa_utils")
def _swa():
    return _with_attributes(_catalogue("optimizers", {"swa_utils"}), "ember.optim.swa_utils")


@group("data", "Datasets, samplers and loading", "ember.utils.data")
def _data():
    import ember.utils.data
    return [n for n in _with_attributes(_catalogue("data", {"api", "sampler"}), "ember.utils.data")
            if not inspect.ismodule(getattr(ember.utils.data, n))]


@group("transforms", "Transforms", "ember.utils.data.transforms")
def _transforms():
    import ember.utils.data
    return _public(ember.utils.data.transforms)


# Catalogues whose names are keys, not attributes: a table of name, call and summary.
TABLES = {
    "datasets": ("data", {"dataset"}, "ember.utils.data.load_dataset"),
    "models": ("models", None, "ember.zoo.create_model"),
}


def table_names(key):
    catalogue, kinds, _ = TABLES[key]
    return _catalogue(catalogue, kinds)


def table_rst(key):
    from ember.plugins import registry

    catalogue, _, call = TABLES[key]
    entries = registry.catalogue(catalogue)
    lines = [".. list-table::", "   :header-rows: 1", "   :widths: 20 35 45", "",
             "   * - name", "     - call", "     - what it is"]
    for name in table_names(key):
        reg = entries[name]
        text = summary(reg.obj) if "description" not in reg.extra else summary_text(reg.extra["description"])
        lines += [f"   * - ``{name}``", f"     - ``{call}({name!r})``", f"     - {text or '(no docstring)'}"]
    return lines


def resolve(namespace, name):
    obj = __import__("importlib").import_module(namespace.split(".")[0])
    for part in namespace.split(".")[1:] + [name]:
        obj = getattr(obj, part)
    return obj


def _signature(obj):
    """``(a, b=1, *, c=None)``: names and short defaults only (annotations would need references)."""
    try:
        params = [p for p in inspect.signature(obj).parameters.values() if p.name != "self"]
    except (TypeError, ValueError):
        return "(...)"
    parts, star = [], False
    for i, p in enumerate(params):
        if p.kind == p.KEYWORD_ONLY and not star:
            parts.append("*")
        star = star or p.kind in (p.KEYWORD_ONLY, p.VAR_POSITIONAL)
        text = {p.VAR_POSITIONAL: "*", p.VAR_KEYWORD: "**"}.get(p.kind, "") + p.name
        if p.default is not p.empty:
            value = repr(p.default)
            text += "=" + (value if len(value) < 30 and "<" not in value else "...")
        parts.append(text)
        if p.kind == p.POSITIONAL_ONLY and (i + 1 == len(params) or params[i + 1].kind != p.POSITIONAL_ONLY):
            parts.append("/")
    return "(" + ", ".join(parts) + ")"


def summary(obj):
    """The docstring's first paragraph as one line of safe reStructuredText."""
    doc = inspect.getdoc(obj) or ""
    if inspect.getdoc(type(obj)) == doc and not inspect.isclass(obj) and not callable(obj):
        doc = ""  # a constant's class docstring says nothing about the constant
    return summary_text(doc)


def summary_text(doc):
    """The first paragraph of ``doc`` as one line of safe reStructuredText."""
    para = " ".join(doc.strip().split("\n\n")[0].split())
    if para.startswith(">>>"):
        return ""
    para = re.sub(r":[\w:]+:`~?([^`]+)`", r"``\1``", para)
    if para.count("``") % 2:
        para = para.replace("`", "")
    pieces = re.split(r"(``.+?``)", para)
    for i in range(0, len(pieces), 2):  # outside inline literals: markup becomes text
        text = pieces[i].replace("\\", "\\\\").replace("`", "").replace("*", r"\*").replace("|", r"\|")
        pieces[i] = re.sub(r"(\w)_(?=\W|$)", r"\1\\_", text)
        if i and re.match(r"\w", pieces[i]):  # ``Subset``s: a literal needs a break before a letter
            pieces[i] = "\\ " + pieces[i]
    para = "".join(pieces)
    return para[:-1] if para.endswith("::") else para


def _directive(namespace, name, obj):
    if namespace == "ember.Tensor":
        static = inspect.getattr_static(obj_owner(namespace), name)
        if isinstance(static, property):
            return "py:property", ""
        return ("py:method", _signature(obj)) if callable(obj) else ("py:attribute", "")
    if inspect.isclass(obj):
        return "py:class", _signature(obj)
    if callable(obj):
        return "py:function", _signature(obj)
    return "py:data", ""


def obj_owner(namespace):
    return resolve(namespace.rsplit(".", 1)[0], namespace.rsplit(".", 1)[1])


def group_rst(key):
    """The group's entries as reStructuredText lines."""
    if key in TABLES:
        return table_rst(key)
    title, namespace, names = GROUPS[key]
    lines = []
    for name in names():
        obj = resolve(namespace, name)
        kind, sig = _directive(namespace, name, obj)
        lines += [f".. {kind}:: {namespace}.{name}{sig}"]
        if f"{namespace}.{name}" in sys.modules:  # ember.tensor the function, not the module api.rst documents
            lines += ["   :no-index:"]
        lines += [""]
        text = summary(obj)
        if text:
            lines += [f"   {text}", ""]
    return lines


def setup(app):
    from docutils import nodes
    from docutils.statemachine import StringList
    from sphinx.util.docutils import SphinxDirective

    class PublicNames(SphinxDirective):
        """One entry per public name of a group."""

        required_arguments = 1

        def run(self):
            self.env.note_dependency(__file__)  # a change here re-reads the page
            container = nodes.container()
            self.state.nested_parse(StringList(group_rst(self.arguments[0]), f"<ember-api {self.arguments[0]}>"),
                                    0, container)
            return container.children

    app.add_directive("ember-api", PublicNames)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
