from .module import Module
from .linear import Identity, Linear
from .activation import LogSoftmax, ReLU, Sigmoid, Softmax, Tanh
from .container import ModuleList, Sequential
from .loss import CrossEntropyLoss, MSELoss, NLLLoss

__all__ = ["Module", "Identity", "Linear", "ReLU", "Tanh", "Sigmoid", "Softmax", "LogSoftmax",
           "Sequential", "ModuleList", "MSELoss", "NLLLoss", "CrossEntropyLoss"]
