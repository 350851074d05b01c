from .module import Module
from .linear import Identity, Linear
from .activation import GELU, Hardtanh, LeakyReLU, LogSoftmax, ReLU, Sigmoid, SiLU, Softmax, Softplus, Tanh
from .container import ModuleList, Sequential
from .loss import CrossEntropyLoss, MSELoss, NLLLoss

__all__ = ["Module", "Identity", "Linear", "ReLU", "Tanh", "Sigmoid", "Softmax", "LogSoftmax",
           "GELU", "SiLU", "LeakyReLU", "Hardtanh", "Softplus",
           "Sequential", "ModuleList", "MSELoss", "NLLLoss", "CrossEntropyLoss"]
