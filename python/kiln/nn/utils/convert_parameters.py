"""torch.nn.utils.convert_parameters: the module parameters_to_vector / vector_to_parameters live in
(`from torch.nn.utils.convert_parameters import parameters_to_vector`)."""
from . import parameters_to_vector, vector_to_parameters  # noqa: F401
