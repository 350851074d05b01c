"""nn.AdaptiveLogSoftmaxWithLoss (Grave et al., "Efficient softmax approximation for GPUs"): the
frequent classes below cutoffs[0] get a softmax of their own in the head, together with one head
entry per tail cluster; a word in cluster i costs the head's probability of the cluster times a
softmax over the cluster, computed from a projection to in_features / div_value**(i+1) dims.
Parameter names and shapes are torch's, so state_dicts interchange."""
from collections import namedtuple

from .. import functional as F
from .container import ModuleList, Sequential
from .linear import Linear
from .module import Module

_ASMoutput = namedtuple("_ASMoutput", ["output", "loss"])


class AdaptiveLogSoftmaxWithLoss(Module):
    def __init__(self, in_features, n_classes, cutoffs, div_value=4.0, head_bias=False, device=None, dtype=None):
        super().__init__()
        cutoffs = list(cutoffs)
        valid = (len(cutoffs) > 0 and all(isinstance(c, int) for c in cutoffs) and cutoffs == sorted(cutoffs)
                 and min(cutoffs) > 0 and max(cutoffs) <= n_classes - 1 and len(set(cutoffs)) == len(cutoffs))
        if len(cutoffs) == 0:
            raise ValueError("cutoffs should be a sequence of length larger than 0")
        if not valid:
            raise ValueError("cutoffs should be a sequence of unique, positive integers sorted in an increasing "
                             "order, where each value is between 1 and n_classes-1")
        self.in_features = in_features
        self.n_classes = n_classes
        self.cutoffs = cutoffs + [n_classes]
        self.div_value = div_value
        self.head_bias = head_bias
        self.shortlist_size = self.cutoffs[0]
        self.n_clusters = len(self.cutoffs) - 1
        self.head_size = self.shortlist_size + self.n_clusters
        kw = {"device": device, "dtype": dtype}
        self.head = Linear(in_features, self.head_size, bias=head_bias, **kw)
        self.tail = ModuleList()
        for i in range(self.n_clusters):
            hidden = int(in_features // (div_value ** (i + 1)))
            size = self.cutoffs[i + 1] - self.cutoffs[i]
            self.tail.append(Sequential(Linear(in_features, hidden, bias=False, **kw),
                                        Linear(hidden, size, bias=False, **kw)))

    def reset_parameters(self):
        self.head.reset_parameters()
        for projection, output in self.tail:
            projection.reset_parameters()
            output.reset_parameters()

    def forward(self, input_, target_):
        """(log-probability of each target, mean negative log-likelihood) as `_ASMoutput(output, loss)`."""
        if target_.dim() == 1:
            if input_.size(0) != target_.size(0):
                raise RuntimeError("Input and target should have the same size in the batch dimension.")
            if input_.dim() != 2:
                raise RuntimeError(f"1D target tensor expects 2D input tensors, but found inputs with size "
                                   f"{input_.size()}")
        elif target_.dim() == 0:
            if input_.dim() != 1:
                raise RuntimeError(f"0D target tensor expects 1D input tensors, but found inputs with size "
                                   f"{input_.size()}")
        else:
            raise RuntimeError("0D or 1D target tensor expected, multi-target not supported")
        batched = target_.dim() > 0
        input = input_ if batched else input_.unsqueeze(0)
        target = target_ if batched else target_.unsqueeze(0)

        # Each row's head entry (its class in the shortlist, or its cluster) and, for rows in a tail
        # cluster, its log-probability within the cluster.
        output = input.new_zeros(target.size(0))
        head_entry = target.new_empty(target.size(0))
        bounds = [0] + self.cutoffs
        covered = 0
        for i, (low, high) in enumerate(zip(bounds[:-1], bounds[1:])):
            in_range = (target >= low) & (target < high)
            rows = in_range.nonzero().squeeze()
            if rows.numel() == 0:
                continue
            if i == 0:
                head_entry.index_copy_(0, rows, target[in_range])
            else:
                cluster_logprob = F.log_softmax(self.tail[i - 1](input.index_select(0, rows)), dim=1)
                within = cluster_logprob.gather(1, (target[in_range] - low).unsqueeze(1))
                head_entry.index_fill_(0, rows, self.shortlist_size + i - 1)
                output.index_copy_(0, rows, within.squeeze(1))
            covered += rows.numel()
        if covered != target.size(0):
            raise RuntimeError(f"Target values should be in [0, {self.n_classes - 1}], but values in range "
                               f"[{target.min().item()}, {target.max().item()}] were found. ")
        head_logprob = F.log_softmax(self.head(input), dim=1)
        output = output + head_logprob.gather(1, head_entry.unsqueeze(1)).squeeze()
        loss = (-output).mean()
        if not batched:
            output = output.squeeze(0)
        return _ASMoutput(output, loss)

    def _full_log_prob(self, input, head_output):
        """log P(class) for every class: the head's for the shortlist, head(cluster) + cluster's otherwise."""
        head_logprob = F.log_softmax(head_output, dim=1)
        out = input.new_empty((head_output.size(0), self.n_classes))
        out[:, :self.shortlist_size] = head_logprob[:, :self.shortlist_size]
        for i, (start, stop) in enumerate(zip(self.cutoffs[:-1], self.cutoffs[1:])):
            cluster_logprob = F.log_softmax(self.tail[i](input), dim=1)
            out[:, start:stop] = cluster_logprob + head_logprob[:, self.shortlist_size + i].unsqueeze(1)
        return out

    def log_prob(self, input):
        """log-probabilities of every class, (batch, n_classes) or (n_classes,)."""
        batched = input.dim() > 1
        x = input if batched else input.unsqueeze(0)
        out = self._full_log_prob(x, self.head(x))
        return out if batched else out.squeeze(0)

    def predict(self, input):
        """The most likely class of each row; the full distribution is computed only for rows whose best
        head entry is a cluster."""
        from ... import argmax
        batched = input.dim() > 1
        x = input if batched else input.unsqueeze(0)
        head_output = self.head(x)
        best = argmax(head_output, dim=1)
        in_tail = best >= self.shortlist_size
        if in_tail.any():
            if in_tail.all():
                best = argmax(self._full_log_prob(x, head_output), dim=1)
            else:
                best[in_tail] = argmax(self._full_log_prob(x[in_tail], head_output[in_tail]), dim=1)
        return best if batched else best.squeeze(0)
