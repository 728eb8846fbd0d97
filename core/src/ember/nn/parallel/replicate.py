"""``replicate``: copies of a module, one per device, whose parameters stay differentiable views
of the original's, so gradients of every replica flow back into the original parameters.

PyTorch counterpart: torch/nn/parallel/replicate.py (v2.13). torch broadcasts the
parameters with an autograd function (``Broadcast``); ember copies each parameter to
its device with a differentiable ``to`` (``clone`` on the original's own device), which
has the same backward: the sum of the replicas' gradients.
"""

import copy


def _copy_to(tensor, device, detach):
    import ember

    moved = tensor.to(device) if ember.device(device) != tensor.device else tensor.clone()
    return moved.detach() if detach else moved


def replicate(network, devices, detach=False):
    """``len(devices)`` copies of ``network``; parameters of copy i live on ``devices[i]``."""
    import ember

    replicas = []
    for device in devices:
        memo = {}
        for module in network.modules():
            clone = copy.copy(module)  # shallow: shares everything but the three dicts below
            object.__setattr__(clone, "_parameters", dict(module._parameters))
            object.__setattr__(clone, "_buffers", dict(module._buffers))
            object.__setattr__(clone, "_modules", dict(module._modules))
            memo[id(module)] = clone
        for module in network.modules():
            clone = memo[id(module)]
            for name, child in module._modules.items():
                clone._modules[name] = None if child is None else memo[id(child)]
            for name, param in module._parameters.items():
                if param is not None:
                    with ember.enable_grad():
                        clone._parameters[name] = _copy_to(param, device, detach or not param.requires_grad)
            for name, buffer in module._buffers.items():
                if buffer is not None:
                    clone._buffers[name] = buffer.detach().to(device) if buffer.device != ember.device(device) \
                        else buffer
        replicas.append(memo[id(network)])
    return replicas
