"""yunjey/pytorch-tutorial tutorials/02-intermediate/language_model (main.py and data_utils.py): the
Corpus that fills torch.LongTensor(tokens) one ids[token] = ... at a time and views it as
(batch_size, -1), an Embedding + nn.LSTM(batch_first=True) + Linear RNNLM whose output is reshaped to
(batch * seq, hidden), truncated backpropagation (detach of the (h, c) states between chunks),
CrossEntropyLoss on targets.reshape(-1), clip_grad_norm_ imported from torch.nn.utils, Adam, and the
sampling loop under torch.no_grad(): torch.multinomial(torch.ones(vocab), 1).unsqueeze(1), then
torch.multinomial(output.exp(), 1).item() and input.fill_(word_id), written to sample.txt.

What is changed: Penn Treebank's train.txt becomes a synthetic text (a small grammar drawn with
random.Random(0)) written to a temporary directory, the sizes are small, and the per-step printout
is kept under --quiet's control."""
import argparse
import os
import random
import tempfile

import numpy as np
import torch
import torch.nn as nn
from torch.nn.utils import clip_grad_norm_


class Dictionary(object):
    def __init__(self):
        self.word2idx = {}
        self.idx2word = {}
        self.idx = 0

    def add_word(self, word):
        if not word in self.word2idx:
            self.word2idx[word] = self.idx
            self.idx2word[self.idx] = word
            self.idx += 1

    def __len__(self):
        return len(self.word2idx)


class Corpus(object):
    def __init__(self, path='./data'):
        self.dictionary = Dictionary()

    def get_data(self, path, batch_size=20):
        # Add words to the dictionary
        with open(path, 'r') as f:
            tokens = 0
            for line in f:
                words = line.split() + ['<eos>']
                tokens += len(words)
                for word in words:
                    self.dictionary.add_word(word)

        # Tokenize the file content
        ids = torch.LongTensor(tokens)
        token = 0
        with open(path, 'r') as f:
            for line in f:
                words = line.split() + ['<eos>']
                for word in words:
                    ids[token] = self.dictionary.word2idx[word]
                    token += 1
        num_batches = ids.size(0) // batch_size
        ids = ids[:num_batches*batch_size]
        return ids.view(batch_size, -1)


# RNN based language model
class RNNLM(nn.Module):
    def __init__(self, vocab_size, embed_size, hidden_size, num_layers):
        super(RNNLM, self).__init__()
        self.embed = nn.Embedding(vocab_size, embed_size)
        self.lstm = nn.LSTM(embed_size, hidden_size, num_layers, batch_first=True)
        self.linear = nn.Linear(hidden_size, vocab_size)

    def forward(self, x, h):
        # Embed word ids to vectors
        x = self.embed(x)

        # Forward propagate LSTM
        out, (h, c) = self.lstm(x, h)

        # Reshape output to (batch_size*sequence_length, hidden_size)
        out = out.reshape(out.size(0)*out.size(1), out.size(2))

        # Decode hidden states of all time steps
        out = self.linear(out)
        return out, (h, c)


def write_synthetic_text(path, n_lines):
    """(harness) Penn Treebank's train.txt: sentences from a small grammar."""
    rng = random.Random(0)
    subjects = ["the company", "a trader", "the bank", "investors", "the board", "analysts", "the market"]
    verbs = ["said", "expects", "reported", "sold", "bought", "raised", "cut"]
    objects = ["shares", "its stake", "the price", "N million", "prices", "the rate", "earnings"]
    tails = ["", "last week", "in new york", "on monday", "this year", "<unk>"]
    with open(path, "w") as f:
        for _ in range(n_lines):
            f.write(" ".join(w for w in (rng.choice(subjects), rng.choice(verbs), rng.choice(objects),
                                         rng.choice(tails)) if w) + "\n")


def main(argv=None):
    parser = argparse.ArgumentParser()
    parser.add_argument('--embed-size', type=int, default=128)
    parser.add_argument('--hidden-size', type=int, default=1024)
    parser.add_argument('--num-layers', type=int, default=1)
    parser.add_argument('--num-epochs', type=int, default=5)
    parser.add_argument('--num-samples', type=int, default=1000)
    parser.add_argument('--batch-size', type=int, default=20)
    parser.add_argument('--seq-length', type=int, default=30)
    parser.add_argument('--learning-rate', type=float, default=0.002)
    parser.add_argument('--n-lines', type=int, default=2000)
    parser.add_argument('--quiet', action='store_true')
    args = parser.parse_args(argv)
    log = (lambda *a: None) if args.quiet else print
    torch.manual_seed(0)

    # Device configuration
    device = torch.device('cuda' if torch.cuda.is_available() else 'cpu')

    # Hyper-parameters
    embed_size = args.embed_size
    hidden_size = args.hidden_size
    num_layers = args.num_layers
    num_epochs = args.num_epochs
    num_samples = args.num_samples     # number of words to be sampled
    batch_size = args.batch_size
    seq_length = args.seq_length
    learning_rate = args.learning_rate

    tmp = tempfile.TemporaryDirectory()
    write_synthetic_text(os.path.join(tmp.name, 'train.txt'), args.n_lines)

    # Load "Penn Treebank" dataset
    corpus = Corpus()
    ids = corpus.get_data(os.path.join(tmp.name, 'train.txt'), batch_size)
    vocab_size = len(corpus.dictionary)
    num_batches = ids.size(1) // seq_length

    model = RNNLM(vocab_size, embed_size, hidden_size, num_layers).to(device)
    initial_state = {k: v.clone() for k, v in model.state_dict().items()}

    # Loss and optimizer
    criterion = nn.CrossEntropyLoss()
    optimizer = torch.optim.Adam(model.parameters(), lr=learning_rate)

    # Truncated backpropagation
    def detach(states):
        return [state.detach() for state in states]

    step_losses, grad_norms = [], []
    # Train the model
    for epoch in range(num_epochs):
        # Set initial hidden and cell states
        states = (torch.zeros(num_layers, batch_size, hidden_size).to(device),
                  torch.zeros(num_layers, batch_size, hidden_size).to(device))

        for i in range(0, ids.size(1) - seq_length, seq_length):
            # Get mini-batch inputs and targets
            inputs = ids[:, i:i+seq_length].to(device)
            targets = ids[:, (i+1):(i+1)+seq_length].to(device)

            # Forward pass
            states = detach(states)
            outputs, states = model(inputs, states)
            loss = criterion(outputs, targets.reshape(-1))

            # Backward and optimize
            optimizer.zero_grad()
            loss.backward()
            grad_norms.append(clip_grad_norm_(model.parameters(), 0.5).item())
            optimizer.step()
            step_losses.append(loss.item())

            step = (i+1) // seq_length
            if step % 100 == 0:
                log('Epoch [{}/{}], Step[{}/{}], Loss: {:.4f}, Perplexity: {:5.2f}'
                    .format(epoch+1, num_epochs, step, num_batches, loss.item(), np.exp(loss.item())))

    # Test the model
    sampled = []
    with torch.no_grad():
        with open(os.path.join(tmp.name, 'sample.txt'), 'w') as f:
            # Set intial hidden and cell states
            state = (torch.zeros(num_layers, 1, hidden_size).to(device),
                     torch.zeros(num_layers, 1, hidden_size).to(device))

            # Select one word id randomly
            prob = torch.ones(vocab_size)
            input = torch.multinomial(prob, num_samples=1).unsqueeze(1).to(device)

            for i in range(num_samples):
                # Forward propagate RNN
                output, state = model(input, state)

                # Sample a word id
                prob = output.exp()
                word_id = torch.multinomial(prob, num_samples=1).item()

                # Fill input with sampled word id for the next time step
                input.fill_(word_id)

                # File write
                word = corpus.dictionary.idx2word[word_id]
                word = '\n' if word == '<eos>' else word + ' '
                f.write(word)
                sampled.append(word_id)

                if (i+1) % 100 == 0:
                    log('Sampled [{}/{}] words and save to {}'.format(i+1, num_samples, 'sample.txt'))
        with open(os.path.join(tmp.name, 'sample.txt')) as f:
            text = f.read()

    # Save the model checkpoints
    torch.save(model.state_dict(), os.path.join(tmp.name, 'model.ckpt'))
    reloaded = torch.load(os.path.join(tmp.name, 'model.ckpt'))
    tmp.cleanup()
    return {"initial_state": initial_state, "step_losses": step_losses, "grad_norms": grad_norms,
            "sampled": sampled, "text": text, "ids": ids, "vocab_size": vocab_size,
            "reloaded_keys": list(reloaded)}


if __name__ == '__main__':
    main()
