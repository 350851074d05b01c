"""Op test records: one for every overload of schema/native_functions.yaml.

Each family file (pointwise.py, reduction.py, ...) lists the records of its ops; RECORDS maps
the schema name ('add.Tensor') to its record. tests/python/test_op_records.py fails when an op
has no record, so a new op cannot land untested.
"""
from . import (attention, comparison, composites_more, distribution_samplers, factory, fused_backward, indexing, indexing_more, linalg, linalg_lapack, linalg_lu, nn, nn_layers,
               nn_losses, pointwise, pointwise_int_float, pointwise_math, pointwise_more, reduction, resampling, rnn, sampling, scan_distance, search_count,
               shape, shape_more, statistics, tensor_ops)

FAMILIES = [pointwise, comparison, reduction, shape, shape_more, indexing, factory, sampling, tensor_ops, linalg, nn,
            nn_layers, nn_losses, statistics, indexing_more, rnn, attention, search_count, scan_distance,
            pointwise_more, pointwise_math, pointwise_int_float, composites_more, resampling, linalg_lapack, linalg_lu,
            distribution_samplers]


def _collect():
    records = {}
    for family in FAMILIES:
        for rec in family.RECORDS:
            assert rec.name not in records, f"two records for {rec.name}"
            records[rec.name] = rec
    # The fused backward ops' records are made from their forward ops' records.
    for rec in fused_backward.records(records):
        records[rec.name] = rec
    return records


RECORDS = _collect()
