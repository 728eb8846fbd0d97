"""The core's own plugin: it registers every ``aten::`` op (and ``native::`` stub) and the core's module
classes through the same hooks a third-party plugin uses.

PyTorch counterpart: aten/src/ATen/native/native_functions.yaml, whose entries the
dispatcher loads at start-up (v2.13).
"""

from ember.plugins import hookimpl


@hookimpl
def ember_register_ops(register):
    from ember import dispatcher
    from ember.native import all_modules

    all_modules()
    for op in list(dispatcher._ALL_OPS):
        # plugin == "ember" marks the core's own ops; an "aten::" op made elsewhere
        # (plugin=None) must go through its own plugin, where a clash is reported. The
        # "native::" ops are the dispatch stubs (support/dispatch_stub.py): registered so
        # that a plugin can serve them by name (ember_register_kernels).
        if op.namespace in ("aten", "native") and op.plugin == "ember":
            register(op)


# The core's module classes, as "module:Class" import paths: the registry imports
# them on first need. Engineers adding a core layer add its path here.
CORE_MODULES = (
    "ember.nn.modules.module:Module",
    "ember.nn.modules.container:Sequential",
    "ember.nn.modules.container:ModuleList",
    "ember.nn.modules.container:ModuleDict",
    "ember.nn.modules.container:ParameterList",
    "ember.nn.modules.container:ParameterDict",
    # dense layers, embedding, dropout, attention
    "ember.nn.modules.linear:Identity",
    "ember.nn.modules.linear:Linear",
    "ember.nn.modules.linear:LazyLinear",
    "ember.nn.modules.linear:Bilinear",
    "ember.nn.modules.flatten:Flatten",
    "ember.nn.modules.flatten:Unflatten",
    "ember.nn.modules.dropout:Dropout",
    "ember.nn.modules.dropout:Dropout1d",
    "ember.nn.modules.dropout:Dropout2d",
    "ember.nn.modules.dropout:Dropout3d",
    "ember.nn.modules.dropout:AlphaDropout",
    "ember.nn.modules.dropout:FeatureAlphaDropout",
    "ember.nn.modules.sparse:Embedding",
    "ember.nn.modules.sparse:EmbeddingBag",
    "ember.nn.modules.activation:MultiheadAttention",
    "ember.nn.modules.transformer:Transformer",
    "ember.nn.modules.transformer:TransformerEncoder",
    "ember.nn.modules.transformer:TransformerDecoder",
    "ember.nn.modules.transformer:TransformerEncoderLayer",
    "ember.nn.modules.transformer:TransformerDecoderLayer",
    # recurrent layers
    "ember.nn.modules.rnn:RNN",
    "ember.nn.modules.rnn:LSTM",
    "ember.nn.modules.rnn:GRU",
    "ember.nn.modules.rnn:RNNCell",
    "ember.nn.modules.rnn:LSTMCell",
    "ember.nn.modules.rnn:GRUCell",
    "ember.nn.modules.rnn:RNNBase",
    "ember.nn.modules.rnn:RNNCellBase",
    "ember.nn.modules.pixelshuffle:PixelShuffle",
    "ember.nn.modules.pixelshuffle:PixelUnshuffle",
    "ember.nn.modules.channelshuffle:ChannelShuffle",
    "ember.nn.modules.distance:PairwiseDistance",
    "ember.nn.modules.distance:CosineSimilarity",
    # convolution, pooling, padding, upsampling, folding
    "ember.nn.modules.conv:Conv1d",
    "ember.nn.modules.conv:Conv2d",
    "ember.nn.modules.conv:ConvTranspose1d",
    "ember.nn.modules.conv:ConvTranspose2d",
    "ember.nn.modules.conv:Conv3d",
    "ember.nn.modules.conv:ConvTranspose3d",
    "ember.nn.modules.conv:LazyConv1d",
    "ember.nn.modules.conv:LazyConv2d",
    "ember.nn.modules.conv:LazyConv3d",
    "ember.nn.modules.conv:LazyConvTranspose1d",
    "ember.nn.modules.conv:LazyConvTranspose2d",
    "ember.nn.modules.conv:LazyConvTranspose3d",
    "ember.nn.modules.pooling:MaxPool1d",
    "ember.nn.modules.pooling:MaxPool2d",
    "ember.nn.modules.pooling:AvgPool1d",
    "ember.nn.modules.pooling:AvgPool2d",
    "ember.nn.modules.pooling:AdaptiveAvgPool1d",
    "ember.nn.modules.pooling:AdaptiveAvgPool2d",
    "ember.nn.modules.pooling:AdaptiveMaxPool1d",
    "ember.nn.modules.pooling:AdaptiveMaxPool2d",
    "ember.nn.modules.pooling:MaxPool3d",
    "ember.nn.modules.pooling:AvgPool3d",
    "ember.nn.modules.pooling:AdaptiveAvgPool3d",
    "ember.nn.modules.pooling:AdaptiveMaxPool3d",
    "ember.nn.modules.pooling:LPPool1d",
    "ember.nn.modules.pooling:LPPool2d",
    "ember.nn.modules.pooling:LPPool3d",
    "ember.nn.modules.pooling:MaxUnpool1d",
    "ember.nn.modules.pooling:MaxUnpool2d",
    "ember.nn.modules.pooling:MaxUnpool3d",
    "ember.nn.modules.pooling:FractionalMaxPool2d",
    "ember.nn.modules.pooling:FractionalMaxPool3d",
    "ember.nn.modules.padding:ZeroPad1d",
    "ember.nn.modules.padding:ZeroPad2d",
    "ember.nn.modules.padding:ConstantPad1d",
    "ember.nn.modules.padding:ConstantPad2d",
    "ember.nn.modules.padding:ReflectionPad1d",
    "ember.nn.modules.padding:ReflectionPad2d",
    "ember.nn.modules.padding:ReplicationPad1d",
    "ember.nn.modules.padding:ReplicationPad2d",
    "ember.nn.modules.padding:CircularPad1d",
    "ember.nn.modules.padding:CircularPad2d",
    "ember.nn.modules.padding:ZeroPad3d",
    "ember.nn.modules.padding:ConstantPad3d",
    "ember.nn.modules.padding:ReflectionPad3d",
    "ember.nn.modules.padding:ReplicationPad3d",
    "ember.nn.modules.padding:CircularPad3d",
    "ember.nn.modules.upsampling:Upsample",
    "ember.nn.modules.upsampling:UpsamplingNearest2d",
    "ember.nn.modules.upsampling:UpsamplingBilinear2d",
    "ember.nn.modules.fold:Fold",
    "ember.nn.modules.fold:Unfold",
)


@hookimpl
def ember_register_modules(register):
    from importlib import import_module

    for path in CORE_MODULES:
        module_name, class_name = path.split(":")
        register(getattr(import_module(module_name), class_name))
