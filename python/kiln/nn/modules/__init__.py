from .module import Module
from . import utils  # noqa: F401  (torch.nn.modules.utils: _pair, _single, ...)
from .linear import Bilinear, Identity, LazyLinear, Linear
from .activation import (CELU, ELU, GELU, GLU, SELU, Hardshrink, Hardsigmoid, Hardswish, Hardtanh, LeakyReLU,
                         LogSigmoid, LogSoftmax, Mish, MultiheadAttention, PReLU, ReLU, ReLU6, RReLU, Sigmoid, SiLU, Softmax,
                         Softmin, Softplus, Softshrink, Softsign, Tanh, Tanhshrink, Threshold, Softmax2d)
from .adaptive import AdaptiveLogSoftmaxWithLoss
from .container import ModuleDict, ModuleList, ParameterDict, ParameterList, Sequential
from .conv import (Conv1d, Conv2d, Conv3d, ConvTranspose1d, ConvTranspose2d, ConvTranspose3d, LazyConv1d, LazyConv2d,
                   LazyConv3d, LazyConvTranspose1d, LazyConvTranspose2d, LazyConvTranspose3d)
from .lazy import LazyModuleMixin
from .pooling import (AdaptiveAvgPool1d, AdaptiveAvgPool2d, AdaptiveAvgPool3d, AdaptiveMaxPool1d, AdaptiveMaxPool2d,
                      AdaptiveMaxPool3d, AvgPool2d, MaxPool2d, MaxPool1d, MaxPool3d, AvgPool1d, AvgPool3d,
                      MaxUnpool1d, MaxUnpool2d, MaxUnpool3d, LPPool1d, LPPool2d, FractionalMaxPool2d,
                      FractionalMaxPool3d)
from .batchnorm import (BatchNorm1d, BatchNorm2d, BatchNorm3d, LazyBatchNorm1d, LazyBatchNorm2d, LazyBatchNorm3d,
                        SyncBatchNorm)
from .normalization import CrossMapLRN2d, GroupNorm, LayerNorm, LocalResponseNorm, RMSNorm
from .channelshuffle import ChannelShuffle
from .instancenorm import (InstanceNorm1d, InstanceNorm2d, InstanceNorm3d, LazyInstanceNorm1d, LazyInstanceNorm2d,
                           LazyInstanceNorm3d)
from .dropout import AlphaDropout, Dropout, Dropout1d, Dropout2d, Dropout3d, FeatureAlphaDropout
from .distance import CosineSimilarity, PairwiseDistance
from .padding import (ConstantPad1d, ConstantPad2d, ConstantPad3d, ReflectionPad1d, ReflectionPad2d, ReflectionPad3d,
                      ReplicationPad1d, ReplicationPad2d, ReplicationPad3d, ZeroPad1d, ZeroPad2d, ZeroPad3d,
                      CircularPad1d, CircularPad2d, CircularPad3d)
from .sparse import Embedding, EmbeddingBag
from .flatten import Flatten, Unflatten
from .upsampling import Upsample, UpsamplingBilinear2d, UpsamplingNearest2d
from .pixelshuffle import PixelShuffle, PixelUnshuffle
from .fold import Fold, Unfold
from .rnn import GRU, GRUCell, LSTM, LSTMCell, RNN, RNNBase, RNNCell, RNNCellBase
from .transformer import (Transformer, TransformerDecoder, TransformerDecoderLayer, TransformerEncoder,
                          TransformerEncoderLayer)
from .loss import (NLLLoss2d, BCELoss, BCEWithLogitsLoss, CosineEmbeddingLoss, CrossEntropyLoss, GaussianNLLLoss, HuberLoss,
                   KLDivLoss, L1Loss, MarginRankingLoss, MSELoss, MultiLabelSoftMarginLoss, NLLLoss, PoissonNLLLoss,
                   SmoothL1Loss, SoftMarginLoss, TripletMarginLoss, MultiMarginLoss, MultiLabelMarginLoss,
                   HingeEmbeddingLoss, TripletMarginWithDistanceLoss, CTCLoss)

__all__ = ["Module", "AdaptiveLogSoftmaxWithLoss", "Identity", "Linear", "ReLU", "Tanh", "Sigmoid", "Softmax", "LogSoftmax",
           "ReLU6", "Softmin", "Dropout1d", "Dropout2d", "Dropout3d", "CosineSimilarity", "PairwiseDistance",
           "ConstantPad1d", "ConstantPad2d", "ConstantPad3d", "ZeroPad1d", "ZeroPad2d", "ZeroPad3d",
           "CircularPad1d", "CircularPad2d", "CircularPad3d", "ReflectionPad1d", "ReflectionPad2d",
           "ReflectionPad3d", "ReplicationPad1d", "ReplicationPad2d", "ReplicationPad3d",
           "GELU", "SiLU", "LeakyReLU", "Hardtanh", "Softplus", "ELU", "SELU", "CELU", "Mish", "Hardswish", "Hardsigmoid",
           "GLU", "LogSigmoid", "Softsign", "Tanhshrink", "Softshrink", "Hardshrink", "Threshold", "PReLU", "RReLU",
           "MultiheadAttention",
           "Sequential", "ModuleList", "ModuleDict", "ParameterList", "ParameterDict", "Conv1d", "Conv2d", "Conv3d", "ConvTranspose1d", "ConvTranspose2d", "Bilinear", "GroupNorm", "InstanceNorm1d", "InstanceNorm2d", "InstanceNorm3d", "EmbeddingBag", "MaxPool2d", "AvgPool2d", "AdaptiveAvgPool1d", "AdaptiveAvgPool2d", "AdaptiveAvgPool3d",
           "AdaptiveMaxPool1d", "AdaptiveMaxPool2d", "AdaptiveMaxPool3d",
           "BatchNorm1d", "BatchNorm2d", "LayerNorm", "RMSNorm", "Dropout", "Embedding", "Flatten", "Unflatten",
           "Transformer", "TransformerEncoder", "TransformerDecoder", "TransformerEncoderLayer",
           "TransformerDecoderLayer", "Upsample", "UpsamplingNearest2d", "UpsamplingBilinear2d", "PixelShuffle",
           "PixelUnshuffle", "Fold", "Unfold", "RNNBase", "RNN", "LSTM", "GRU", "RNNCellBase", "RNNCell", "LSTMCell", "GRUCell",
           "MSELoss", "L1Loss", "BCELoss", "BCEWithLogitsLoss", "NLLLoss", "CrossEntropyLoss",
           "SmoothL1Loss", "HuberLoss", "KLDivLoss", "SoftMarginLoss", "MarginRankingLoss", "CosineEmbeddingLoss",
           "TripletMarginLoss", "PoissonNLLLoss", "GaussianNLLLoss", "MultiLabelSoftMarginLoss",
           "MultiMarginLoss", "MultiLabelMarginLoss", "HingeEmbeddingLoss", "TripletMarginWithDistanceLoss", "CTCLoss", "NLLLoss2d",
           "Softmax2d", "MaxPool1d", "MaxPool3d", "AvgPool1d", "AvgPool3d", "MaxUnpool1d", "MaxUnpool2d", "MaxUnpool3d",
           "LPPool1d", "LPPool2d", "FractionalMaxPool2d", "FractionalMaxPool3d", "BatchNorm3d", "SyncBatchNorm", "LocalResponseNorm", "CrossMapLRN2d", "ChannelShuffle",
           "AlphaDropout", "FeatureAlphaDropout", "ConvTranspose3d", "LazyLinear", "LazyConv1d", "LazyConv2d",
           "LazyConv3d", "LazyConvTranspose1d", "LazyConvTranspose2d", "LazyConvTranspose3d",
           "LazyBatchNorm1d", "LazyBatchNorm2d", "LazyBatchNorm3d", "LazyInstanceNorm1d", "LazyInstanceNorm2d",
           "LazyInstanceNorm3d"]
