"""``ember.nn.utils.spectral_norm``: spectral normalisation the pre-parametrization way,
a forward pre-hook that sets ``weight = weight_orig / sigma`` before every call.

PyTorch counterpart: torch/nn/utils/spectral_norm.py (``SpectralNorm``,
``spectral_norm``, ``remove_spectral_norm``, the load-state-dict pre-hook) (v2.13).

The module keeps ``weight_orig`` (a Parameter) and the buffers ``weight_u`` and
``weight_v``, the power iteration's vectors, so its state dict holds
``weight_orig``, ``weight_u``, ``weight_v`` and no ``weight``, as torch's. In training
mode each forward first moves ``v`` then ``u`` one power-iteration step (in place, in
the buffers), then divides by ``sigma = u . (W v)``; in eval mode ``u`` and ``v`` stay
as they are. ``parametrizations.spectral_norm`` is the newer form (u then v, state under
``parametrizations.weight``). ember leaves out the state-dict hook that writes
``spectral_norm`` version metadata: a state dict ember writes loads as a version-1 one
(weight_orig, weight_u and weight_v all there), which is what torch's writes today.
"""

from ember.autograd.grad_mode import no_grad
from ember.native.distance import normalize
from ember.nn.parameter import Parameter

__all__ = ["SpectralNorm", "remove_spectral_norm", "spectral_norm"]


class SpectralNorm:
    """The forward pre-hook: ``module.<name> = <name>_orig / sigma`` before each forward."""

    _version = 1

    def __init__(self, name="weight", n_power_iterations=1, dim=0, eps=1e-12):
        if n_power_iterations <= 0:
            raise ValueError("Expected n_power_iterations to be positive, but "
                             f"got n_power_iterations={n_power_iterations}")
        self.name = name
        self.dim = dim
        self.n_power_iterations = n_power_iterations
        self.eps = eps

    def reshape_weight_to_matrix(self, weight):
        """``weight`` with ``dim`` first, flattened to (size of dim, everything else)."""
        if self.dim != 0:
            weight = weight.permute(self.dim, *(d for d in range(weight.ndim) if d != self.dim))
        return weight.reshape(weight.shape[0], -1)

    def compute_weight(self, module, do_power_iteration):
        weight = getattr(module, self.name + "_orig")
        u, v = getattr(module, self.name + "_u"), getattr(module, self.name + "_v")
        matrix = self.reshape_weight_to_matrix(weight)
        if do_power_iteration:
            with no_grad():
                for _ in range(self.n_power_iterations):  # v first, then u (the buffers, in place)
                    v.copy_(normalize(matrix.t().mv(u), dim=0, eps=self.eps))
                    u.copy_(normalize(matrix.mv(v), dim=0, eps=self.eps))
            u, v = u.clone(), v.clone()  # backward must not see the next step's in-place update
        sigma = u.dot(matrix.mv(v))
        return weight / sigma

    def remove(self, module):
        with no_grad():
            weight = self.compute_weight(module, do_power_iteration=False)
        delattr(module, self.name)
        delattr(module, self.name + "_u")
        delattr(module, self.name + "_v")
        delattr(module, self.name + "_orig")
        module.register_parameter(self.name, Parameter(weight.detach()))

    def __call__(self, module, inputs):
        setattr(module, self.name, self.compute_weight(module, do_power_iteration=module.training))

    def _solve_v_and_rescale(self, matrix, u, target_sigma):
        """The ``v`` with ``u . (W v) == target_sigma`` (least squares), for old state dicts."""
        from ember.linalg import multi_dot

        v = multi_dot([matrix.t().mm(matrix).pinverse(), matrix.t(), u.unsqueeze(1)]).squeeze(1)
        return v.mul_(target_sigma / u.dot(matrix.mv(v)))

    @staticmethod
    def apply(module, name, n_power_iterations, dim, eps):
        for hook in module._forward_pre_hooks.values():
            if isinstance(hook, SpectralNorm) and hook.name == name:
                raise RuntimeError(f"Cannot register two spectral_norm hooks on the same parameter {name}")
        fn = SpectralNorm(name, n_power_iterations, dim, eps)
        weight = module._parameters[name]
        if weight is None:
            raise ValueError(f"`SpectralNorm` cannot be applied as parameter `{name}` is None")
        with no_grad():
            h, w = fn.reshape_weight_to_matrix(weight).shape
            # torch's draws, in torch's order: the same u and v after the same seed
            u = normalize(weight.new_empty(h).normal_(0, 1), dim=0, eps=fn.eps)
            v = normalize(weight.new_empty(w).normal_(0, 1), dim=0, eps=fn.eps)
        delattr(module, fn.name)
        module.register_parameter(fn.name + "_orig", weight)
        setattr(module, fn.name, weight.detach())
        module.register_buffer(fn.name + "_u", u)
        module.register_buffer(fn.name + "_v", v)
        module.register_forward_pre_hook(fn)
        module.register_load_state_dict_pre_hook(_OldStateDicts(fn))
        return fn


class _OldStateDicts:
    """Load a state dict saved before version 1 (``weight`` and ``weight_u``, no
    ``weight_v``): recover ``v`` from sigma = weight_orig / weight, as torch's pre-hook."""

    def __init__(self, fn):
        self.fn = fn

    def __call__(self, module, state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys,
                 error_msgs):
        fn, key = self.fn, prefix + self.fn.name
        version = local_metadata.get("spectral_norm", {}).get(fn.name + ".version", None)
        if version is not None and version >= 1:
            return
        if version is None and all(key + s in state_dict for s in ("_orig", "_u", "_v")) and key not in state_dict:
            return  # today's layout, saved without metadata
        missing = [key + s for s in ("_orig", "", "_u") if key + s not in state_dict]
        if missing:
            if strict:
                missing_keys.extend(missing)
            return
        with no_grad():
            weight_orig = state_dict[key + "_orig"]
            sigma = (weight_orig / state_dict.pop(key)).mean()
            matrix = fn.reshape_weight_to_matrix(weight_orig)
            state_dict[key + "_v"] = fn._solve_v_and_rescale(matrix, state_dict[key + "_u"], sigma)


def spectral_norm(module, name="weight", n_power_iterations=1, eps=1e-12, dim=None):
    """Divide ``module.<name>`` by its largest singular value before every forward (a
    pre-hook; ``dim``: the output dimension, 1 for transposed convolutions, else 0).
    Returns ``module``."""
    if dim is None:
        from ember.nn import ConvTranspose1d, ConvTranspose2d, ConvTranspose3d

        dim = 1 if isinstance(module, (ConvTranspose1d, ConvTranspose2d, ConvTranspose3d)) else 0
    SpectralNorm.apply(module, name, n_power_iterations, dim, eps)
    return module


def remove_spectral_norm(module, name="weight"):
    """Take the hook off: ``module.<name>`` becomes a Parameter again, holding the
    normalised weight (no power iteration). Returns ``module``."""
    for key, hook in list(module._forward_pre_hooks.items()):
        if isinstance(hook, SpectralNorm) and hook.name == name:
            hook.remove(module)
            del module._forward_pre_hooks[key]
            break
    else:
        raise ValueError(f"spectral_norm of '{name}' not found in {module}")
    for key, hook in list(module._load_state_dict_pre_hooks.items()):
        if isinstance(hook, _OldStateDicts) and hook.fn.name == name:
            del module._load_state_dict_pre_hooks[key]
            break
    return module
