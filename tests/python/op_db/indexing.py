"""Records of the indexing ops."""
RECORDS = []
