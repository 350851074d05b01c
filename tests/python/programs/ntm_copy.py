"""loudinthecloud/pytorch-ntm as written: NTMMemory (a mem_bias buffer from torch.Tensor(N, M) with
nn.init.uniform_, reset by mem_bias.clone().repeat(batch_size, 1, 1), read by torch.matmul(w.unsqueeze(1),
memory).squeeze(1), write by erase / add outer products, content addressing by F.cosine_similarity(memory + 1e-16,
k + 1e-16, dim=-1) and softmax, interpolation, the circular shift by F.conv1d over torch.cat([w[-1:], w, w[:1]]) into
torch.zeros(wg.size()) rows, sharpening w ** gamma / (sum + 1e-16)), NTMReadHead / NTMWriteHead (_split_cols,
F.softplus, torch.sigmoid, F.softmax(s, dim=1), 1 + F.softplus(gamma), xavier_uniform_(gain=1.4) /
normal_(std=0.01) resets), the LSTM controller with learned initial states (torch.randn(...) * 0.05 Parameters,
clone().repeat(1, batch_size, 1), uniform_ weights with stdev 5 / sqrt(num_inputs + num_outputs)), EncapsulatedNTM,
and the copy task (np.random.binomial sequences with a delimiter channel, BCELoss, RMSprop(momentum=0.9,
alpha=0.95), clip_grads by p.grad.data.clamp_(-10, 10), cost by y_out.clone().data.apply_(...) rounded bits)."""
import argparse

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn, optim
from torch.nn import Parameter


def _convolve(w, s):
    assert s.size(0) == 3
    t = torch.cat([w[-1:], w, w[:1]])
    c = F.conv1d(t.view(1, 1, -1), s.view(1, 1, -1)).view(-1)
    return c


class NTMMemory(nn.Module):
    def __init__(self, N, M):
        super(NTMMemory, self).__init__()
        self.N = N
        self.M = M
        self.register_buffer('mem_bias', torch.Tensor(N, M))
        stdev = 1 / (np.sqrt(N + M))
        nn.init.uniform_(self.mem_bias, -stdev, stdev)

    def reset(self, batch_size):
        self.batch_size = batch_size
        self.memory = self.mem_bias.clone().repeat(batch_size, 1, 1)

    def size(self):
        return self.N, self.M

    def read(self, w):
        return torch.matmul(w.unsqueeze(1), self.memory).squeeze(1)

    def write(self, w, e, a):
        self.prev_mem = self.memory
        self.memory = torch.Tensor(self.batch_size, self.N, self.M)
        erase = torch.matmul(w.unsqueeze(-1), e.unsqueeze(1))
        add = torch.matmul(w.unsqueeze(-1), a.unsqueeze(1))
        self.memory = self.prev_mem * (1 - erase) + add

    def address(self, k, β, g, s, γ, w_prev):
        wc = self._similarity(k, β)
        wg = self._interpolate(w_prev, wc, g)
        ŵ = self._shift(wg, s)
        w = self._sharpen(ŵ, γ)
        return w

    def _similarity(self, k, β):
        k = k.view(self.batch_size, 1, -1)
        w = F.softmax(β * F.cosine_similarity(self.memory + 1e-16, k + 1e-16, dim=-1), dim=1)
        return w

    def _interpolate(self, w_prev, wc, g):
        return g * wc + (1 - g) * w_prev

    def _shift(self, wg, s):
        result = torch.zeros(wg.size())
        for b in range(self.batch_size):
            result[b] = _convolve(wg[b], s[b])
        return result

    def _sharpen(self, ŵ, γ):
        w = ŵ ** γ
        w = torch.div(w, torch.sum(w, dim=1).view(-1, 1) + 1e-16)
        return w


def _split_cols(mat, lengths):
    assert mat.size()[1] == sum(lengths), "Lengths must be summed to num columns"
    l = np.cumsum([0] + lengths)
    results = []
    for s, e in zip(l[:-1], l[1:]):
        results += [mat[:, s:e]]
    return results


class NTMHeadBase(nn.Module):
    def __init__(self, memory, controller_size):
        super(NTMHeadBase, self).__init__()
        self.memory = memory
        self.N, self.M = memory.size()
        self.controller_size = controller_size

    def _address_memory(self, k, β, g, s, γ, w_prev):
        k = k.clone()
        β = F.softplus(β)
        g = F.sigmoid(g)
        s = F.softmax(s, dim=1)
        γ = 1 + F.softplus(γ)
        w = self.memory.address(k, β, g, s, γ, w_prev)
        return w


class NTMReadHead(NTMHeadBase):
    def __init__(self, memory, controller_size):
        super(NTMReadHead, self).__init__(memory, controller_size)
        self.read_lengths = [self.M, 1, 1, 3, 1]
        self.fc_read = nn.Linear(controller_size, sum(self.read_lengths))
        self.reset_parameters()

    def create_new_state(self, batch_size):
        return torch.zeros(batch_size, self.N)

    def reset_parameters(self):
        nn.init.xavier_uniform_(self.fc_read.weight, gain=1.4)
        nn.init.normal_(self.fc_read.bias, std=0.01)

    def is_read_head(self):
        return True

    def forward(self, embeddings, w_prev):
        o = self.fc_read(embeddings)
        k, β, g, s, γ = _split_cols(o, self.read_lengths)
        w = self._address_memory(k, β, g, s, γ, w_prev)
        r = self.memory.read(w)
        return r, w


class NTMWriteHead(NTMHeadBase):
    def __init__(self, memory, controller_size):
        super(NTMWriteHead, self).__init__(memory, controller_size)
        self.write_lengths = [self.M, 1, 1, 3, 1, self.M, self.M]
        self.fc_write = nn.Linear(controller_size, sum(self.write_lengths))
        self.reset_parameters()

    def create_new_state(self, batch_size):
        return torch.zeros(batch_size, self.N)

    def reset_parameters(self):
        nn.init.xavier_uniform_(self.fc_write.weight, gain=1.4)
        nn.init.normal_(self.fc_write.bias, std=0.01)

    def is_read_head(self):
        return False

    def forward(self, embeddings, w_prev):
        o = self.fc_write(embeddings)
        k, β, g, s, γ, e, a = _split_cols(o, self.write_lengths)
        e = F.sigmoid(e)
        w = self._address_memory(k, β, g, s, γ, w_prev)
        self.memory.write(w, e, a)
        return w


class LSTMController(nn.Module):
    def __init__(self, num_inputs, num_outputs, num_layers):
        super(LSTMController, self).__init__()
        self.num_inputs = num_inputs
        self.num_outputs = num_outputs
        self.num_layers = num_layers
        self.lstm = nn.LSTM(input_size=num_inputs, hidden_size=num_outputs, num_layers=num_layers)
        self.lstm_h_bias = Parameter(torch.randn(self.num_layers, 1, self.num_outputs) * 0.05)
        self.lstm_c_bias = Parameter(torch.randn(self.num_layers, 1, self.num_outputs) * 0.05)
        self.reset_parameters()

    def create_new_state(self, batch_size):
        lstm_h = self.lstm_h_bias.clone().repeat(1, batch_size, 1)
        lstm_c = self.lstm_c_bias.clone().repeat(1, batch_size, 1)
        return lstm_h, lstm_c

    def reset_parameters(self):
        for p in self.lstm.parameters():
            if p.dim() == 1:
                nn.init.constant_(p, 0)
            else:
                stdev = 5 / (np.sqrt(self.num_inputs + self.num_outputs))
                nn.init.uniform_(p, -stdev, stdev)

    def size(self):
        return self.num_inputs, self.num_outputs

    def forward(self, x, prev_state):
        x = x.unsqueeze(0)
        outp, state = self.lstm(x, prev_state)
        return outp.squeeze(0), state


class NTM(nn.Module):
    def __init__(self, num_inputs, num_outputs, controller, memory, heads):
        super(NTM, self).__init__()
        self.num_inputs = num_inputs
        self.num_outputs = num_outputs
        self.controller = controller
        self.memory = memory
        self.heads = heads
        self.N, self.M = memory.size()
        _, self.controller_size = controller.size()
        self.num_read_heads = 0
        self.init_r = []
        for head in heads:
            if head.is_read_head():
                init_r_bias = torch.randn(1, self.M) * 0.01
                self.register_buffer("read{}_bias".format(self.num_read_heads), init_r_bias.data)
                self.init_r += [init_r_bias]
                self.num_read_heads += 1
        assert self.num_read_heads > 0, "heads list must contain at least a single read head"
        self.fc = nn.Linear(self.controller_size + self.num_read_heads * self.M, num_outputs)
        self.reset_parameters()

    def create_new_state(self, batch_size):
        init_r = [r.clone().repeat(batch_size, 1) for r in self.init_r]
        controller_state = self.controller.create_new_state(batch_size)
        heads_state = [head.create_new_state(batch_size) for head in self.heads]
        return init_r, controller_state, heads_state

    def reset_parameters(self):
        nn.init.xavier_uniform_(self.fc.weight, gain=1)
        nn.init.normal_(self.fc.bias, std=0.01)

    def forward(self, x, prev_state):
        prev_reads, prev_controller_state, prev_heads_states = prev_state
        inp = torch.cat([x] + prev_reads, dim=1)
        controller_outp, controller_state = self.controller(inp, prev_controller_state)
        reads = []
        heads_states = []
        for head, prev_head_state in zip(self.heads, prev_heads_states):
            if head.is_read_head():
                r, head_state = head(controller_outp, prev_head_state)
                reads += [r]
            else:
                head_state = head(controller_outp, prev_head_state)
            heads_states += [head_state]
        inp2 = torch.cat([controller_outp] + reads, dim=1)
        o = F.sigmoid(self.fc(inp2))
        state = (reads, controller_state, heads_states)
        return o, state


class EncapsulatedNTM(nn.Module):
    def __init__(self, num_inputs, num_outputs, controller_size, controller_layers, num_heads, N, M):
        super(EncapsulatedNTM, self).__init__()
        self.num_inputs = num_inputs
        self.num_outputs = num_outputs
        self.controller_size = controller_size
        self.controller_layers = controller_layers
        self.num_heads = num_heads
        self.N = N
        self.M = M
        memory = NTMMemory(N, M)
        controller = LSTMController(num_inputs + M * num_heads, controller_size, controller_layers)
        heads = nn.ModuleList([])
        for i in range(num_heads):
            heads += [NTMReadHead(memory, controller_size), NTMWriteHead(memory, controller_size)]
        self.ntm = NTM(num_inputs, num_outputs, controller, memory, heads)
        self.memory = memory

    def init_sequence(self, batch_size):
        self.batch_size = batch_size
        self.memory.reset(batch_size)
        self.previous_state = self.ntm.create_new_state(batch_size)

    def forward(self, x=None):
        if x is None:
            x = torch.zeros(self.batch_size, self.num_inputs)
        o, self.previous_state = self.ntm(x, self.previous_state)
        return o, self.previous_state

    def calculate_num_params(self):
        num_params = 0
        for p in self.parameters():
            num_params += p.data.view(-1).size(0)
        return num_params


def dataloader(num_batches, batch_size, seq_width, min_len, max_len):
    for batch_num in range(num_batches):
        seq_len = np.random.randint(min_len, max_len)
        seq = np.random.binomial(1, 0.5, (seq_len, batch_size, seq_width))
        seq = torch.from_numpy(seq)
        inp = torch.zeros(seq_len + 1, batch_size, seq_width + 1)
        inp[:seq_len, :, :seq_width] = seq
        inp[seq_len, :, seq_width] = 1.0
        outp = seq.clone()
        yield batch_num + 1, inp.float(), outp.float()


def clip_grads(net):
    parameters = list(filter(lambda p: p.grad is not None, net.parameters()))
    for p in parameters:
        p.grad.data.clamp_(-10, 10)


def train_batch(net, criterion, optimizer, X, Y):
    optimizer.zero_grad()
    inp_seq_len = X.size(0)
    outp_seq_len, batch_size, _ = Y.size()
    net.init_sequence(batch_size)
    for i in range(inp_seq_len):
        net(X[i])
    y_out = torch.zeros(Y.size())
    for i in range(outp_seq_len):
        y_out[i], _ = net()
    loss = criterion(y_out, Y)
    loss.backward()
    clip_grads(net)
    optimizer.step()
    y_out_binarized = y_out.clone().data
    y_out_binarized.apply_(lambda x: 0 if x < 0.5 else 1)
    cost = torch.sum(torch.abs(y_out_binarized - Y.data))
    return loss.item(), cost.item() / batch_size


def main(argv=None):
    parser = argparse.ArgumentParser()
    parser.add_argument("--num_batches", type=int, default=10)
    parser.add_argument("--quiet", action="store_true")
    args = parser.parse_args(argv)
    log = (lambda *a: None) if args.quiet else print
    np.random.seed(1000)
    torch.manual_seed(1000)
    net = EncapsulatedNTM(8 + 1, 8, 32, 1, 1, 16, 8)
    initial_state = {k: v.clone() for k, v in net.state_dict().items()}
    criterion = nn.BCELoss()
    optimizer = optim.RMSprop(net.parameters(), momentum=0.9, alpha=0.95, lr=1e-3)
    step_losses, costs = [], []
    for batch_num, x, y in dataloader(args.num_batches, 4, 8, 2, 5):
        loss, cost = train_batch(net, criterion, optimizer, x, y)
        step_losses.append(loss)
        costs.append(cost)
        log("Batch %d Loss: %.6f Cost: %.2f" % (batch_num, loss, cost))
    return {"initial_state": initial_state, "step_losses": step_losses, "costs": costs,
            "num_params": net.calculate_num_params(), "memory": net.memory.memory.detach().clone()}


if __name__ == "__main__":
    main()
