"""The PyTorch tutorials "NLP From Scratch": classifying names with a character-level RNN and
generating names with one. Both RNNs are hand-written (nn.Linear over torch.cat of input and hidden,
nn.LogSoftmax), trained one name per step with manual SGD (p.data.add_(p.grad.data, alpha=-lr));
one-hot letters through tensor[li][0][i] = 1, predictions by topk, a confusion matrix filled by
confusion[i][j] += 1, and sampling that indexes a Python string with a 0-d tensor
(all_letters[topi]) or draws with torch.multinomial. The name files are replaced by synthetic names."""
import argparse
import math
import random
import string
import time
import unicodedata

import torch
import torch.nn as nn

all_letters = string.ascii_letters + " .,;'-"
n_letters = len(all_letters) + 1  # Plus EOS marker (generation)


def unicodeToAscii(s):
    return ''.join(c for c in unicodedata.normalize('NFD', s)
                   if unicodedata.category(c) != 'Mn' and c in all_letters)


def synthetic_names(rng, per_category=40):
    """Names whose syllables depend on the language, so the category can be learned."""
    syllables = {"English": ["son", "ton", "ley", "wood", "ham"], "Italian": ["ini", "elli", "one", "ucci"],
                 "Japanese": ["ka", "mo", "shi", "ta", "ro"], "Polish": ["ski", "wicz", "czak", "ow"]}
    out = {}
    for cat, syl in syllables.items():
        names = []
        for _ in range(per_category):
            n = "".join(rng.choice(syl) for _ in range(rng.randint(1, 3)))
            names.append(unicodeToAscii(n.capitalize()))
        out[cat] = names
    return out


def letterToIndex(letter):
    return all_letters.find(letter)


def lineToTensor(line):
    tensor = torch.zeros(len(line), 1, n_letters)
    for li, letter in enumerate(line):
        tensor[li][0][letterToIndex(letter)] = 1
    return tensor


class RNN(nn.Module):
    """Classification: input + hidden -> hidden, output."""

    def __init__(self, input_size, hidden_size, output_size):
        super(RNN, self).__init__()
        self.hidden_size = hidden_size
        self.i2h = nn.Linear(input_size + hidden_size, hidden_size)
        self.i2o = nn.Linear(input_size + hidden_size, output_size)
        self.softmax = nn.LogSoftmax(dim=1)

    def forward(self, input, hidden):
        combined = torch.cat((input, hidden), 1)
        hidden = self.i2h(combined)
        output = self.i2o(combined)
        output = self.softmax(output)
        return output, hidden

    def initHidden(self):
        return torch.zeros(1, self.hidden_size)


class GenRNN(nn.Module):
    """Generation: category + input + hidden -> hidden, output, then o2o and dropout."""

    def __init__(self, n_categories, input_size, hidden_size, output_size):
        super(GenRNN, self).__init__()
        self.hidden_size = hidden_size
        self.i2h = nn.Linear(n_categories + input_size + hidden_size, hidden_size)
        self.i2o = nn.Linear(n_categories + input_size + hidden_size, output_size)
        self.o2o = nn.Linear(hidden_size + output_size, output_size)
        self.dropout = nn.Dropout(0.1)
        self.softmax = nn.LogSoftmax(dim=1)

    def forward(self, category, input, hidden):
        input_combined = torch.cat((category, input, hidden), 1)
        hidden = self.i2h(input_combined)
        output = self.i2o(input_combined)
        output_combined = torch.cat((hidden, output), 1)
        output = self.o2o(output_combined)
        output = self.dropout(output)
        output = self.softmax(output)
        return output, hidden

    def initHidden(self):
        return torch.zeros(1, self.hidden_size)


def classify(args, category_lines, all_categories, log):
    n_categories = len(all_categories)
    rnn = RNN(n_letters, args.hidden, n_categories)
    initial = {k: v.clone() for k, v in rnn.state_dict().items()}

    def categoryFromOutput(output):
        top_n, top_i = output.topk(1)
        category_i = top_i[0].item()
        return all_categories[category_i], category_i

    def randomChoice(l):
        return l[random.randint(0, len(l) - 1)]

    def randomTrainingExample():
        category = randomChoice(all_categories)
        line = randomChoice(category_lines[category])
        category_tensor = torch.tensor([all_categories.index(category)], dtype=torch.long)
        line_tensor = lineToTensor(line)
        return category, line, category_tensor, line_tensor

    criterion = nn.NLLLoss()
    learning_rate = args.lr

    def train(category_tensor, line_tensor):
        hidden = rnn.initHidden()
        rnn.zero_grad()
        for i in range(line_tensor.size()[0]):
            output, hidden = rnn(line_tensor[i], hidden)
        loss = criterion(output, category_tensor)
        loss.backward()
        # Add parameters' gradients to their values, multiplied by learning rate
        for p in rnn.parameters():
            p.data.add_(p.grad.data, alpha=-learning_rate)
        return output, loss.item()

    losses = []
    start = time.time()
    for iter in range(1, args.iters + 1):
        category, line, category_tensor, line_tensor = randomTrainingExample()
        output, loss = train(category_tensor, line_tensor)
        losses.append(loss)
        if iter % args.print_every == 0:
            guess, guess_i = categoryFromOutput(output)
            correct = '✓' if guess == category else '✗ (%s)' % category
            log('%d %d%% (%.2fs) %.4f %s / %s %s' % (iter, iter / args.iters * 100, time.time() - start, loss,
                                                    line, guess, correct))

    def evaluate(line_tensor):
        hidden = rnn.initHidden()
        for i in range(line_tensor.size()[0]):
            output, hidden = rnn(line_tensor[i], hidden)
        return output

    confusion = torch.zeros(n_categories, n_categories)
    for i in range(args.confusion):
        category, line, category_tensor, line_tensor = randomTrainingExample()
        output = evaluate(line_tensor)
        guess, guess_i = categoryFromOutput(output)
        category_i = all_categories.index(category)
        confusion[category_i][guess_i] += 1
    for i in range(n_categories):
        confusion[i] = confusion[i] / confusion[i].sum()

    def predict(input_line, n_predictions=3):
        with torch.no_grad():
            output = evaluate(lineToTensor(input_line))
            topv, topi = output.topk(n_predictions, 1, True)
            predictions = []
            for i in range(n_predictions):
                value = topv[0][i].item()
                category_index = topi[0][i].item()
                predictions.append([value, all_categories[category_index]])
        return predictions

    preds = [predict(n) for n in ("Dovesky", "Jackson", "Satoshi")]
    return initial, losses, confusion.numpy(), preds


def generate(args, category_lines, all_categories, log):
    n_categories = len(all_categories)
    rnn = GenRNN(n_categories, n_letters, args.hidden, n_letters)
    initial = {k: v.clone() for k, v in rnn.state_dict().items()}

    def categoryTensor(category):
        li = all_categories.index(category)
        tensor = torch.zeros(1, n_categories)
        tensor[0][li] = 1
        return tensor

    def inputTensor(line):
        tensor = torch.zeros(len(line), 1, n_letters)
        for li in range(len(line)):
            letter = line[li]
            tensor[li][0][all_letters.find(letter)] = 1
        return tensor

    def targetTensor(line):
        letter_indexes = [all_letters.find(line[li]) for li in range(1, len(line))]
        letter_indexes.append(n_letters - 1)  # EOS
        return torch.LongTensor(letter_indexes)

    def randomTrainingExample():
        category = random.choice(all_categories)
        line = random.choice(category_lines[category])
        return categoryTensor(category), inputTensor(line), targetTensor(line)

    criterion = nn.NLLLoss()
    learning_rate = args.lr

    def train(category_tensor, input_line_tensor, target_line_tensor):
        target_line_tensor.unsqueeze_(-1)
        hidden = rnn.initHidden()
        rnn.zero_grad()
        loss = 0
        for i in range(input_line_tensor.size(0)):
            output, hidden = rnn(category_tensor, input_line_tensor[i], hidden)
            l = criterion(output, target_line_tensor[i])
            loss += l
        loss.backward()
        for p in rnn.parameters():
            p.data.add_(p.grad.data, alpha=-learning_rate)
        return output, loss.item() / input_line_tensor.size(0)

    losses = []
    for iter in range(1, args.iters + 1):
        output, loss = train(*randomTrainingExample())
        losses.append(loss)
        if iter % args.print_every == 0:
            log('(%d %d%%) %.4f' % (iter, iter / args.iters * 100, loss))

    max_length = 20

    def sample(category, start_letter='A', temperature=None):
        with torch.no_grad():  # no need to track history in sampling
            category_tensor = categoryTensor(category)
            input = inputTensor(start_letter)
            hidden = rnn.initHidden()
            output_name = start_letter
            for i in range(max_length):
                output, hidden = rnn(category_tensor, input[0], hidden)
                if temperature is None:
                    topv, topi = output.topk(1)
                    topi = topi[0][0]
                else:
                    topi = torch.multinomial(output.div(temperature).exp().squeeze(0), 1)[0]
                if topi == n_letters - 1:
                    break
                else:
                    letter = all_letters[topi]
                    output_name += letter
                input = inputTensor(letter)
            return output_name

    rnn.eval()
    samples = [sample(c, s) for c in all_categories for s in "ABC"]
    samples += [sample(c, "K", temperature=0.8) for c in all_categories]
    return initial, losses, samples


def main(argv=None):
    parser = argparse.ArgumentParser()
    parser.add_argument("--task", choices=["classify", "generate"], default="classify")
    parser.add_argument("--hidden", type=int, default=128)
    parser.add_argument("--iters", type=int, default=100000)
    parser.add_argument("--lr", type=float, default=0.005)
    parser.add_argument("--print-every", type=int, default=5000)
    parser.add_argument("--confusion", type=int, default=10000)
    parser.add_argument("--quiet", action="store_true")
    args = parser.parse_args(argv)
    log = (lambda *a: None) if args.quiet else print

    random.seed(0)
    torch.manual_seed(0)
    category_lines = synthetic_names(random.Random(1))
    all_categories = list(category_lines)
    if args.task == "classify":
        initial, losses, confusion, preds = classify(args, category_lines, all_categories, log)
        return {"initial_state": initial, "step_losses": losses, "confusion": confusion, "predictions": preds}
    initial, losses, samples = generate(args, category_lines, all_categories, log)
    return {"initial_state": initial, "step_losses": losses, "samples": samples}


if __name__ == "__main__":
    main()
