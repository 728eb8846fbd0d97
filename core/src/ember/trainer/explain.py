"""``ember predict --explain PNG``: each input image drawn beside the model's attention map.

PyTorch counterpart: none in torch or torchvision; what pytorch-grad-cam's
``show_cam_on_image`` and the attention papers' figures do, with Pillow only.

# NOTE [ The attention-map protocol ]
# A classifier that can show where it looks defines ``attention_maps(images)``, taking
# a batch (N, C, H, W) and returning ``(maps, how)``: maps of shape (N, 1, H, W) in
# [0, 1], one per image at the image's size, and a short line saying which map it is
# (a gate's own map, or Grad-CAM). The zoo's attention ResNets define it
# (ember_zoo_resnet/explain.py); the trainer only asks for it, as it asks a model's
# ``Task`` for everything else, and a model without it is a one-line refusal.
"""

import math

from ember.zoo.errors import ZooError

TILE = 64  # each image and map is scaled up by a whole factor to at least this many pixels a side
GAP = 4  # pixels between tiles and around the picture


def explain(model_name, weights, input, path):
    """Write the PNG at ``path`` for ``input`` (DATASET:INDICES or an image file) and return
    the line ``ember predict`` prints about it."""
    import ember
    from ember.zoo import create_model, get_task
    from ember.zoo.tasks import ClassificationTask, load_samples
    from ember.zoo.weights import read_checkpoint

    task = get_task(model_name)
    if not isinstance(task, ClassificationTask):
        raise ZooError(f"--explain draws attention maps of image classifiers; {model_name!r} is a {task.name} model")
    model = create_model(model_name, pretrained=weights)
    if not callable(getattr(model, "attention_maps", None)):
        raise ZooError(f"{model_name!r} has no attention maps to draw; --explain needs a model that defines "
                       f"attention_maps (the zoo's se_, cbam_, eca_ and ca_resnet8_cifar)")
    _, checkpoint = read_checkpoint(weights)
    samples = load_samples(input, (checkpoint or {}).get("data", {}), max_pixels=task.max_image_pixels)
    images = ember.stack([image for _, _, image in samples])
    model.eval()
    maps, how = model.attention_maps(images)
    picture = draw(images.numpy(), maps.detach().numpy()[:, 0])
    picture.save(path, format="PNG")
    return f"attention maps ({how}) of {len(samples)} image{'s' * (len(samples) != 1)}: {path}"


def draw(images, maps):
    """A Pillow image with one row per sample: the image (N, C, H, W in [0, 1]), then its
    map (N, H, W in [0, 1]) in a black-red-yellow-white scale, each scaled up by nearest
    neighbour to ``TILE`` pixels or more a side."""
    import numpy as np
    from PIL import Image

    count, channels, height, width = images.shape
    scale = max(1, math.ceil(TILE / max(height, width)))
    tile_h, tile_w = height * scale, width * scale
    canvas = np.full((count * tile_h + (count + 1) * GAP, 2 * tile_w + 3 * GAP, 3), 255, dtype=np.uint8)
    for row in range(count):
        top = GAP + row * (tile_h + GAP)
        image = images[row].transpose(1, 2, 0) if channels == 3 else np.repeat(images[row][0][..., None], 3, axis=2)
        for column, rgb in enumerate((image, heat(maps[row]))):
            left = GAP + column * (tile_w + GAP)
            pixels = np.kron(np.clip(rgb, 0, 1), np.ones((scale, scale, 1)))
            canvas[top:top + tile_h, left:left + tile_w] = np.round(pixels * 255).astype(np.uint8)
    return Image.fromarray(canvas, mode="RGB")


def heat(values):
    """(H, W) values in [0, 1] as (H, W, 3) colours from black through red and yellow to white."""
    import numpy as np

    return np.clip(np.stack([3 * values, 3 * values - 1, 3 * values - 2], axis=-1), 0, 1)
