"""``create_model``: build a registered model by name, optionally with weights.

PyTorch counterpart: torchvision/models/_api.py ``get_model`` (v0.28) and timm's
``_factory.py`` ``create_model``; weights come from local files only (ember/zoo/weights.py).
"""


from ember.nn.init import structure_only
from ember.zoo.errors import ZooError
from ember.zoo.quantizable import apply_recorded_compression
from ember.zoo.registry import list_models, model_info
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

    >>> import ember
    >>> model = ember.zoo.create_model("resnet8_cifar", num_classes=10)
    """
    info = model_info(name)
    if pretrained is False or pretrained is None:
        return info.builder(**overrides)
    path = find_weights(info) if pretrained is True else pretrained
    state_dict, checkpoint = read_checkpoint(path)
    if checkpoint is not None:
        recorded = checkpoint.get("model_overrides") or {}
        try:
            model = info.builder(**{**recorded, **overrides})
        except TypeError as exc:  # the file's keywords are another builder's
            if not recorded:
                raise
            message = _builder_mismatch(name, path, checkpoint, recorded, exc)
            raise ZooError(message) from exc
    else:
        model = info.builder(**overrides)
    model = apply_recorded_compression(model, checkpoint)  # int8 layers, if compressed
    try:
        model.load_state_dict(state_dict)
    # keys or shapes that do not match: say what the file holds instead
    except RuntimeError as exc:
        raise ZooError(_mismatch_message(name, path, model, state_dict, checkpoint,
                                         exc)) from exc
    return model


def _builder_mismatch(name, path, checkpoint, recorded, exc):
    trained = checkpoint.get("model_name")
    if trained is not None and trained != name:
        return f"{str(path)!r} is a checkpoint of model {trained!r}, not {name!r}"
    return (f"{str(path)!r} records builder keywords {sorted(recorded)} that model {name!r} does not take "
            f"({exc})")


def _mismatch_message(name, path, model, state_dict, checkpoint, exc):
    trained = (checkpoint or {}).get("model_name")
    if trained is not None and trained != name:
        return f"{str(path)!r} is a checkpoint of model {trained!r}, not {name!r}"
    expected = model.state_dict()
    if set(state_dict) == set(expected):  # same layers, other sizes (e.g. another num_classes)
        key = next(k for k in expected if tuple(expected[k].shape) != tuple(state_dict[k].shape))
        return (f"{str(path)!r} does not fit model {name!r}: {key} has shape {list(state_dict[key].shape)} "
                f"in the file and {list(expected[key].shape)} in the model (build it with the file's sizes, "
                f"e.g. num_classes=...)")
    like = looks_like(state_dict, skip=name)
    hint = f"; it looks like a checkpoint of {like!r}" if like else "; it matches no model of the zoo"
    common = len(set(expected) & set(state_dict))
    return (f"{str(path)!r} is not a checkpoint of model {name!r} (the file has {len(state_dict)} parameter and "
            f"buffer names, the model {len(expected)}, {common} in common){hint}")


def looks_like(state_dict, skip=None):
    """The name of the zoo model whose parameters and buffers have the names and shapes
    of ``state_dict``'s, or None.

    Builds each candidate model (an error path) with its random fills skipped (NOTE
    [ Building a model for its structure only ] in ember/nn/init.py) and compares names
    and shapes (wide_resnet101_2 has resnet101's names); drawing the ImageNet-size
    ResNets' weights would take seconds each. Every candidate is tried, so the answer
    does not depend on the machine's speed.
    """
    shapes = _shapes(state_dict)
    for candidate in sorted(n for n in list_models() if n != skip):
        try:
            with structure_only():
                built = model_info(candidate).builder()
        except Exception:  # a builder that needs arguments cannot be compared
            continue
        if _shapes(built.state_dict()) == shapes:
            return candidate
    return None


def _shapes(state_dict):
    return {key: tuple(getattr(value, "shape", ())) for key, value in state_dict.items()}
