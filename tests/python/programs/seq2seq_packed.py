"""bentrevett/pytorch-seq2seq, "4 - Packed Padded Sequences, Masking, Inference and BLEU": a bidirectional
GRU encoder over nn.utils.rnn.pack_padded_sequence(embedded, src_len.to('cpu'), enforce_sorted=False) and
pad_packed_sequence, torch.tanh(self.fc(torch.cat((hidden[-2,:,:], hidden[-1,:,:]), dim = 1))), the
additive Attention (hidden.unsqueeze(1).repeat(1, src_len, 1), masked_fill(mask == 0, -1e10), softmax),
the Decoder (torch.bmm of the attention with the permuted encoder outputs, assert (output == hidden).all()),
Seq2Seq with create_mask and teacher forcing by random.random(), init_weights over named_parameters
(nn.init.normal_(param.data, mean=0, std=0.01) / constant_), count_parameters, Adam,
CrossEntropyLoss(ignore_index = TRG_PAD_IDX), clip_grad_norm_, the best model saved with torch.save
(model.state_dict()) and reloaded, translate_sentence with its attentions = torch.zeros(max_len, 1,
len(src_indexes)) and a corpus BLEU by hand (torchtext's bleu_score). The Multi30k batches of torchtext's
BucketIterator(sort_within_batch=True) become a DataLoader with a pad_sequence collate_fn over unsorted
lengths (hence enforce_sorted=False); the corpus is a synthetic German-English one."""
import argparse
import collections
import math
import os
import random
import tempfile
import time

import torch
import torch.nn as nn
import torch.optim as optim
import torch.nn.functional as F
from torch.nn.utils.rnn import pad_sequence
from torch.utils.data import DataLoader


class Encoder(nn.Module):
    def __init__(self, input_dim, emb_dim, enc_hid_dim, dec_hid_dim, dropout):
        super().__init__()

        self.embedding = nn.Embedding(input_dim, emb_dim)

        self.rnn = nn.GRU(emb_dim, enc_hid_dim, bidirectional = True)

        self.fc = nn.Linear(enc_hid_dim * 2, dec_hid_dim)

        self.dropout = nn.Dropout(dropout)

    def forward(self, src, src_len):

        #src = [src len, batch size]
        #src_len = [batch size]

        embedded = self.dropout(self.embedding(src))

        #embedded = [src len, batch size, emb dim]

        #need to explicitly put lengths on cpu!
        packed_embedded = nn.utils.rnn.pack_padded_sequence(embedded, src_len.to('cpu'), enforce_sorted=False)

        packed_outputs, hidden = self.rnn(packed_embedded)

        #packed_outputs is a packed sequence containing all hidden states
        #hidden is now from the final non-padded element in the batch

        outputs, _ = nn.utils.rnn.pad_packed_sequence(packed_outputs)

        #outputs is now a non-packed sequence, all hidden states obtained
        #  when the input is a pad token are all zeros

        #outputs = [src len, batch size, hid dim * num directions]
        #hidden = [n layers * num directions, batch size, hid dim]

        #hidden is stacked [forward_1, backward_1, forward_2, backward_2, ...]
        #outputs are always from the last layer

        #hidden [-2, :, : ] is the last of the forwards RNN
        #hidden [-1, :, : ] is the last of the backwards RNN

        #initial decoder hidden is final hidden state of the forwards and backwards
        #  encoder RNNs fed through a linear layer
        hidden = torch.tanh(self.fc(torch.cat((hidden[-2,:,:], hidden[-1,:,:]), dim = 1)))

        #outputs = [src len, batch size, enc hid dim * 2]
        #hidden = [batch size, dec hid dim]

        return outputs, hidden


class Attention(nn.Module):
    def __init__(self, enc_hid_dim, dec_hid_dim):
        super().__init__()

        self.attn = nn.Linear((enc_hid_dim * 2) + dec_hid_dim, dec_hid_dim)
        self.v = nn.Linear(dec_hid_dim, 1, bias = False)

    def forward(self, hidden, encoder_outputs, mask):

        #hidden = [batch size, dec hid dim]
        #encoder_outputs = [src len, batch size, enc hid dim * 2]

        batch_size = encoder_outputs.shape[1]
        src_len = encoder_outputs.shape[0]

        #repeat decoder hidden state src_len times
        hidden = hidden.unsqueeze(1).repeat(1, src_len, 1)

        encoder_outputs = encoder_outputs.permute(1, 0, 2)

        #hidden = [batch size, src len, dec hid dim]
        #encoder_outputs = [batch size, src len, enc hid dim * 2]

        energy = torch.tanh(self.attn(torch.cat((hidden, encoder_outputs), dim = 2)))

        #energy = [batch size, src len, dec hid dim]

        attention = self.v(energy).squeeze(2)

        #attention = [batch size, src len]

        attention = attention.masked_fill(mask == 0, -1e10)

        return F.softmax(attention, dim = 1)


class Decoder(nn.Module):
    def __init__(self, output_dim, emb_dim, enc_hid_dim, dec_hid_dim, dropout, attention):
        super().__init__()

        self.output_dim = output_dim
        self.attention = attention

        self.embedding = nn.Embedding(output_dim, emb_dim)

        self.rnn = nn.GRU((enc_hid_dim * 2) + emb_dim, dec_hid_dim)

        self.fc_out = nn.Linear((enc_hid_dim * 2) + dec_hid_dim + emb_dim, output_dim)

        self.dropout = nn.Dropout(dropout)

    def forward(self, input, hidden, encoder_outputs, mask):

        #input = [batch size]
        #hidden = [batch size, dec hid dim]
        #encoder_outputs = [src len, batch size, enc hid dim * 2]
        #mask = [batch size, src len]

        input = input.unsqueeze(0)

        #input = [1, batch size]

        embedded = self.dropout(self.embedding(input))

        #embedded = [1, batch size, emb dim]

        a = self.attention(hidden, encoder_outputs, mask)

        #a = [batch size, src len]

        a = a.unsqueeze(1)

        #a = [batch size, 1, src len]

        encoder_outputs = encoder_outputs.permute(1, 0, 2)

        #encoder_outputs = [batch size, src len, enc hid dim * 2]

        weighted = torch.bmm(a, encoder_outputs)

        #weighted = [batch size, 1, enc hid dim * 2]

        weighted = weighted.permute(1, 0, 2)

        #weighted = [1, batch size, enc hid dim * 2]

        rnn_input = torch.cat((embedded, weighted), dim = 2)

        #rnn_input = [1, batch size, (enc hid dim * 2) + emb dim]

        output, hidden = self.rnn(rnn_input, hidden.unsqueeze(0))

        #output = [seq len, batch size, dec hid dim * n directions]
        #hidden = [n layers * n directions, batch size, dec hid dim]

        #seq len, n layers and n directions will always be 1 in this decoder, therefore:
        #output = [1, batch size, dec hid dim]
        #hidden = [1, batch size, dec hid dim]
        #this also means that output == hidden
        assert (output == hidden).all()

        embedded = embedded.squeeze(0)
        output = output.squeeze(0)
        weighted = weighted.squeeze(0)

        prediction = self.fc_out(torch.cat((output, weighted, embedded), dim = 1))

        #prediction = [batch size, output dim]

        return prediction, hidden.squeeze(0), a.squeeze(1)


class Seq2Seq(nn.Module):
    def __init__(self, encoder, decoder, src_pad_idx, device):
        super().__init__()

        self.encoder = encoder
        self.decoder = decoder
        self.src_pad_idx = src_pad_idx
        self.device = device

    def create_mask(self, src):
        mask = (src != self.src_pad_idx).permute(1, 0)
        return mask

    def forward(self, src, src_len, trg, teacher_forcing_ratio = 0.5):

        #src = [src len, batch size]
        #src_len = [batch size]
        #trg = [trg len, batch size]
        #teacher_forcing_ratio is probability to use teacher forcing
        #e.g. if teacher_forcing_ratio is 0.75 we use teacher forcing 75% of the time

        batch_size = src.shape[1]
        trg_len = trg.shape[0]
        trg_vocab_size = self.decoder.output_dim

        #tensor to store decoder outputs
        outputs = torch.zeros(trg_len, batch_size, trg_vocab_size).to(self.device)

        #encoder_outputs is all hidden states of the input sequence, back and forwards
        #hidden is the final forward and backward hidden states, passed through a linear layer
        encoder_outputs, hidden = self.encoder(src, src_len)

        #first input to the decoder is the <sos> tokens
        input = trg[0,:]

        mask = self.create_mask(src)

        #mask = [batch size, src len]

        for t in range(1, trg_len):

            #insert input token embedding, previous hidden state, all encoder hidden states
            #  and mask
            #receive output tensor (predictions) and new hidden state
            output, hidden, _ = self.decoder(input, hidden, encoder_outputs, mask)

            #place predictions in a tensor holding predictions for each token
            outputs[t] = output

            #decide if we are going to use teacher forcing or not
            teacher_force = random.random() < teacher_forcing_ratio

            #get the highest predicted token from our predictions
            top1 = output.argmax(1)

            #if teacher forcing, use actual next token as next input
            #if not, use predicted token
            input = trg[t] if teacher_force else top1

        return outputs


def init_weights(m):
    for name, param in m.named_parameters():
        if 'weight' in name:
            nn.init.normal_(param.data, mean=0, std=0.01)
        else:
            nn.init.constant_(param.data, 0)


def count_parameters(model):
    return sum(p.numel() for p in model.parameters() if p.requires_grad)


def train(model, iterator, optimizer, criterion, clip, record):

    model.train()

    epoch_loss = 0

    for i, batch in enumerate(iterator):

        src, src_len = batch.src
        trg = batch.trg

        optimizer.zero_grad()

        output = model(src, src_len, trg)

        #trg = [trg len, batch size]
        #output = [trg len, batch size, output dim]

        output_dim = output.shape[-1]

        output = output[1:].view(-1, output_dim)
        trg = trg[1:].view(-1)

        #trg = [(trg len - 1) * batch size]
        #output = [(trg len - 1) * batch size, output dim]

        loss = criterion(output, trg)

        loss.backward()

        record['grad_norms'].append(float(torch.nn.utils.clip_grad_norm_(model.parameters(), clip)))

        optimizer.step()

        epoch_loss += loss.item()
        record['step_losses'].append(loss.item())

    return epoch_loss / len(iterator)


def evaluate(model, iterator, criterion):

    model.eval()

    epoch_loss = 0

    with torch.no_grad():

        for i, batch in enumerate(iterator):

            src, src_len = batch.src
            trg = batch.trg

            output = model(src, src_len, trg, 0) #turn off teacher forcing

            #trg = [trg len, batch size]
            #output = [trg len, batch size, output dim]

            output_dim = output.shape[-1]

            output = output[1:].view(-1, output_dim)
            trg = trg[1:].view(-1)

            #trg = [(trg len - 1) * batch size]
            #output = [(trg len - 1) * batch size, output dim]

            loss = criterion(output, trg)

            epoch_loss += loss.item()

    return epoch_loss / len(iterator)


def epoch_time(start_time, end_time):
    elapsed_time = end_time - start_time
    elapsed_mins = int(elapsed_time / 60)
    elapsed_secs = int(elapsed_time - (elapsed_mins * 60))
    return elapsed_mins, elapsed_secs


# ---- data: torchtext's Field/BucketIterator stand-ins ---------------------------------------------------
class Vocab:
    def __init__(self, sentences, specials):
        counter = collections.Counter(tok for s in sentences for tok in s)
        self.itos = list(specials) + sorted(counter, key=lambda w: (-counter[w], w))
        self.stoi = collections.defaultdict(int, {w: i for i, w in enumerate(self.itos)})


class Field:
    def __init__(self, init_token='<sos>', eos_token='<eos>', pad_token='<pad>', unk_token='<unk>'):
        self.init_token, self.eos_token, self.pad_token, self.unk_token = init_token, eos_token, pad_token, unk_token

    def build_vocab(self, sentences):
        self.vocab = Vocab(sentences, [self.unk_token, self.pad_token, self.init_token, self.eos_token])

    def numericalize(self, tokens):
        return torch.tensor([self.vocab.stoi[t] for t in [self.init_token] + tokens + [self.eos_token]])


class Batch:
    def __init__(self, src, trg):
        self.src, self.trg = src, trg


def synthetic_multi30k(n, seed):
    de = "ein zwei mann frau hund katze spielt läuft auf dem der die rot blau großen kleinen straße park ball".split()
    en = "a two man woman dog cat plays runs on the the the red blue big small street park ball".split()
    rng = random.Random(seed)
    pairs = []
    for _ in range(n):
        ids = [rng.randrange(len(de)) for _ in range(rng.randint(3, 11))]
        src = [de[i] for i in ids]
        trg = [en[i] for i in ids]
        if len(trg) > 3 and rng.random() < 0.5:  # some reordering, as German does
            trg[1], trg[2] = trg[2], trg[1]
        pairs.append((src, trg))
    return pairs


def bleu_score(candidate_corpus, references_corpus, max_n=4):
    """torchtext.data.metrics.bleu_score with uniform weights."""
    clipped, total = [0] * max_n, [0] * max_n
    cand_len = ref_len = 0
    for cand, refs in zip(candidate_corpus, references_corpus):
        cand_len += len(cand)
        ref_len += min((len(r) for r in refs), key=lambda l: (abs(l - len(cand)), l))
        for n in range(1, max_n + 1):
            c = collections.Counter(tuple(cand[i:i + n]) for i in range(len(cand) - n + 1))
            r = collections.Counter()
            for ref in refs:
                r |= collections.Counter(tuple(ref[i:i + n]) for i in range(len(ref) - n + 1))
            clipped[n - 1] += sum((c & r).values())
            total[n - 1] += max(len(cand) - n + 1, 0)
    if min(clipped) == 0:
        return 0.0
    log_p = sum(math.log(clipped[i] / total[i]) for i in range(max_n)) / max_n
    bp = math.exp(min(1 - ref_len / cand_len, 0))
    return bp * math.exp(log_p)


def translate_sentence(sentence, src_field, trg_field, model, device, max_len = 50):

    model.eval()

    tokens = [token.lower() for token in sentence]

    tokens = [src_field.init_token] + tokens + [src_field.eos_token]

    src_indexes = [src_field.vocab.stoi[token] for token in tokens]

    src_tensor = torch.LongTensor(src_indexes).unsqueeze(1).to(device)

    src_len = torch.LongTensor([len(src_indexes)])

    with torch.no_grad():
        encoder_outputs, hidden = model.encoder(src_tensor, src_len)

    mask = model.create_mask(src_tensor)

    trg_indexes = [trg_field.vocab.stoi[trg_field.init_token]]

    attentions = torch.zeros(max_len, 1, len(src_indexes)).to(device)

    for i in range(max_len):

        trg_tensor = torch.LongTensor([trg_indexes[-1]]).to(device)

        with torch.no_grad():
            output, hidden, attention = model.decoder(trg_tensor, hidden, encoder_outputs, mask)

        attentions[i] = attention

        pred_token = output.argmax(1).item()

        trg_indexes.append(pred_token)

        if pred_token == trg_field.vocab.stoi[trg_field.eos_token]:
            break

    trg_tokens = [trg_field.vocab.itos[i] for i in trg_indexes]

    return trg_tokens[1:], attentions[:len(trg_tokens)-1]


def main(argv=None):
    parser = argparse.ArgumentParser()
    parser.add_argument('--n_train', type=int, default=256)
    parser.add_argument('--batch_size', type=int, default=128)
    parser.add_argument('--epochs', type=int, default=10)
    parser.add_argument('--emb_dim', type=int, default=256)
    parser.add_argument('--hid_dim', type=int, default=512)
    parser.add_argument('--dropout', type=float, default=0.5)
    parser.add_argument('--quiet', action='store_true')
    args = parser.parse_args(argv)
    log = (lambda *a: None) if args.quiet else print

    SEED = 1234

    random.seed(SEED)
    torch.manual_seed(SEED)
    torch.backends.cudnn.deterministic = True

    SRC, TRG = Field(), Field()
    train_data = synthetic_multi30k(args.n_train, 1)
    valid_data = synthetic_multi30k(64, 2)
    test_data = synthetic_multi30k(64, 3)
    SRC.build_vocab([s for s, _ in train_data])
    TRG.build_vocab([t for _, t in train_data])

    device = torch.device('cpu')
    SRC_PAD_IDX = SRC.vocab.stoi[SRC.pad_token]
    TRG_PAD_IDX = TRG.vocab.stoi[TRG.pad_token]

    def collate_fn(examples):
        src = [SRC.numericalize(s) for s, _ in examples]
        trg = [TRG.numericalize(t) for _, t in examples]
        src_len = torch.tensor([len(s) for s in src])
        return Batch((pad_sequence(src, padding_value=SRC_PAD_IDX), src_len),
                     pad_sequence(trg, padding_value=TRG_PAD_IDX))

    train_iterator = DataLoader(train_data, batch_size=args.batch_size, shuffle=True, collate_fn=collate_fn)
    valid_iterator = DataLoader(valid_data, batch_size=args.batch_size, collate_fn=collate_fn)
    test_iterator = DataLoader(test_data, batch_size=args.batch_size, collate_fn=collate_fn)

    INPUT_DIM = len(SRC.vocab.itos)
    OUTPUT_DIM = len(TRG.vocab.itos)
    ENC_EMB_DIM = args.emb_dim
    DEC_EMB_DIM = args.emb_dim
    ENC_HID_DIM = args.hid_dim
    DEC_HID_DIM = args.hid_dim
    ENC_DROPOUT = args.dropout
    DEC_DROPOUT = args.dropout

    attn = Attention(ENC_HID_DIM, DEC_HID_DIM)
    enc = Encoder(INPUT_DIM, ENC_EMB_DIM, ENC_HID_DIM, DEC_HID_DIM, ENC_DROPOUT)
    dec = Decoder(OUTPUT_DIM, DEC_EMB_DIM, ENC_HID_DIM, DEC_HID_DIM, DEC_DROPOUT, attn)

    model = Seq2Seq(enc, dec, SRC_PAD_IDX, device).to(device)

    model.apply(init_weights)
    initial_state = {k: v.clone() for k, v in model.state_dict().items()}

    log(f'The model has {count_parameters(model):,} trainable parameters')

    optimizer = optim.Adam(model.parameters())

    criterion = nn.CrossEntropyLoss(ignore_index = TRG_PAD_IDX)

    N_EPOCHS = args.epochs
    CLIP = 1

    best_valid_loss = float('inf')
    record = {'step_losses': [], 'grad_norms': [], 'valid_losses': []}
    path = os.path.join(tempfile.mkdtemp(), 'tut4-model.pt')

    for epoch in range(N_EPOCHS):

        start_time = time.time()

        train_loss = train(model, train_iterator, optimizer, criterion, CLIP, record)
        valid_loss = evaluate(model, valid_iterator, criterion)
        record['valid_losses'].append(valid_loss)

        end_time = time.time()

        epoch_mins, epoch_secs = epoch_time(start_time, end_time)

        if valid_loss < best_valid_loss:
            best_valid_loss = valid_loss
            torch.save(model.state_dict(), path)

        log(f'Epoch: {epoch+1:02} | Time: {epoch_mins}m {epoch_secs}s')
        log(f'\tTrain Loss: {train_loss:.3f} | Train PPL: {math.exp(train_loss):7.3f}')
        log(f'\t Val. Loss: {valid_loss:.3f} |  Val. PPL: {math.exp(valid_loss):7.3f}')

    model.load_state_dict(torch.load(path))

    test_loss = evaluate(model, test_iterator, criterion)

    log(f'| Test Loss: {test_loss:.3f} | Test PPL: {math.exp(test_loss):7.3f} |')

    example_idx = 12
    src, trg = test_data[example_idx]
    translation, attention = translate_sentence(src, SRC, TRG, model, device)
    log(f'src = {src}\ntrg = {trg}\npredicted trg = {translation}')

    trgs, pred_trgs = [], []
    for src, trg in test_data:
        pred_trg, _ = translate_sentence(src, SRC, TRG, model, device, max_len=20)
        #cut off <eos> token
        pred_trgs.append(pred_trg[:-1])
        trgs.append([trg])
    bleu = bleu_score(pred_trgs, trgs)
    log(f'BLEU score = {bleu*100:.2f}')

    record.update(initial_state=initial_state, test_loss=test_loss, translation=translation, attention=attention,
                  bleu=bleu, n_params=count_parameters(model))
    return record


if __name__ == '__main__':
    main()
