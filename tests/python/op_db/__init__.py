"""Op test records: one for every overload of schema/native_functions.yaml.

Each family file (pointwise.py, reduction.py, ...) lists the records of its ops; RECORDS maps
the schema name ('add.Tensor') to its record. tests/python/test_op_records.py fails when an op
has no record, so a new op cannot land untested.
"""
from . import (comparison, factory, indexing, indexing_more, linalg, nn, nn_layers, pointwise, pointwise_more, composites_more, reduction,
               sampling,
               shape, shape_more, statistics, tensor_ops)

FAMILIES = [pointwise, comparison, reduction, shape, shape_more, indexing, factory, sampling, tensor_ops, linalg, nn,
            nn_layers, statistics, indexing_more, pointwise_more, composites_more]


def _collect():
    records = {}
    for family in FAMILIES:
        for rec in family.RECORDS:
            assert rec.name not in records, f"two records for {rec.name}"
            records[rec.name] = rec
    return records


RECORDS = _collect()
