"""Sparsely-gated mixture-of-experts layers as public PyTorch code writes them: davidmrau/mixture-of-experts'
moe.py (Shazeer et al.'s noisy top-k gating: clean_logits = x @ self.w_gate, softplus noise stddev,
torch.randn_like, logits.topk(min(self.k + 1, self.num_experts), dim=1), zeros_like(logits, requires_grad=True)
.scatter(1, top_k_indices, top_k_gates), _prob_in_top_k with torch.gather on the flattened top values and
Normal(self.mean, self.std).cdf from registered buffers, the cv_squared load-balancing loss, and SparseDispatcher:
torch.nonzero(gates).sort(0), .split(1, dim=1), inp[self._batch_index].squeeze(1), torch.split by part sizes
((gates > 0).sum(0).tolist()), and zeros.index_add(0, batch_index, stitched)), and a Switch-Transformer top-1
router (F.one_hot, torch.cumsum expert positions for the capacity, a capacity mask, einsum dispatch and combine,
the auxiliary num_experts * sum(density * density_proxy) loss and the router z-loss by torch.logsumexp).
Trained as a regressor / classifier on synthetic data with Adam, logging each expert's load."""
import argparse

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.distributions.normal import Normal


class MLP(nn.Module):
    def __init__(self, input_size, output_size, hidden_size):
        super(MLP, self).__init__()
        self.fc1 = nn.Linear(input_size, hidden_size)
        self.fc2 = nn.Linear(hidden_size, output_size)
        self.relu = nn.ReLU()
        self.soft = nn.Softmax(1)

    def forward(self, x):
        out = self.fc1(x)
        out = self.relu(out)
        out = self.fc2(out)
        out = self.soft(out)
        return out


class SparseDispatcher(object):
    def __init__(self, num_experts, gates):
        self._gates = gates
        self._num_experts = num_experts
        sorted_experts, index_sorted_experts = torch.nonzero(gates).sort(0)
        _, self._expert_index = sorted_experts.split(1, dim=1)
        self._batch_index = torch.nonzero(gates)[index_sorted_experts[:, 1], 0]
        self._part_sizes = (gates > 0).sum(0).tolist()
        gates_exp = gates[self._batch_index.flatten()]
        self._nonzero_gates = torch.gather(gates_exp, 1, self._expert_index)

    def dispatch(self, inp):
        inp_exp = inp[self._batch_index].squeeze(1)
        return torch.split(inp_exp, self._part_sizes, dim=0)

    def combine(self, expert_out, multiply_by_gates=True):
        stitched = torch.cat(expert_out, 0)
        if multiply_by_gates:
            stitched = stitched.mul(self._nonzero_gates)
        zeros = torch.zeros(self._gates.size(0), expert_out[-1].size(1), requires_grad=True, device=stitched.device)
        combined = zeros.index_add(0, self._batch_index, stitched.float())
        return combined

    def expert_to_gates(self):
        return torch.split(self._nonzero_gates, self._part_sizes, dim=0)


class MoE(nn.Module):
    def __init__(self, input_size, output_size, num_experts, hidden_size, noisy_gating=True, k=4):
        super(MoE, self).__init__()
        self.noisy_gating = noisy_gating
        self.num_experts = num_experts
        self.output_size = output_size
        self.input_size = input_size
        self.hidden_size = hidden_size
        self.k = k
        self.experts = nn.ModuleList([MLP(self.input_size, self.output_size, self.hidden_size)
                                      for i in range(self.num_experts)])
        self.w_gate = nn.Parameter(torch.zeros(input_size, num_experts), requires_grad=True)
        self.w_noise = nn.Parameter(torch.zeros(input_size, num_experts), requires_grad=True)
        self.softplus = nn.Softplus()
        self.softmax = nn.Softmax(1)
        self.register_buffer("mean", torch.tensor([0.0]))
        self.register_buffer("std", torch.tensor([1.0]))
        assert(self.k <= self.num_experts)

    def cv_squared(self, x):
        eps = 1e-10
        if x.shape[0] == 1:
            return torch.tensor([0], device=x.device, dtype=x.dtype)
        return x.float().var() / (x.float().mean()**2 + eps)

    def _gates_to_load(self, gates):
        return (gates > 0).sum(0)

    def _prob_in_top_k(self, clean_values, noisy_values, noise_stddev, noisy_top_values):
        batch = clean_values.size(0)
        m = noisy_top_values.size(1)
        top_values_flat = noisy_top_values.flatten()
        threshold_positions_if_in = torch.arange(batch, device=clean_values.device) * m + self.k
        threshold_if_in = torch.unsqueeze(torch.gather(top_values_flat, 0, threshold_positions_if_in), 1)
        is_in = torch.gt(noisy_values, threshold_if_in)
        threshold_positions_if_out = threshold_positions_if_in - 1
        threshold_if_out = torch.unsqueeze(torch.gather(top_values_flat, 0, threshold_positions_if_out), 1)
        normal = Normal(self.mean, self.std)
        prob_if_in = normal.cdf((clean_values - threshold_if_in) / noise_stddev)
        prob_if_out = normal.cdf((clean_values - threshold_if_out) / noise_stddev)
        prob = torch.where(is_in, prob_if_in, prob_if_out)
        return prob

    def noisy_top_k_gating(self, x, train, noise_epsilon=1e-2):
        clean_logits = x @ self.w_gate
        if self.noisy_gating and train:
            raw_noise_stddev = x @ self.w_noise
            noise_stddev = ((self.softplus(raw_noise_stddev) + noise_epsilon))
            noisy_logits = clean_logits + (torch.randn_like(clean_logits) * noise_stddev)
            logits = noisy_logits
        else:
            logits = clean_logits
        logits = self.softmax(logits)
        top_logits, top_indices = logits.topk(min(self.k + 1, self.num_experts), dim=1)
        top_k_logits = top_logits[:, :self.k]
        top_k_indices = top_indices[:, :self.k]
        top_k_gates = top_k_logits / (top_k_logits.sum(1, keepdim=True) + 1e-6)
        zeros = torch.zeros_like(logits, requires_grad=True)
        gates = zeros.scatter(1, top_k_indices, top_k_gates)
        if self.noisy_gating and self.k < self.num_experts and train:
            load = (self._prob_in_top_k(clean_logits, noisy_logits, noise_stddev, top_logits)).sum(0)
        else:
            load = self._gates_to_load(gates)
        return gates, load

    def forward(self, x, loss_coef=1e-2):
        gates, load = self.noisy_top_k_gating(x, self.training)
        importance = gates.sum(0)
        loss = self.cv_squared(importance) + self.cv_squared(load)
        loss *= loss_coef
        dispatcher = SparseDispatcher(self.num_experts, gates)
        expert_inputs = dispatcher.dispatch(x)
        gates = dispatcher.expert_to_gates()
        expert_outputs = [self.experts[i](expert_inputs[i]) for i in range(self.num_experts)]
        y = dispatcher.combine(expert_outputs)
        return y, loss


class SwitchFeedForward(nn.Module):
    """labml.ai's switch transformer router, with a capacity factor and dropped tokens passed through."""

    def __init__(self, d_model, n_experts, capacity_factor=1.0, drop_tokens=True, is_scale_prob=True):
        super().__init__()
        self.capacity_factor = capacity_factor
        self.is_scale_prob = is_scale_prob
        self.n_experts = n_experts
        self.drop_tokens = drop_tokens
        self.experts = nn.ModuleList([nn.Sequential(nn.Linear(d_model, 2 * d_model), nn.ReLU(),
                                                    nn.Linear(2 * d_model, d_model)) for _ in range(n_experts)])
        self.switch = nn.Linear(d_model, n_experts)
        self.softmax = nn.Softmax(dim=-1)

    def forward(self, x: torch.Tensor):
        seq_len, batch_size, d_model = x.shape
        x = x.view(-1, d_model)
        logits = self.switch(x)
        route_prob = self.softmax(logits)
        route_prob_max, routes = torch.max(route_prob, dim=-1)
        indexes_list = [torch.eq(routes, i).nonzero(as_tuple=True)[0] for i in range(self.n_experts)]
        final_output = x.new_zeros(x.shape)
        capacity = int(self.capacity_factor * len(x) / self.n_experts)
        counts = x.new_tensor([len(indexes_list[i]) for i in range(self.n_experts)])
        dropped = []
        if self.drop_tokens:
            for i in range(self.n_experts):
                if len(indexes_list[i]) <= capacity:
                    continue
                indexes_list[i] = indexes_list[i][torch.randperm(len(indexes_list[i]))]
                dropped.append(indexes_list[i][capacity:])
                indexes_list[i] = indexes_list[i][:capacity]
        expert_output = [self.experts[i](x[indexes_list[i], :]) for i in range(self.n_experts)]
        for i in range(self.n_experts):
            final_output[indexes_list[i], :] = expert_output[i]
        if dropped:
            dropped = torch.cat(dropped)
            final_output[dropped, :] = x[dropped, :]
        if self.is_scale_prob:
            final_output = final_output * route_prob_max.view(-1, 1)
        else:
            final_output = final_output * (route_prob_max / route_prob_max.detach()).view(-1, 1)
        final_output = final_output.view(seq_len, batch_size, d_model)
        z_loss = torch.logsumexp(logits, dim=-1).pow(2).mean()
        return final_output, counts, route_prob.sum(0), len(dropped), route_prob_max, z_loss


def main(argv=None):
    parser = argparse.ArgumentParser()
    parser.add_argument("--router", default="noisy_topk")
    parser.add_argument("--k", type=int, default=2)
    parser.add_argument("--no-noise", action="store_true")
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--quiet", action="store_true")
    args = parser.parse_args(argv)
    log = (lambda *a: None) if args.quiet else print
    torch.manual_seed(42)
    n, d, n_classes, n_experts = 64, 12, 4, 6
    X = torch.randn(n, d)
    y = (X[:, :n_classes] * torch.arange(1., n_classes + 1)).argmax(1)
    step_losses, loads, aux = [], [], []
    if args.router == "noisy_topk":
        model = MoE(d, n_classes, n_experts, 16, noisy_gating=not args.no_noise, k=args.k)
        # the zero-initialised gate is a saddle; the repository's example trains from it with noise on
        nn.init.normal_(model.w_gate, std=0.5)
        initial_state = {k: v.clone() for k, v in model.state_dict().items()}
        optim = torch.optim.Adam(model.parameters(), lr=0.01)
        loss_fn = nn.NLLLoss()
        model.train()
        for step in range(args.steps):
            optim.zero_grad()
            y_hat, aux_loss = model(X)
            loss = loss_fn(torch.log(y_hat + 1e-9), y)
            total_loss = loss + aux_loss
            total_loss.backward()
            optim.step()
            step_losses.append(total_loss.item())
            aux.append(aux_loss.item())
            with torch.no_grad():
                gates, load = model.noisy_top_k_gating(X, False)
                loads.append(load.tolist())
            log(step, total_loss.item(), load.tolist())
        model.eval()
        with torch.no_grad():
            y_eval, _ = model(X)
        return {"initial_state": initial_state, "step_losses": step_losses, "aux": aux, "loads": loads,
                "eval": y_eval, "acc": (y_eval.argmax(1) == y).float().mean().item()}
    model = nn.ModuleDict({"ff": SwitchFeedForward(d, n_experts, capacity_factor=1.25),
                           "head": nn.Linear(d, n_classes)})
    initial_state = {k: v.clone() for k, v in model.state_dict().items()}
    optim = torch.optim.Adam(model.parameters(), lr=0.01)
    for step in range(args.steps):
        x = X.view(8, 8, d)
        out, counts, route_prob, n_dropped, route_prob_max, z_loss = model["ff"](x)
        logits = model["head"](out.view(-1, d))
        ce = F.cross_entropy(logits, y)
        total = counts.sum()
        route_frac = counts / total
        route_prob = route_prob / total
        load_balancing_loss = n_experts * (route_frac * route_prob).sum()
        loss = ce + 0.01 * load_balancing_loss + 1e-3 * z_loss
        optim.zero_grad()
        loss.backward()
        optim.step()
        step_losses.append(loss.item())
        loads.append(counts.tolist() + [n_dropped])
        aux.append(load_balancing_loss.item())
    return {"initial_state": initial_state, "step_losses": step_losses, "aux": aux, "loads": loads}


if __name__ == "__main__":
    main()
