"""Records of the factory ops."""
RECORDS = []
