"""Records of the reduction ops."""
RECORDS = []
