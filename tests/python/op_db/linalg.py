"""Records of the linalg ops."""
RECORDS = []
