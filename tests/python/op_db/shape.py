"""Records of the shape ops."""
RECORDS = []
