"""oliverguhr/transformer-time-series-prediction, transformer-singlestep.py / transformer-multistep.py:
TransAm (a PositionalEncoding buffer pe.unsqueeze(0).transpose(0, 1), nn.TransformerEncoderLayer(d_model=
feature_size, nhead=10) in a TransformerEncoder with a cached src_mask from _generate_square_subsequent_mask
((torch.triu(torch.ones(sz, sz)) == 1).transpose(0, 1) then masked_fill of -inf / 0.0), a Linear decoder
with uniform_ init), create_inout_sequences building torch.FloatTensor(list of (numpy, numpy) tuples),
get_batch's torch.stack(torch.stack([...]).chunk(input_window, 1)), train() with the loss over the last
output_window values (or all), clip_grad_norm_(0.5), AdamW with StepLR(optimizer, 1.0, gamma=0.98)
(a float step size), evaluate() and predict_future()'s closed loop with torch.cat((data, output[-1:])).
The loss is an option: the repository's nn.MSELoss, or nn.SmoothL1Loss / nn.HuberLoss as its forks use.
The data are the repository's own synthetic sine sums (numpy), with sklearn's MinMaxScaler written out."""
import argparse
import math
import time

import numpy as np

import torch
import torch.nn as nn


class PositionalEncoding(nn.Module):

    def __init__(self, d_model, max_len=5000):
        super(PositionalEncoding, self).__init__()
        pe = torch.zeros(max_len, d_model)
        position = torch.arange(0, max_len, dtype=torch.float).unsqueeze(1)
        div_term = torch.exp(torch.arange(0, d_model, 2).float() * (-math.log(10000.0) / d_model))
        pe[:, 0::2] = torch.sin(position * div_term)
        pe[:, 1::2] = torch.cos(position * div_term)
        pe = pe.unsqueeze(0).transpose(0, 1)
        #pe.requires_grad = False
        self.register_buffer('pe', pe)

    def forward(self, x):
        return x + self.pe[:x.size(0), :]


class TransAm(nn.Module):
    def __init__(self,feature_size=250,num_layers=1,dropout=0.1,nhead=10):
        super(TransAm, self).__init__()
        self.model_type = 'Transformer'

        self.src_mask = None
        self.pos_encoder = PositionalEncoding(feature_size)
        self.encoder_layer = nn.TransformerEncoderLayer(d_model=feature_size, nhead=nhead, dropout=dropout)
        self.transformer_encoder = nn.TransformerEncoder(self.encoder_layer, num_layers=num_layers)
        self.decoder = nn.Linear(feature_size,1)
        self.init_weights()

    def init_weights(self):
        initrange = 0.1
        self.decoder.bias.data.zero_()
        self.decoder.weight.data.uniform_(-initrange, initrange)

    def forward(self,src):
        if self.src_mask is None or self.src_mask.size(0) != len(src):
            device = src.device
            mask = self._generate_square_subsequent_mask(len(src)).to(device)
            self.src_mask = mask

        src = self.pos_encoder(src)
        output = self.transformer_encoder(src,self.src_mask)#, self.src_mask)
        output = self.decoder(output)
        return output

    def _generate_square_subsequent_mask(self, sz):
        mask = (torch.triu(torch.ones(sz, sz)) == 1).transpose(0, 1)
        mask = mask.float().masked_fill(mask == 0, float('-inf')).masked_fill(mask == 1, float(0.0))
        return mask


def main(argv=None):
    parser = argparse.ArgumentParser()
    parser.add_argument('--input_window', type=int, default=100)
    parser.add_argument('--output_window', type=int, default=5)
    parser.add_argument('--batch_size', type=int, default=10)
    parser.add_argument('--epochs', type=int, default=100)
    parser.add_argument('--feature_size', type=int, default=250)
    parser.add_argument('--nhead', type=int, default=10)
    parser.add_argument('--samples', type=int, default=2600)
    parser.add_argument('--length', type=float, default=400)
    parser.add_argument('--loss', choices=['mse', 'smooth_l1', 'huber'], default='mse')
    parser.add_argument('--all_values', action='store_true', help='calculate_loss_over_all_values')
    parser.add_argument('--quiet', action='store_true')
    args = parser.parse_args(argv)
    log = (lambda *a: None) if args.quiet else print

    torch.manual_seed(0)
    np.random.seed(0)

    # S is the source sequence length
    # T is the target sequence length
    # N is the batch size
    # E is the feature number

    #src = torch.rand((10, 32, 512)) # (S,N,E)
    #tgt = torch.rand((20, 32, 512)) # (T,N,E)
    #out = transformer_model(src, tgt)

    calculate_loss_over_all_values = args.all_values

    input_window = args.input_window
    output_window = args.output_window
    batch_size = args.batch_size # batch size
    device = torch.device("cpu")

    # if window is 100 and prediction step is 1
    # in -> [0..99]
    # target -> [1..100]
    def create_inout_sequences(input_data, tw):
        inout_seq = []
        L = len(input_data)
        for i in range(L-tw):
            train_seq = np.append(input_data[i:i+tw][:-output_window] , output_window * [0])
            train_label = input_data[i:i+tw]
            #train_label = input_data[i+output_window:i+tw+output_window]
            inout_seq.append((train_seq ,train_label))
        return torch.FloatTensor(inout_seq)

    def get_data():
        time = np.arange(0, args.length, 0.1)
        amplitude = np.sin(time) + np.sin(time*0.05) +np.sin(time*0.12) *np.random.normal(-0.2, 0.2, len(time))

        # from sklearn.preprocessing import MinMaxScaler
        # scaler = MinMaxScaler(feature_range=(-1, 1))
        # amplitude = scaler.fit_transform(amplitude.reshape(-1, 1)).reshape(-1)
        lo, hi = amplitude.min(), amplitude.max()
        amplitude = (amplitude - lo) / (hi - lo) * 2 - 1

        sampels = args.samples
        train_data = amplitude[:sampels]
        test_data = amplitude[sampels:]

        # convert our train data into a pytorch train tensor
        #train_tensor = torch.FloatTensor(train_data).view(-1)
        # todo: add comment..
        train_sequence = create_inout_sequences(train_data,input_window)
        train_sequence = train_sequence[:-output_window] #todo: fix hack?

        #test_data = torch.FloatTensor(test_data).view(-1)
        test_data = create_inout_sequences(test_data,input_window)
        test_data = test_data[:-output_window] #todo: fix hack?

        return train_sequence.to(device),test_data.to(device)

    def get_batch(source, i,batch_size):
        seq_len = min(batch_size, len(source) - 1 - i)
        data = source[i:i+seq_len]
        input = torch.stack(torch.stack([item[0] for item in data]).chunk(input_window,1)) # 1 is feature size
        target = torch.stack(torch.stack([item[1] for item in data]).chunk(input_window,1))
        return input, target

    record = {'step_losses': [], 'val_losses': [], 'lrs': []}

    def train(train_data):
        model.train() # Turn on the train mode
        total_loss = 0.
        start_time = time.time()

        for batch, i in enumerate(range(0, len(train_data) - 1, batch_size)):
            data, targets = get_batch(train_data, i,batch_size)
            optimizer.zero_grad()
            output = model(data)

            if calculate_loss_over_all_values:
                loss = criterion(output, targets)
            else:
                loss = criterion(output[-output_window:], targets[-output_window:])

            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 0.5)
            optimizer.step()

            total_loss += loss.item()
            record['step_losses'].append(loss.item())
            log_interval = int(len(train_data) / batch_size / 5)
            if log_interval and batch % log_interval == 0 and batch > 0:
                cur_loss = total_loss / log_interval
                elapsed = time.time() - start_time
                log('| epoch {:3d} | {:5d}/{:5d} batches | '
                    'lr {:02.6f} | {:5.2f} ms | '
                    'loss {:5.5f} | ppl {:8.2f}'.format(
                        epoch, batch, len(train_data) // batch_size, scheduler.get_lr()[0],
                        elapsed * 1000 / log_interval,
                        cur_loss, math.exp(cur_loss)))
                total_loss = 0
                start_time = time.time()

    def evaluate(eval_model, data_source):
        eval_model.eval() # Turn on the evaluation mode
        total_loss = 0.
        eval_batch_size = 1000
        with torch.no_grad():
            for i in range(0, len(data_source) - 1, eval_batch_size):
                data, targets = get_batch(data_source, i,eval_batch_size)
                output = eval_model(data)
                if calculate_loss_over_all_values:
                    total_loss += len(data[0])* criterion(output, targets).cpu().item()
                else:
                    total_loss += len(data[0])* criterion(output[-output_window:], targets[-output_window:]).cpu().item()
        return total_loss / len(data_source)

    # predict the next n steps based on the input data
    def predict_future(eval_model, data_source,steps):
        eval_model.eval()
        total_loss = 0.
        test_result = torch.Tensor(0)
        truth = torch.Tensor(0)
        _ , data = get_batch(data_source, 0,1)
        with torch.no_grad():
            for i in range(0, steps,1):
                input = torch.clone(data[-input_window:])
                input[-output_window:] = 0
                output = eval_model(data[-input_window:])
                data = torch.cat((data, output[-1:]))

        data = data.cpu().view(-1)
        return data

    train_data, val_data = get_data()
    model = TransAm(args.feature_size, nhead=args.nhead).to(device)
    record['initial_state'] = {k: v.clone() for k, v in model.state_dict().items()}

    if args.loss == 'mse':
        criterion = nn.MSELoss()
    elif args.loss == 'smooth_l1':
        criterion = nn.SmoothL1Loss(beta=0.1)
    else:
        criterion = nn.HuberLoss(delta=0.1)
    lr = 0.005
    #optimizer = torch.optim.SGD(model.parameters(), lr=lr)
    optimizer = torch.optim.AdamW(model.parameters(), lr=lr)
    scheduler = torch.optim.lr_scheduler.StepLR(optimizer, 1.0, gamma=0.98)

    best_val_loss = float("inf")
    epochs = args.epochs # The number of epochs
    best_model = None

    for epoch in range(1, epochs + 1):
        epoch_start_time = time.time()
        train(train_data)

        val_loss = evaluate(model, val_data)
        record['val_losses'].append(val_loss)

        log('-' * 89)
        log('| end of epoch {:3d} | time: {:5.2f}s | valid loss {:5.5f} | valid ppl {:8.2f}'.format(epoch, (time.time() - epoch_start_time),
                                         val_loss, math.exp(val_loss)))
        log('-' * 89)

        scheduler.step()
        record['lrs'].append(scheduler.get_last_lr()[0])

    record['future'] = predict_future(model, val_data, 20)
    record['shapes'] = (tuple(train_data.shape), tuple(val_data.shape))
    return record


if __name__ == '__main__':
    main()
