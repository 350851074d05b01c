"""Records of the tensor_ops ops."""
RECORDS = []
