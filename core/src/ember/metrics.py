"""``ember.metrics``: the metric classes plugins register (``Accuracy``, ``F1Score``,
``MeanAveragePrecision``, ...), found by name.

PyTorch counterpart: none in torch; torchmetrics/__init__.py (torchmetrics 1.9), the
package beside PyTorch these names come from. The metrics live in the ember-metrics
distribution (``ember_metrics``), registered through ``ember_register_metrics``; this
namespace looks a name up in the "metrics" catalogue, so the core and the zoo reach them
without importing the plugin (the YOLO zoo's mAP, the trainer's ``--metrics``). A name
ember-metrics provides, when it is not installed, raises an AttributeError naming it.
"""

from ember.plugins import forwarding as _forwarding

DISTRIBUTION = _forwarding.METRICS
FIRST_PARTY = frozenset(_forwarding.PROVIDED_BY["metrics"])

__getattr__, __dir__ = _forwarding.forwarder(__name__)  # NOTE [ Forwarding modules ]
