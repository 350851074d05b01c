"""Every generated autograd Node class has its own C++ name. Two classes of one name in different
files break the one-definition rule: the linker keeps one vtable for both, and the other node's
apply() runs the wrong code (a shown name given twice in derivatives.yaml, NativeBatchNormBackward0
for _batch_norm_train and _batch_norm_eval, once did that)."""
import collections
import os
import re

REPO = os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))


def test_node_class_names_are_unique():
    where = collections.defaultdict(list)
    folder = os.path.join(REPO, "generated", "autograd")
    for name in sorted(os.listdir(folder)):
        if name.endswith(".cc"):
            with open(os.path.join(folder, name)) as f:
                for cls in re.findall(r"^struct (\w+) final : Node \{", f.read(), re.M):
                    where[cls].append(name)
    assert len(where) > 100
    duplicates = {cls: files for cls, files in where.items() if len(files) > 1}
    assert not duplicates, duplicates


def test_a_shown_name_given_twice_keeps_grad_fn_names():
    with open(os.path.join(REPO, "generated", "autograd", "_batch_norm_eval.cc")) as f:
        text = f.read()
    assert "struct NativeBatchNormForBatchNormEvalBackward0 final : Node {" in text
    assert 'std::string name() const override { return "NativeBatchNormBackward0"; }' in text
