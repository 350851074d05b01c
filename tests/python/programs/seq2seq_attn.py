"""The PyTorch tutorial "NLP From Scratch: Translation with a Sequence to Sequence Network and
Attention": EncoderRNN / AttnDecoderRNN over nn.GRU, one sentence pair per step, teacher forcing
chosen by random.random(), greedy decoding with topk(1) and .squeeze().detach(), nn.NLLLoss on
F.log_softmax, two optim.SGD optimizers. The French-English file is replaced by a synthetic
"translation" (each word mapped to a fixed other word, order reversed) so the test needs no data."""
from __future__ import unicode_literals, print_function, division

import argparse
import math
import random
import re
import time
import unicodedata

import torch
import torch.nn as nn
from torch import optim
import torch.nn.functional as F

device = torch.device("cuda" if torch.cuda.is_available() else "cpu")

SOS_token = 0
EOS_token = 1
MAX_LENGTH = 10


class Lang:
    def __init__(self, name):
        self.name = name
        self.word2index = {}
        self.word2count = {}
        self.index2word = {0: "SOS", 1: "EOS"}
        self.n_words = 2  # Count SOS and EOS

    def addSentence(self, sentence):
        for word in sentence.split(' '):
            self.addWord(word)

    def addWord(self, word):
        if word not in self.word2index:
            self.word2index[word] = self.n_words
            self.word2count[word] = 1
            self.index2word[self.n_words] = word
            self.n_words += 1
        else:
            self.word2count[word] += 1


def unicodeToAscii(s):
    return ''.join(c for c in unicodedata.normalize('NFD', s) if unicodedata.category(c) != 'Mn')


def normalizeString(s):
    s = unicodeToAscii(s.lower().strip())
    s = re.sub(r"([.!?])", r" \1", s)
    s = re.sub(r"[^a-zA-Z.!?]+", r" ", s)
    return s.strip()


def synthetic_pairs(n, rng):
    src = ["je", "suis", "tu", "es", "il", "est", "elle", "nous", "grand", "petit", "content", "fatigue",
           "tres", "pas", "ici", "la"]
    tgt = ["i", "am", "you", "are", "he", "is", "she", "we", "big", "small", "happy", "tired",
           "very", "not", "here", "there"]
    pairs = []
    for _ in range(n):
        k = rng.randint(2, 6)
        idx = [rng.randrange(len(src)) for _ in range(k)]
        s = " ".join(src[i] for i in idx) + " ."
        t = " ".join(tgt[i] for i in reversed(idx)) + " ."
        pairs.append([normalizeString(s), normalizeString(t)])
    return pairs


def prepareData(pairs):
    input_lang, output_lang = Lang("fra"), Lang("eng")
    pairs = [p for p in pairs if len(p[0].split(' ')) < MAX_LENGTH and len(p[1].split(' ')) < MAX_LENGTH]
    for pair in pairs:
        input_lang.addSentence(pair[0])
        output_lang.addSentence(pair[1])
    return input_lang, output_lang, pairs


class EncoderRNN(nn.Module):
    def __init__(self, input_size, hidden_size):
        super(EncoderRNN, self).__init__()
        self.hidden_size = hidden_size
        self.embedding = nn.Embedding(input_size, hidden_size)
        self.gru = nn.GRU(hidden_size, hidden_size)

    def forward(self, input, hidden):
        embedded = self.embedding(input).view(1, 1, -1)
        output = embedded
        output, hidden = self.gru(output, hidden)
        return output, hidden

    def initHidden(self):
        return torch.zeros(1, 1, self.hidden_size, device=device)


class AttnDecoderRNN(nn.Module):
    def __init__(self, hidden_size, output_size, dropout_p=0.1, max_length=MAX_LENGTH):
        super(AttnDecoderRNN, self).__init__()
        self.hidden_size = hidden_size
        self.output_size = output_size
        self.dropout_p = dropout_p
        self.max_length = max_length

        self.embedding = nn.Embedding(self.output_size, self.hidden_size)
        self.attn = nn.Linear(self.hidden_size * 2, self.max_length)
        self.attn_combine = nn.Linear(self.hidden_size * 2, self.hidden_size)
        self.dropout = nn.Dropout(self.dropout_p)
        self.gru = nn.GRU(self.hidden_size, self.hidden_size)
        self.out = nn.Linear(self.hidden_size, self.output_size)

    def forward(self, input, hidden, encoder_outputs):
        embedded = self.embedding(input).view(1, 1, -1)
        embedded = self.dropout(embedded)

        attn_weights = F.softmax(self.attn(torch.cat((embedded[0], hidden[0]), 1)), dim=1)
        attn_applied = torch.bmm(attn_weights.unsqueeze(0), encoder_outputs.unsqueeze(0))

        output = torch.cat((embedded[0], attn_applied[0]), 1)
        output = self.attn_combine(output).unsqueeze(0)

        output = F.relu(output)
        output, hidden = self.gru(output, hidden)

        output = F.log_softmax(self.out(output[0]), dim=1)
        return output, hidden, attn_weights

    def initHidden(self):
        return torch.zeros(1, 1, self.hidden_size, device=device)


def indexesFromSentence(lang, sentence):
    return [lang.word2index[word] for word in sentence.split(' ')]


def tensorFromSentence(lang, sentence):
    indexes = indexesFromSentence(lang, sentence)
    indexes.append(EOS_token)
    return torch.tensor(indexes, dtype=torch.long, device=device).view(-1, 1)


teacher_forcing_ratio = 0.5


def train(input_tensor, target_tensor, encoder, decoder, encoder_optimizer, decoder_optimizer, criterion,
          max_length=MAX_LENGTH):
    encoder_hidden = encoder.initHidden()

    encoder_optimizer.zero_grad()
    decoder_optimizer.zero_grad()

    input_length = input_tensor.size(0)
    target_length = target_tensor.size(0)

    encoder_outputs = torch.zeros(max_length, encoder.hidden_size, device=device)

    loss = 0

    for ei in range(input_length):
        encoder_output, encoder_hidden = encoder(input_tensor[ei], encoder_hidden)
        encoder_outputs[ei] = encoder_output[0, 0]

    decoder_input = torch.tensor([[SOS_token]], device=device)

    decoder_hidden = encoder_hidden

    use_teacher_forcing = True if random.random() < teacher_forcing_ratio else False

    if use_teacher_forcing:
        # Teacher forcing: Feed the target as the next input
        for di in range(target_length):
            decoder_output, decoder_hidden, decoder_attention = decoder(decoder_input, decoder_hidden,
                                                                        encoder_outputs)
            loss += criterion(decoder_output, target_tensor[di])
            decoder_input = target_tensor[di]  # Teacher forcing
    else:
        # Without teacher forcing: use its own predictions as the next input
        for di in range(target_length):
            decoder_output, decoder_hidden, decoder_attention = decoder(decoder_input, decoder_hidden,
                                                                        encoder_outputs)
            topv, topi = decoder_output.topk(1)
            decoder_input = topi.squeeze().detach()  # detach from history as input

            loss += criterion(decoder_output, target_tensor[di])
            if decoder_input.item() == EOS_token:
                break

    loss.backward()

    encoder_optimizer.step()
    decoder_optimizer.step()

    return loss.item() / target_length


def asMinutes(s):
    m = math.floor(s / 60)
    s -= m * 60
    return '%dm %ds' % (m, s)


def timeSince(since, percent):
    now = time.time()
    s = now - since
    es = s / (percent)
    rs = es - s
    return '%s (- %s)' % (asMinutes(s), asMinutes(rs))


def evaluate(encoder, decoder, input_lang, output_lang, sentence, max_length=MAX_LENGTH):
    with torch.no_grad():
        input_tensor = tensorFromSentence(input_lang, sentence)
        input_length = input_tensor.size()[0]
        encoder_hidden = encoder.initHidden()

        encoder_outputs = torch.zeros(max_length, encoder.hidden_size, device=device)

        for ei in range(input_length):
            encoder_output, encoder_hidden = encoder(input_tensor[ei], encoder_hidden)
            encoder_outputs[ei] += encoder_output[0, 0]

        decoder_input = torch.tensor([[SOS_token]], device=device)  # SOS

        decoder_hidden = encoder_hidden

        decoded_words = []
        decoder_attentions = torch.zeros(max_length, max_length)

        for di in range(max_length):
            decoder_output, decoder_hidden, decoder_attention = decoder(decoder_input, decoder_hidden,
                                                                        encoder_outputs)
            decoder_attentions[di] = decoder_attention.data
            topv, topi = decoder_output.data.topk(1)
            if topi.item() == EOS_token:
                decoded_words.append('<EOS>')
                break
            else:
                decoded_words.append(output_lang.index2word[topi.item()])

            decoder_input = topi.squeeze().detach()

        return decoded_words, decoder_attentions[:di + 1]


def main(argv=None):
    parser = argparse.ArgumentParser()
    parser.add_argument("--pairs", type=int, default=200)
    parser.add_argument("--hidden", type=int, default=256)
    parser.add_argument("--iters", type=int, default=75000)
    parser.add_argument("--lr", type=float, default=0.01)
    parser.add_argument("--print-every", type=int, default=5000)
    parser.add_argument("--quiet", action="store_true")
    args = parser.parse_args(argv)
    log = (lambda *a: None) if args.quiet else print

    random.seed(1)
    torch.manual_seed(1)
    input_lang, output_lang, pairs = prepareData(synthetic_pairs(args.pairs, random.Random(0)))
    encoder1 = EncoderRNN(input_lang.n_words, args.hidden).to(device)
    attn_decoder1 = AttnDecoderRNN(args.hidden, output_lang.n_words, dropout_p=0.1).to(device)
    initial_state = {"enc." + k: v.clone() for k, v in encoder1.state_dict().items()}
    initial_state.update({"dec." + k: v.clone() for k, v in attn_decoder1.state_dict().items()})

    def tensorsFromPair(pair):
        return (tensorFromSentence(input_lang, pair[0]), tensorFromSentence(output_lang, pair[1]))

    # trainIters
    start = time.time()
    step_losses = []
    print_loss_total = 0  # Reset every print_every
    encoder_optimizer = optim.SGD(encoder1.parameters(), lr=args.lr)
    decoder_optimizer = optim.SGD(attn_decoder1.parameters(), lr=args.lr)
    training_pairs = [tensorsFromPair(random.choice(pairs)) for i in range(args.iters)]
    criterion = nn.NLLLoss()
    for iter in range(1, args.iters + 1):
        training_pair = training_pairs[iter - 1]
        input_tensor = training_pair[0]
        target_tensor = training_pair[1]
        loss = train(input_tensor, target_tensor, encoder1, attn_decoder1, encoder_optimizer,
                     decoder_optimizer, criterion)
        step_losses.append(loss)
        print_loss_total += loss
        if iter % args.print_every == 0:
            print_loss_avg = print_loss_total / args.print_every
            print_loss_total = 0
            log('%s (%d %d%%) %.4f' % (timeSince(start, iter / args.iters), iter, iter / args.iters * 100,
                                       print_loss_avg))

    # evaluateRandomly
    encoder1.eval()
    attn_decoder1.eval()
    decoded = []
    attentions = []
    for i in range(5):
        pair = random.choice(pairs)
        output_words, att = evaluate(encoder1, attn_decoder1, input_lang, output_lang, pair[0])
        decoded.append(' '.join(output_words))
        attentions.append(att.numpy())
        log('>', pair[0], '\n=', pair[1], '\n<', decoded[-1])
    return {"initial_state": initial_state, "step_losses": step_losses, "decoded": decoded,
            "attentions": attentions}


if __name__ == "__main__":
    main()
