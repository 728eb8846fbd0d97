"""The attention maps of the attention ResNets, drawn by ``ember predict --explain``.

PyTorch counterpart: none in torch; what a PyTorch user writes with forward hooks
(``register_forward_pre_hook``, ``register_forward_hook``) and ``torch.autograd.grad``.
Grad-CAM follows Selvaraju et al., Grad-CAM: Visual Explanations from Deep Networks via
Gradient-based Localization, ICCV 2017.

# NOTE [ Which attention map is drawn ]
# CBAM and coordinate attention compute a spatial map themselves: for CBAM it is each
# block's spatial gate, (N, 1, h, w) (NOTE [ CBAM's two gates ]); for coordinate
# attention the product of the row and column gates, a_h * a_w, averaged over the
# channels (NOTE [ Coordinate attention ]). Forward pre-hooks catch each gate's input
# during one forward pass, and the gate recomputes its map from it.
# SE and ECA gate channels only: they have no "where" to draw. For them the map is
# Grad-CAM of each block's output: the block's channels weighted by the mean gradient of
# the predicted class's logit over the map, summed, and clipped at 0 (the regions whose
# features raise the winning logit). A forward hook catches the outputs and
# ``ember.autograd.grad`` gives their gradients (the parameters' ``.grad`` stay as
# they were).
# Either way every block gives a map at its own resolution (8x8, 4x4 and 2x2 for the 8x8
# digits in ResNet-8): each is scaled bilinearly to the image's size, the blocks' maps
# averaged, and the result stretched to [0, 1] per image.
"""

import ember
import ember.nn.functional as F
from ember_zoo_resnet.attention import CBAM
from ember_zoo_resnet.attention_cifar import AttentionBasicBlock

DESCRIPTIONS = {
    "cbam": "CBAM's spatial gate",
    "ca": "coordinate attention's row x column gates, mean over channels",
    "se": "Grad-CAM of the predicted class (SE gates channels only)",
    "eca": "Grad-CAM of the predicted class (ECA gates channels only)",
}


def attention_maps(model, images):
    """``(maps, how)``: (N, 1, H, W) maps in [0, 1] for ``images`` (N, C, H, W), averaged
    over the blocks, and a line saying which map they are."""
    blocks = [module for module in model.modules() if isinstance(module, AttentionBasicBlock)]
    per_block = grad_cams(model, blocks, images) if model.attention in ("se", "eca") else gate_maps(model, blocks,
                                                                                                  images)
    size = tuple(images.shape[-2:])
    resized = [F.interpolate(block_map, size=size, mode="bilinear", align_corners=False) for block_map in per_block]
    how = f"{DESCRIPTIONS[model.attention]}; mean of {len(blocks)} blocks, scaled to [0, 1] per image"
    return stretch(ember.stack(resized).mean(0)), how


def gate_maps(model, blocks, images):
    """Each block's spatial map from its own gate (CBAM, coordinate attention)."""
    gates = [block.gate().SpatialGate if isinstance(block.gate(), CBAM) else block.gate() for block in blocks]
    inputs = [None] * len(gates)
    handles = [gate.register_forward_pre_hook(_keep_input(inputs, index)) for index, gate in enumerate(gates)]
    try:
        with ember.no_grad():
            model(images)
            return [_spatial_map(gate, x) for gate, x in zip(gates, inputs)]
    finally:
        for handle in handles:
            handle.remove()


def _keep_input(inputs, index):
    def hook(module, args):
        inputs[index] = args[0]

    return hook


def _spatial_map(gate, x):
    if hasattr(gate, "attention_map"):  # CBAM's SpatialGate
        return gate.attention_map(x)
    rows, columns = gate.attention_maps(x)  # coordinate attention
    return (rows * columns).mean(dim=1, keepdim=True)


def grad_cams(model, blocks, images):
    """Grad-CAM of each block's output for each image's predicted class."""
    outputs = []
    handles = [block.register_forward_hook(_keep_output(outputs)) for block in blocks]
    try:
        with ember.enable_grad():
            logits = model(images)
            # (each image's logit depends only on its own features in eval mode, so one
            # backward of the sum gives every image its own gradient)
            score = logits.gather(1, logits.argmax(dim=1, keepdim=True)).sum()
            gradients = ember.autograd.grad(score, outputs)
    finally:
        for handle in handles:
            handle.remove()
    cams = []
    for output, gradient in zip(outputs, gradients):
        weights = gradient.mean(dim=(2, 3), keepdim=True)  # one per channel and image
        cams.append((weights * output).sum(dim=1, keepdim=True).relu().detach())
    return cams


def _keep_output(outputs):
    def hook(module, args, output):
        outputs.append(output)

    return hook


def stretch(maps):
    """Each (1, H, W) map of ``maps`` scaled to [0, 1] (a constant map becomes 0)."""
    low = maps.amin(dim=(1, 2, 3), keepdim=True)
    span = maps.amax(dim=(1, 2, 3), keepdim=True) - low
    return (maps - low) / span.clamp(min=1e-12)
