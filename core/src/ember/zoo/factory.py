"""``create_model``: build a registered model by name, optionally with weights.

PyTorch counterpart: torchvision/models/_api.py ``get_model`` (v0.28) and timm's
``_factory.py`` ``create_model``; weights come from local files only (ember/zoo/weights.py).
"""

from ember.zoo.registry import model_info
from ember.zoo.weights import find_weights, read_checkpoint


def create_model(name, pretrained=False, **overrides):
    """Build the model registered as ``name``.

    Args:
        name: a name from ``list_models()``.
        pretrained: False (fresh initialisation), True (the model's named weight file
            from the weights cache, see ``ember.zoo.weights``), or a path to an ember or
            PyTorch checkpoint (a state dict, or ember's training checkpoint).
        **overrides: builder keywords, e.g. ``num_classes=10``. A training checkpoint
            records the keywords its model was built with (``model_overrides``); those
            are used unless given here.

    >>> model = ember.zoo.create_model("resnet8_cifar", num_classes=10)   # doctest: +SKIP
    """
    info = model_info(name)
    if pretrained is False or pretrained is None:
        return info.builder(**overrides)
    path = find_weights(info) if pretrained is True else pretrained
    state_dict, checkpoint = read_checkpoint(path)
    if checkpoint is not None:
        overrides = {**checkpoint.get("model_overrides", {}), **overrides}
    model = info.builder(**overrides)
    model.load_state_dict(state_dict)
    return model
