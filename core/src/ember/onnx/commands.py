"""``ember export``: write a zoo model (with a checkpoint's weights) as an ONNX model or an
ember-jit file.

PyTorch counterpart: none in torch (the closest is a script calling
``torch.onnx.export``); registered in ember/cli.py (NOTE [ Adding a subcommand ]).

    $ ember export resnet8_cifar --weights runs/digits/checkpoint.pt --format onnx --out resnet8.onnx
    $ ember export gpt_nano --format ember-jit --out gpt.ejit
"""

import inspect

from ember.cli import whole_number


def example_inputs(model, info, batch, input_size=None):
    """Inputs for one trace: images of ``input_size`` (default the model's), or token ids
    (zeros, a valid symbol for every vocabulary) of its sequence length, for each required
    argument."""
    import ember

    parameters = [p for p in list(inspect.signature(type(model).forward).parameters.values())[1:]
                  if p.default is p.empty and p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    size = tuple(input_size or info.input_size or (8,))
    if len(size) == 3:
        return tuple(ember.randn(batch, *size) for _ in parameters), [p.name for p in parameters]
    return tuple(ember.zeros(batch, size[0], dtype=ember.int64) for _ in parameters), [p.name for p in parameters]


def _trained_input_size(weights):
    """The input shape a checkpoint of ``ember train`` was trained on (its data's), or None:
    resnet8_cifar trained on the digits takes 1x8x8 images, not the model's 3x32x32."""
    if not weights:
        return None
    from ember.zoo.weights import read_checkpoint

    _, checkpoint = read_checkpoint(weights)
    shape = ((checkpoint or {}).get("data") or {}).get("input_shape")
    return tuple(shape) if shape else None


def cmd_export(args):
    import ember
    from ember.cli import CommandError

    info = ember.zoo.model_info(args.model)
    model = ember.zoo.create_model(args.model, pretrained=args.weights or False).eval()
    inputs, names = example_inputs(model, info, args.batch, _trained_input_size(args.weights))
    if args.format == "onnx":
        dynamic = None if args.static else {n: {0: "batch"} for n in names}
        try:
            ember.onnx.export(model, inputs, args.out, input_names=names, dynamic_axes=dynamic,
                              opset_version=args.opset)
        except ImportError as exc:
            raise CommandError(str(exc)) from None
        except ember.onnx.OnnxExporterError as exc:
            raise CommandError(f"{exc}; try --format ember-jit, or --static") from None
        except ember.jit.TracingError as exc:
            raise CommandError(str(exc)) from None
    else:
        try:
            with ember.no_grad():
                ember.jit.save(ember.jit.trace(model, inputs), args.out)
        except (ember.jit.TracingError, ember.jit.JitFormatError) as exc:
            raise CommandError(str(exc)) from None
    shapes = ", ".join(f"{n} {tuple(x.shape)}" for n, x in zip(names, inputs))
    print(f"wrote {args.out} ({args.format}; {args.model}, inputs {shapes}"
          f"{'' if args.format != 'onnx' or args.static else ', dynamic batch'})")
    return 0


def add_commands(sub):
    p = sub.add_parser("export", help="write a zoo model as ONNX or an ember-jit file")
    p.add_argument("model", help="a zoo model name (ember models)")
    p.add_argument("--weights", help="checkpoint to load (default: fresh initialisation)")
    p.add_argument("--format", choices=("onnx", "ember-jit"), default="onnx")
    p.add_argument("--out", required=True, help="the file to write")
    p.add_argument("--batch", type=whole_number(1), default=1, help="batch size of the example inputs (default 1)")
    p.add_argument("--opset", type=int, default=17, help="ONNX opset version (default 17)")
    p.add_argument("--static", action="store_true", help="ONNX: keep the batch size fixed")
    p.set_defaults(func=cmd_export)
