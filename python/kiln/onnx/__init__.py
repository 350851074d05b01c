"""kiln.onnx: importable so scripts that mention torch.onnx load; exporting needs a traced graph of
the model, which comes with kiln's compiler."""


def is_in_onnx_export():
    return False


def export(model, args, f, *more, **kwargs):
    """torch.onnx.export: not implemented yet."""
    raise NotImplementedError("kiln.onnx.export: ONNX export lands with the compiler (kiln cannot trace a "
                              "model into a graph yet); save the weights with kiln.save_file instead")
