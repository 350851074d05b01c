"""shirgur/PointerNet (PointerNet.py and Train.py) on the sorting task: Encoder (nn.LSTM over
embedded_inputs.permute(1, 0, 2), init_hidden's Parameter(torch.zeros(1), requires_grad=False) .unsqueeze(0)
.unsqueeze(0).repeat(...)), Attention (a V Parameter(torch.FloatTensor(hidden_dim)) with nn.init.uniform(self.V,
-1, 1), Conv1d context projection, _inf = Parameter(torch.FloatTensor([float('-inf')]), requires_grad=False),
init_inf / inf expanded to the mask, att[mask] = self.inf[mask], softmax), Decoder (an LSTM cell written out with
input_to_hidden / hidden_to_hidden chunk(4, 1), a mask Parameter(torch.ones(1), requires_grad=False).repeat,
runner = self.runner.repeat(input_length) filled by runner.data[i] = i, masked_outputs.max(1) pointers,
one_hot_pointers = (runner == indices.unsqueeze(1).expand(-1, outputs.size()[1])).float(), mask = mask *
(1 - one_hot_pointers), embedding_mask = one_hot_pointers.unsqueeze(2).expand(-1, -1, self.embedding_dim).byte(),
decoder_input = embedded_inputs[embedding_mask.data].view(batch_size, self.embedding_dim)), PointerNet (a Linear
embedding over inputs.view(batch_size * input_length, -1), a bidirectional encoder whose hidden states are
cat'ed), and Train.py's CrossEntropyLoss over o.contiguous().view(-1, o.size()[-1]) with Adam and the
np.average of batch losses. The TSP dataset is replaced by sorting random numbers."""
import argparse

import numpy as np
import torch
import torch.nn as nn
import torch.optim as optim
import torch.nn.functional as F
from torch.nn import Parameter
from torch.utils.data import DataLoader, Dataset


class Encoder(nn.Module):
    def __init__(self, embedding_dim, hidden_dim, n_layers, dropout, bidir):
        super(Encoder, self).__init__()
        self.hidden_dim = hidden_dim//2 if bidir else hidden_dim
        self.n_layers = n_layers*2 if bidir else n_layers
        self.bidir = bidir
        self.lstm = nn.LSTM(embedding_dim,
                            self.hidden_dim,
                            n_layers,
                            dropout=dropout,
                            bidirectional=bidir)

        # Used for propagating .cuda() command
        self.h0 = Parameter(torch.zeros(1), requires_grad=False)
        self.c0 = Parameter(torch.zeros(1), requires_grad=False)

    def forward(self, embedded_inputs, hidden):
        embedded_inputs = embedded_inputs.permute(1, 0, 2)

        outputs, hidden = self.lstm(embedded_inputs, hidden)

        return outputs.permute(1, 0, 2), hidden

    def init_hidden(self, embedded_inputs):
        batch_size = embedded_inputs.size(0)

        # Reshaping (Expanding)
        h0 = self.h0.unsqueeze(0).unsqueeze(0).repeat(self.n_layers,
                                                      batch_size,
                                                      self.hidden_dim)
        c0 = self.h0.unsqueeze(0).unsqueeze(0).repeat(self.n_layers,
                                                      batch_size,
                                                      self.hidden_dim)

        return h0, c0


class Attention(nn.Module):
    def __init__(self, input_dim,
                 hidden_dim):
        super(Attention, self).__init__()

        self.input_dim = input_dim
        self.hidden_dim = hidden_dim

        self.input_linear = nn.Linear(input_dim, hidden_dim)
        self.context_linear = nn.Conv1d(input_dim, hidden_dim, 1, 1)
        self.V = Parameter(torch.FloatTensor(hidden_dim), requires_grad=True)
        self._inf = Parameter(torch.FloatTensor([float('-inf')]), requires_grad=False)
        self.tanh = nn.Tanh()
        self.softmax = nn.Softmax()

        # Initialize vector V
        nn.init.uniform(self.V, -1, 1)

    def forward(self, input,
                context,
                mask):

        # (batch, hidden_dim, seq_len)
        inp = self.input_linear(input).unsqueeze(2).expand(-1, -1, context.size(1))

        # (batch, hidden_dim, seq_len)
        context = context.permute(0, 2, 1)
        ctx = self.context_linear(context)

        # (batch, 1, hidden_dim)
        V = self.V.unsqueeze(0).expand(context.size(0), -1).unsqueeze(1)

        # (batch, seq_len)
        att = torch.bmm(V, self.tanh(inp + ctx)).squeeze(1)
        if len(att[mask]) > 0:
            att[mask] = self.inf[mask]
        alpha = self.softmax(att)

        hidden_state = torch.bmm(ctx, alpha.unsqueeze(2)).squeeze(2)

        return hidden_state, alpha

    def init_inf(self, mask_size):
        self.inf = self._inf.unsqueeze(1).expand(*mask_size)


class Decoder(nn.Module):
    def __init__(self, embedding_dim,
                 hidden_dim):
        super(Decoder, self).__init__()
        self.embedding_dim = embedding_dim
        self.hidden_dim = hidden_dim

        self.input_to_hidden = nn.Linear(embedding_dim, 4 * hidden_dim)
        self.hidden_to_hidden = nn.Linear(hidden_dim, 4 * hidden_dim)
        self.hidden_out = nn.Linear(hidden_dim * 2, hidden_dim)
        self.att = Attention(hidden_dim, hidden_dim)

        # Used for propagating .cuda() command
        self.mask = Parameter(torch.ones(1), requires_grad=False)
        self.runner = Parameter(torch.zeros(1), requires_grad=False)

    def forward(self, embedded_inputs,
                decoder_input,
                hidden,
                context):

        batch_size = embedded_inputs.size(0)
        input_length = embedded_inputs.size(1)

        # (batch, seq_len)
        mask = self.mask.repeat(input_length).unsqueeze(0).repeat(batch_size, 1)
        self.att.init_inf(mask.size())

        # Generating arang(input_length), broadcasted across batch_size
        runner = self.runner.repeat(input_length)
        for i in range(input_length):
            runner.data[i] = i
        runner = runner.unsqueeze(0).expand(batch_size, -1).long()

        outputs = []
        pointers = []

        def step(x, hidden):
            # Regular LSTM
            h, c = hidden

            gates = self.input_to_hidden(x) + self.hidden_to_hidden(h)
            input, forget, cell, out = gates.chunk(4, 1)

            input = F.sigmoid(input)
            forget = F.sigmoid(forget)
            cell = F.tanh(cell)
            out = F.sigmoid(out)

            c_t = (forget * c) + (input * cell)
            h_t = out * F.tanh(c_t)

            # Attention section
            hidden_t, output = self.att(h_t, context, torch.eq(mask, 0))
            hidden_t = F.tanh(self.hidden_out(torch.cat((hidden_t, h_t), 1)))

            return hidden_t, c_t, output

        # Recurrence loop
        for _ in range(input_length):
            h_t, c_t, outs = step(decoder_input, hidden)
            hidden = (h_t, c_t)

            # Masking selected inputs
            masked_outs = outs * mask

            # Get maximum probabilities and indices
            max_probs, indices = masked_outs.max(1)
            one_hot_pointers = (runner == indices.unsqueeze(1).expand(-1, outs.size()[1])).float()

            # Update mask to ignore seen indices
            mask = mask * (1 - one_hot_pointers)

            # Get embedded inputs by max indices
            embedding_mask = one_hot_pointers.unsqueeze(2).expand(-1, -1, self.embedding_dim).byte()
            decoder_input = embedded_inputs[embedding_mask.data].view(batch_size, self.embedding_dim)

            outputs.append(outs.unsqueeze(0))
            pointers.append(indices.unsqueeze(1))

        outputs = torch.cat(outputs).permute(1, 0, 2)
        pointers = torch.cat(pointers, 1)

        return (outputs, pointers), hidden


class PointerNet(nn.Module):
    def __init__(self, embedding_dim,
                 hidden_dim,
                 lstm_layers,
                 dropout,
                 bidir=False):
        super(PointerNet, self).__init__()
        self.embedding_dim = embedding_dim
        self.bidir = bidir
        self.embedding = nn.Linear(2, embedding_dim)
        self.encoder = Encoder(embedding_dim,
                               hidden_dim,
                               lstm_layers,
                               dropout,
                               bidir)
        self.decoder = Decoder(embedding_dim, hidden_dim)
        self.decoder_input0 = Parameter(torch.FloatTensor(embedding_dim), requires_grad=False)

        # Initialize decoder_input0
        nn.init.uniform(self.decoder_input0, -1, 1)

    def forward(self, inputs):
        batch_size = inputs.size(0)
        input_length = inputs.size(1)

        decoder_input0 = self.decoder_input0.unsqueeze(0).expand(batch_size, -1)

        inputs = inputs.view(batch_size * input_length, -1)
        embedded_inputs = self.embedding(inputs).view(batch_size, input_length, -1)

        encoder_hidden0 = self.encoder.init_hidden(embedded_inputs)
        encoder_outputs, encoder_hidden = self.encoder(embedded_inputs,
                                                       encoder_hidden0)
        if self.bidir:
            # (the repo's torch.cat(encoder_hidden[0][-2:], dim=-1) of a tensor is a TypeError since torch 0.4)
            decoder_hidden0 = (torch.cat(tuple(encoder_hidden[0][-2:]), dim=-1),
                               torch.cat(tuple(encoder_hidden[1][-2:]), dim=-1))
        else:
            decoder_hidden0 = (encoder_hidden[0][-1],
                               encoder_hidden[1][-1])
        (outputs, pointers), decoder_hidden = self.decoder(embedded_inputs,
                                                           decoder_input0,
                                                           decoder_hidden0,
                                                           encoder_outputs)

        return outputs, pointers


class SortDataset(Dataset):
    """Points with a value and a noise feature; the target is the argsort of the values (as TSPDataset's
    {'Points': ..., 'Solution': ...} samples)."""
    def __init__(self, data_size, seq_len, seed):
        rng = np.random.RandomState(seed)
        self.points = rng.rand(data_size, seq_len, 2).astype(np.float32)
        self.solutions = np.argsort(self.points[:, :, 0], axis=1)

    def __len__(self):
        return len(self.points)

    def __getitem__(self, idx):
        return {'Points': torch.from_numpy(self.points[idx]).float(),
                'Solution': torch.from_numpy(self.solutions[idx]).long()}


def main(argv=None):
    parser = argparse.ArgumentParser(description="Pytorch implementation of Pointer-Net")
    parser.add_argument('--train_size', default=64, type=int, help='Training data size')
    parser.add_argument('--batch_size', default=16, type=int, help='Batch size')
    parser.add_argument('--nof_epoch', default=2, type=int, help='Number of epochs')
    parser.add_argument('--lr', type=float, default=0.01, help='Learning rate')
    parser.add_argument('--nof_points', type=int, default=6, help='Number of points in TSP')
    parser.add_argument('--embedding_size', type=int, default=16, help='Embedding size')
    parser.add_argument('--hiddens', type=int, default=32, help='Number of hidden units')
    parser.add_argument('--nof_lstms', type=int, default=2, help='Number of LSTM layers')
    parser.add_argument('--dropout', type=float, default=0., help='Dropout value')
    parser.add_argument('--bidir', default=True, action='store_true', help='Bidirectional')
    parser.add_argument('--unidir', dest='bidir', action='store_false')
    parser.add_argument('--quiet', action='store_true')
    params = parser.parse_args(argv)
    log = (lambda *a: None) if params.quiet else print
    torch.manual_seed(7)

    model = PointerNet(params.embedding_size,
                       params.hiddens,
                       params.nof_lstms,
                       params.dropout,
                       params.bidir)
    initial_state = {k: v.clone() for k, v in model.state_dict().items()}

    dataset = SortDataset(params.train_size, params.nof_points, 0)
    dataloader = DataLoader(dataset, batch_size=params.batch_size, shuffle=True, num_workers=0)

    CCE = torch.nn.CrossEntropyLoss()
    model_optim = optim.Adam(filter(lambda p: p.requires_grad, model.parameters()), lr=params.lr)

    losses, step_losses, accs = [], [], []
    for epoch in range(params.nof_epoch):
        batch_loss = []
        for i_batch, sample_batched in enumerate(dataloader):
            train_batch = sample_batched['Points']
            target_batch = sample_batched['Solution']

            o, p = model(train_batch)
            o = o.contiguous().view(-1, o.size()[-1])

            target_batch = target_batch.view(-1)

            loss = CCE(o, target_batch)

            losses.append(loss.data.item())
            batch_loss.append(loss.data.item())
            step_losses.append(loss.item())

            model_optim.zero_grad()
            loss.backward()
            model_optim.step()
            accs.append((p.view(-1) == target_batch).float().mean().item())
            log('Epoch: {}, batch {}, loss {:.4f}'.format(epoch, i_batch, loss.data.item()))
        log('Epoch {} average loss {:.4f}'.format(epoch, np.average(batch_loss)))
    return {"initial_state": initial_state, "step_losses": step_losses, "accs": accs, "pointers": p}


if __name__ == "__main__":
    main()
