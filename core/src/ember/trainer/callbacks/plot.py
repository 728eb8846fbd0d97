"""The run's curves drawn as one PNG at the end of ``ember train`` (``--plot``):
``OUT/curves.png``, with panels for the losses, the validation metrics and the learning rate.

PyTorch counterpart: none in torch; the picture Keras' ``History`` and Lightning's
CSVLogger are usually fed to matplotlib for. ember draws it with Pillow's ``ImageDraw``
(Pillow is already ember-data's dependency; matplotlib is not one of ember's), which is
enough for lines, dots, a frame and labels: the ranges are the data's own, each panel's
y axis labelled with its minimum and maximum, the x axis with the first and last epoch.
"""

from ember.trainer.callbacks.callback import Callback
from ember.trainer.callbacks.logger import is_number

FILE = "curves.png"
COLOURS = ((31, 119, 180), (255, 127, 14), (44, 160, 44), (214, 39, 40), (148, 103, 189), (140, 86, 75))
MARGIN = (56, 28, 16, 28)  # left, top, right, bottom, in pixels, inside each panel


class PlotCurves(Callback):
    """At the end of the run, draw ``OUT/curves.png`` (``size``: width, height in pixels)."""

    order = 1

    def __init__(self, size=(1200, 400)):
        self.size = size

    def on_train_end(self, trainer):
        if trainer.is_main and trainer.history:
            trainer.out.mkdir(parents=True, exist_ok=True)
            draw_curves(panels(trainer.history), self.size).save(trainer.out / FILE)


def panels(history):
    """``[(title, {series name: [(epoch, value), ...]})]``: losses, validation metrics, learning rate."""
    def series(names, value_of):
        return {name: [(r["epoch"], value_of(r, name)) for r in history if is_number(value_of(r, name))]
                for name in names}

    metrics = [name for name, value in history[-1]["val"].items()
               if name not in ("loss", "samples") and is_number(value)]
    return [("loss", {**series(["train/loss"], lambda r, _: r["train_loss"]),
                      **series(["val/loss"], lambda r, _: r["val"].get("loss"))}),
            ("validation", series(metrics, lambda r, name: r["val"].get(name))),
            ("learning rate", series(["lr"], lambda r, name: r.get(name)))]


def draw_curves(panel_list, size):
    """An RGB image of ``size`` with the panels side by side."""
    from PIL import Image, ImageDraw

    image = Image.new("RGB", size, "white")
    draw = ImageDraw.Draw(image)
    width = size[0] // len(panel_list)
    for index, (title, curves) in enumerate(panel_list):
        draw_panel(draw, (index * width, 0, (index + 1) * width, size[1]), title, curves)
    return image


def draw_panel(draw, box, title, curves):
    """One panel: a frame, the title, the y range and x range as labels, each curve as a line with dots."""
    left, top = box[0] + MARGIN[0], box[1] + MARGIN[1]
    right, bottom = box[2] - MARGIN[2], box[3] - MARGIN[3]
    draw.rectangle((left, top, right, bottom), outline=(160, 160, 160))
    draw.text((left, box[1] + 6), title, fill="black")
    points = [point for curve in curves.values() for point in curve]
    if not points:
        draw.text((left + 8, top + 8), "(nothing to draw)", fill=(120, 120, 120))
        return
    (x_low, x_high), (y_low, y_high) = span(p[0] for p in points), span(p[1] for p in points)
    draw.text((box[0] + 4, top), f"{y_high:.4g}", fill="black")
    draw.text((box[0] + 4, bottom - 10), f"{y_low:.4g}", fill="black")
    draw.text((left, bottom + 4), f"epoch {x_low:g}", fill="black")
    draw.text((right - 40, bottom + 4), f"{x_high:g}", fill="black")

    def place(x, y):
        return (left + (x - x_low) / (x_high - x_low) * (right - left),
                bottom - (y - y_low) / (y_high - y_low) * (bottom - top))

    for number, (name, curve) in enumerate(curves.items()):
        colour = COLOURS[number % len(COLOURS)]
        xy = [place(x, y) for x, y in curve]
        if len(xy) > 1:
            draw.line(xy, fill=colour, width=2)
        for x, y in xy:
            draw.ellipse((x - 3, y - 3, x + 3, y + 3), fill=colour)
        draw.text((right - 110, top + 6 + 12 * number), name, fill=colour)


def span(values):
    """(low, high) of ``values``, widened around a single value so that it sits mid-axis."""
    values = list(values)
    low, high = min(values), max(values)
    if low == high:
        pad = abs(low) * 0.05 or 1.0
        return low - pad, high + pad
    return low, high
