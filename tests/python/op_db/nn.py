"""Records of the nn ops."""
RECORDS = []
