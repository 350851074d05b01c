"""Andrej Karpathy's "Neural Networks: Zero to Hero" makemore notebooks, as written there:

- part 3 (makemore_part3_bn.ipynb, "PyTorch-ifying the code"): Linear/BatchNorm1d/Tanh classes of
  plain tensors drawn with g = torch.Generator().manual_seed(2147483647), the batch norm's running
  stats updated under torch.no_grad(), layers[-1].gamma *= 0.1 in place under no_grad,
  p.requires_grad = True, layer.out.retain_grad() on every layer, p.grad = None, p.data += -lr *
  p.grad, loss.log10(), the update-to-data ratios ((lr*p.grad).std() / p.data.std()).log10(), the
  activation and gradient statistics with torch.histogram(t, density=True), split_loss under
  @torch.no_grad() and sampling with torch.multinomial(probs, num_samples=1, generator=g);
- part 4 (makemore_part4_backprop.ipynb, "becoming a backprop ninja"): the forward pass broken into
  atoms (counts_sum**-1, (bnvar + 1e-5)**-0.5, logprobs[range(n), Yb]), retain_grad() on each, the
  hand-written backward pass (torch.zeros_like, F.one_hot(logits.max(1).indices,
  num_classes=...), the dC[ix] += demb[k,j] loop) compared with cmp() (torch.all(dt == t.grad),
  torch.allclose), the fused cross-entropy and batch-norm backward formulas, and exercise 4's
  training loop on hand-computed gradients under torch.no_grad();
- part 5 (makemore_part5_cnn1.ipynb, the WaveNet): Embedding/FlattenConsecutive/Sequential classes,
  BatchNorm1d over dim = (0, 1) for 3-D inputs, x.view(B, T//n, C*n) and squeeze(1), torch.manual_seed(42)
  and the global generator, model.layers[-1].weight *= 0.1, torch.tensor(lossi).view(-1, k).mean(1),
  layer.training = False and sampling from model(torch.tensor([context])).

What is changed: the harness seeds the global generator (part 4's batch-norm parameters draw from it
unseeded in the notebook), names.txt becomes synthetic names (syllables drawn with random.Random(0)), the step
counts and layer widths are small, and the plots are gone (their numbers are returned)."""
import argparse
import random

import torch
import torch.nn.functional as F


def synthetic_names(n):
    """(harness) names.txt: lowercase names made of a few syllables."""
    rng = random.Random(0)
    onsets = ["m", "j", "k", "l", "s", "a", "e", "r", "n", "b", "d", "t", "z", "v", "c", "h"]
    nuclei = ["a", "e", "i", "o", "u", "ia", "ae", "y", "ei", "ou"]
    codas = ["", "", "n", "l", "h", "r", "s", "x", "lyn", "ah", "son", "nna"]
    words = []
    for _ in range(n):
        k = rng.choice([1, 2, 2, 3])
        words.append("".join(rng.choice(onsets) + rng.choice(nuclei) for _ in range(k)) + rng.choice(codas))
    return words


def load_data(n_words, block_size):
    words = synthetic_names(n_words)
    # build the vocabulary of characters and mappings to/from integers
    chars = sorted(list(set(''.join(words))))
    stoi = {s: i + 1 for i, s in enumerate(chars)}
    stoi['.'] = 0
    itos = {i: s for s, i in stoi.items()}
    vocab_size = len(itos)

    # build the dataset
    def build_dataset(words):
        X, Y = [], []
        for w in words:
            context = [0] * block_size
            for ch in w + '.':
                ix = stoi[ch]
                X.append(context)
                Y.append(ix)
                context = context[1:] + [ix]  # crop and append

        X = torch.tensor(X)
        Y = torch.tensor(Y)
        return X, Y

    random.seed(42)
    random.shuffle(words)
    n1 = int(0.8 * len(words))
    n2 = int(0.9 * len(words))

    Xtr, Ytr = build_dataset(words[:n1])     # 80%
    Xdev, Ydev = build_dataset(words[n1:n2])   # 10%
    Xte, Yte = build_dataset(words[n2:])     # 10%
    return itos, vocab_size, (Xtr, Ytr), (Xdev, Ydev), (Xte, Yte)


# ----------------------------------------------------------------------------- part 3
def part3(args, log):
    block_size = 3
    itos, vocab_size, (Xtr, Ytr), (Xdev, Ydev), (Xte, Yte) = load_data(args.n_words, block_size)
    g = torch.Generator().manual_seed(2147483647)  # for reproducibility

    class Linear:

        def __init__(self, fan_in, fan_out, bias=True):
            self.weight = torch.randn((fan_in, fan_out), generator=g) / fan_in**0.5
            self.bias = torch.zeros(fan_out) if bias else None

        def __call__(self, x):
            self.out = x @ self.weight
            if self.bias is not None:
                self.out += self.bias
            return self.out

        def parameters(self):
            return [self.weight] + ([] if self.bias is None else [self.bias])

    class BatchNorm1d:

        def __init__(self, dim, eps=1e-5, momentum=0.1):
            self.eps = eps
            self.momentum = momentum
            self.training = True
            # parameters (trained with backprop)
            self.gamma = torch.ones(dim)
            self.beta = torch.zeros(dim)
            # buffers (trained with a running 'momentum update')
            self.running_mean = torch.zeros(dim)
            self.running_var = torch.ones(dim)

        def __call__(self, x):
            # calculate the forward pass
            if self.training:
                xmean = x.mean(0, keepdim=True)  # batch mean
                xvar = x.var(0, keepdim=True)  # batch variance
            else:
                xmean = self.running_mean
                xvar = self.running_var
            xhat = (x - xmean) / torch.sqrt(xvar + self.eps)  # normalize to unit variance
            self.out = self.gamma * xhat + self.beta
            # update the buffers
            if self.training:
                with torch.no_grad():
                    self.running_mean = (1 - self.momentum) * self.running_mean + self.momentum * xmean
                    self.running_var = (1 - self.momentum) * self.running_var + self.momentum * xvar
            return self.out

        def parameters(self):
            return [self.gamma, self.beta]

    class Tanh:
        def __call__(self, x):
            self.out = torch.tanh(x)
            return self.out

        def parameters(self):
            return []

    n_embd = 10  # the dimensionality of the character embedding vectors
    n_hidden = args.n_hidden  # the number of neurons in the hidden layer of the MLP

    C = torch.randn((vocab_size, n_embd), generator=g)
    layers = [
        Linear(n_embd * block_size, n_hidden, bias=False), BatchNorm1d(n_hidden), Tanh(),
        Linear(n_hidden, n_hidden, bias=False), BatchNorm1d(n_hidden), Tanh(),
        Linear(n_hidden, n_hidden, bias=False), BatchNorm1d(n_hidden), Tanh(),
        Linear(n_hidden, vocab_size, bias=False), BatchNorm1d(vocab_size),
    ]

    with torch.no_grad():
        # last layer: make less confident
        layers[-1].gamma *= 0.1
        # all other layers: apply gain
        for layer in layers[:-1]:
            if isinstance(layer, Linear):
                layer.weight *= 5 / 3

    parameters = [C] + [p for layer in layers for p in layer.parameters()]
    log(sum(p.nelement() for p in parameters))  # number of parameters in total
    initial_state = {"p%d" % i: p.clone() for i, p in enumerate(parameters)}
    for p in parameters:
        p.requires_grad = True

    max_steps = args.steps
    batch_size = 32
    lossi = []
    ud = []
    step_losses = []

    for i in range(max_steps):

        # minibatch construct
        ix = torch.randint(0, Xtr.shape[0], (batch_size,), generator=g)
        Xb, Yb = Xtr[ix], Ytr[ix]  # batch X,Y

        # forward pass
        emb = C[Xb]  # embed the characters into vectors
        x = emb.view(emb.shape[0], -1)  # concatenate the vectors
        for layer in layers:
            x = layer(x)
        loss = F.cross_entropy(x, Yb)  # loss function

        # backward pass
        for layer in layers:
            layer.out.retain_grad()  # AFTER_DEBUG: would take out retain_graph
        for p in parameters:
            p.grad = None
        loss.backward()

        # update
        lr = 0.1 if i < 150000 else 0.01  # step learning rate decay
        for p in parameters:
            p.data += -lr * p.grad

        # track stats
        if i % 10000 == 0:  # print every once in a while
            log(f'{i:7d}/{max_steps:7d}: {loss.item():.4f}')
        lossi.append(loss.log10().item())
        with torch.no_grad():
            ud.append([((lr * p.grad).std() / p.data.std()).log10().item() for p in parameters])
        step_losses.append(loss.item())

    # visualize histograms: the forward pass activations and the backward pass gradients
    stats = []
    for i, layer in enumerate(layers[:-1]):  # note: exclude the output layer
        if isinstance(layer, Tanh):
            t = layer.out
            stats.append((i, t.mean().item(), t.std().item(), ((t.abs() > 0.97).float().mean() * 100).item()))
            hy, hx = torch.histogram(t, density=True)
            stats.append((hx[:-1].detach().tolist(), hy.detach().tolist()))
            t = layer.out.grad
            stats.append((t.mean().item(), t.std().item()))
            hy, hx = torch.histogram(t, density=True)
            stats.append((hx[:-1].tolist(), hy.tolist()))
    for i, p in enumerate(parameters):
        t = p.grad
        if p.ndim == 2:
            stats.append((tuple(p.shape), t.mean().item(), t.std().item(), (t.std() / p.std()).item()))
            hy, hx = torch.histogram(t, density=True)
            stats.append((hx[:-1].tolist(), hy.tolist()))

    # put layers into eval mode
    for layer in layers:
        layer.training = False

    @torch.no_grad()  # this decorator disables gradient tracking
    def split_loss(split):
        x, y = {
            'train': (Xtr, Ytr),
            'val': (Xdev, Ydev),
            'test': (Xte, Yte),
        }[split]
        emb = C[x]  # (N, block_size, n_embd)
        x = emb.view(emb.shape[0], -1)  # concat into (N, block_size * n_embd)
        for layer in layers:
            x = layer(x)
        loss = F.cross_entropy(x, y)
        log(split, loss.item())
        return loss.item()

    split_losses = [split_loss('train'), split_loss('val')]

    # sample from the model
    g = torch.Generator().manual_seed(2147483647 + 10)
    samples = []
    for _ in range(20):

        out = []
        context = [0] * block_size  # initialize with all ...
        while True:
            # forward pass the neural net
            emb = C[torch.tensor([context])]  # (1,block_size,n_embd)
            x = emb.view(emb.shape[0], -1)  # concatenate the vectors
            for layer in layers:
                x = layer(x)
            logits = x
            probs = F.softmax(logits, dim=1)
            # sample from the distribution
            ix = torch.multinomial(probs, num_samples=1, generator=g).item()
            # shift the context window and track the samples
            context = context[1:] + [ix]
            out.append(ix)
            # if we sample the special '.' token, break
            if ix == 0:
                break

        samples.append(''.join(itos[i] for i in out))  # decode and print the generated word
    log(samples)
    return {"initial_state": initial_state, "step_losses": step_losses, "lossi": lossi, "ud": ud,
            "stats": stats, "split_losses": split_losses, "samples": samples,
            "running": [(layer.running_mean, layer.running_var) for layer in layers
                        if isinstance(layer, BatchNorm1d)]}


# ----------------------------------------------------------------------------- part 4
def part4(args, log):
    block_size = 3
    itos, vocab_size, (Xtr, Ytr), (Xdev, Ydev), (Xte, Yte) = load_data(args.n_words, block_size)
    compared = []

    # utility function we will use later when comparing manual gradients to PyTorch gradients
    def cmp(s, dt, t):
        ex = torch.all(dt == t.grad).item()
        app = torch.allclose(dt, t.grad)
        maxdiff = (dt - t.grad).abs().max().item()
        log(f'{s:15s} | exact: {str(ex):5s} | approximate: {str(app):5s} | maxdiff: {maxdiff}')
        compared.append((s, ex, app, maxdiff))

    n_embd = 10  # the dimensionality of the character embedding vectors
    n_hidden = 64  # the number of neurons in the hidden layer of the MLP

    g = torch.Generator().manual_seed(2147483647)  # for reproducibility
    C = torch.randn((vocab_size, n_embd), generator=g)
    # Layer 1
    W1 = torch.randn((n_embd * block_size, n_hidden), generator=g) * (5 / 3) / ((n_embd * block_size)**0.5)
    b1 = torch.randn(n_hidden, generator=g) * 0.1  # using b1 just for fun, it's useless because of BN
    # Layer 2
    W2 = torch.randn((n_hidden, vocab_size), generator=g) * 0.1
    b2 = torch.randn(vocab_size, generator=g) * 0.1
    # BatchNorm parameters
    bngain = torch.randn((1, n_hidden)) * 0.1 + 1.0
    bnbias = torch.randn((1, n_hidden)) * 0.1

    # Note: I am initializating many of these parameters in non-standard ways
    # because sometimes initializating with e.g. all zeros could mask an incorrect
    # implementation of the backward pass.

    parameters = [C, W1, b1, W2, b2, bngain, bnbias]
    initial_state = {"p%d" % i: p.clone() for i, p in enumerate(parameters)}
    log(sum(p.nelement() for p in parameters))  # number of parameters in total
    for p in parameters:
        p.requires_grad = True

    batch_size = 32
    n = batch_size  # a shorter variable also, for convenience
    # construct a minibatch
    ix = torch.randint(0, Xtr.shape[0], (batch_size,), generator=g)
    Xb, Yb = Xtr[ix], Ytr[ix]  # batch X,Y

    # forward pass, "chunkated" into smaller steps that are possible to backward one at a time

    emb = C[Xb]  # embed the characters into vectors
    embcat = emb.view(emb.shape[0], -1)  # concatenate the vectors
    # Linear layer 1
    hprebn = embcat @ W1 + b1  # hidden layer pre-activation
    # BatchNorm layer
    bnmeani = 1 / n * hprebn.sum(0, keepdim=True)
    bndiff = hprebn - bnmeani
    bndiff2 = bndiff**2
    bnvar = 1 / (n - 1) * (bndiff2).sum(0, keepdim=True)  # note: Bessel's correction (dividing by n-1, not n)
    bnvar_inv = (bnvar + 1e-5)**-0.5
    bnraw = bndiff * bnvar_inv
    hpreact = bngain * bnraw + bnbias
    # Non-linearity
    h = torch.tanh(hpreact)  # hidden layer
    # Linear layer 2
    logits = h @ W2 + b2  # output layer
    # cross entropy loss (same as F.cross_entropy(logits, Yb))
    logit_maxes = logits.max(1, keepdim=True).values
    norm_logits = logits - logit_maxes  # subtract max for numerical stability
    counts = norm_logits.exp()
    counts_sum = counts.sum(1, keepdims=True)
    counts_sum_inv = counts_sum**-1  # if I use (1.0 / counts_sum) instead then I can't get backprop to be bit exact...
    probs = counts * counts_sum_inv
    logprobs = probs.log()
    loss = -logprobs[range(n), Yb].mean()

    # PyTorch backward pass
    for p in parameters:
        p.grad = None
    for t in [logprobs, probs, counts, counts_sum, counts_sum_inv,  # afaik there is no cleaner way
              norm_logits, logit_maxes, logits, h, hpreact, bnraw,
              bnvar_inv, bnvar, bndiff2, bndiff, hprebn, bnmeani,
              embcat, emb]:
        t.retain_grad()
    loss.backward()
    first_loss = loss.item()

    # Exercise 1: backprop through the whole thing manually,
    # backpropagating through exactly all of the variables
    # as they are defined in the forward pass above, one by one

    dlogprobs = torch.zeros_like(logprobs)
    dlogprobs[range(n), Yb] = -1.0 / n
    dprobs = (1.0 / probs) * dlogprobs
    dcounts_sum_inv = (counts * dprobs).sum(1, keepdim=True)
    dcounts = counts_sum_inv * dprobs
    dcounts_sum = (-counts_sum**-2) * dcounts_sum_inv
    dcounts += torch.ones_like(counts) * dcounts_sum
    dnorm_logits = counts * dcounts
    dlogits = dnorm_logits.clone()
    dlogit_maxes = (-dnorm_logits).sum(1, keepdim=True)
    dlogits += F.one_hot(logits.max(1).indices, num_classes=logits.shape[1]) * dlogit_maxes
    dh = dlogits @ W2.T
    dW2 = h.T @ dlogits
    db2 = dlogits.sum(0)
    dhpreact = (1.0 - h**2) * dh
    dbngain = (bnraw * dhpreact).sum(0, keepdim=True)
    dbnraw = bngain * dhpreact
    dbnbias = dhpreact.sum(0, keepdim=True)
    dbndiff = bnvar_inv * dbnraw
    dbnvar_inv = (bndiff * dbnraw).sum(0, keepdim=True)
    dbnvar = (-0.5 * (bnvar + 1e-5)**-1.5) * dbnvar_inv
    dbndiff2 = (1.0 / (n - 1)) * torch.ones_like(bndiff2) * dbnvar
    dbndiff += (2 * bndiff) * dbndiff2
    dhprebn = dbndiff.clone()
    dbnmeani = (-dbndiff).sum(0)
    dhprebn += 1.0 / n * (torch.ones_like(hprebn) * dbnmeani)
    dembcat = dhprebn @ W1.T
    dW1 = embcat.T @ dhprebn
    db1 = dhprebn.sum(0)
    demb = dembcat.view(emb.shape)
    dC = torch.zeros_like(C)
    for k in range(Xb.shape[0]):
        for j in range(Xb.shape[1]):
            ix = Xb[k, j]
            dC[ix] += demb[k, j]

    cmp('logprobs', dlogprobs, logprobs)
    cmp('probs', dprobs, probs)
    cmp('counts_sum_inv', dcounts_sum_inv, counts_sum_inv)
    cmp('counts_sum', dcounts_sum, counts_sum)
    cmp('counts', dcounts, counts)
    cmp('norm_logits', dnorm_logits, norm_logits)
    cmp('logit_maxes', dlogit_maxes, logit_maxes)
    cmp('logits', dlogits, logits)
    cmp('h', dh, h)
    cmp('W2', dW2, W2)
    cmp('b2', db2, b2)
    cmp('hpreact', dhpreact, hpreact)
    cmp('bngain', dbngain, bngain)
    cmp('bnbias', dbnbias, bnbias)
    cmp('bnraw', dbnraw, bnraw)
    cmp('bnvar_inv', dbnvar_inv, bnvar_inv)
    cmp('bnvar', dbnvar, bnvar)
    cmp('bndiff2', dbndiff2, bndiff2)
    cmp('bndiff', dbndiff, bndiff)
    cmp('bnmeani', dbnmeani, bnmeani)
    cmp('hprebn', dhprebn, hprebn)
    cmp('embcat', dembcat, embcat)
    cmp('W1', dW1, W1)
    cmp('b1', db1, b1)
    cmp('emb', demb, emb)
    cmp('C', dC, C)

    # Exercise 2: backprop through cross_entropy but all in one go
    loss_fast = F.cross_entropy(logits, Yb)
    log(loss_fast.item(), 'diff:', (loss_fast - loss).item())
    dlogits = F.softmax(logits, 1)
    dlogits[range(n), Yb] -= 1
    dlogits /= n
    cmp('logits', dlogits, logits)  # I can only get approximate to be true, my maxdiff is 6e-9

    # Exercise 3: backprop through batchnorm but all in one go
    hpreact_fast = bngain * (hprebn - hprebn.mean(0, keepdim=True)) / torch.sqrt(hprebn.var(0, keepdim=True, unbiased=True) + 1e-5) + bnbias
    log('max diff:', (hpreact_fast - hpreact).abs().max().item())
    dhprebn = bngain * bnvar_inv / n * (n * dhpreact - dhpreact.sum(0) - n / (n - 1) * bnraw * (dhpreact * bnraw).sum(0))
    cmp('hprebn', dhprebn, hprebn)  # I can only get approximate to be true, my maxdiff is 9e-10

    # Exercise 4: putting it all together!
    # Train the MLP neural net with your own backward pass

    # init
    g = torch.Generator().manual_seed(2147483647)  # for reproducibility
    C = torch.randn((vocab_size, n_embd), generator=g)
    # Layer 1
    W1 = torch.randn((n_embd * block_size, n_hidden), generator=g) * (5 / 3) / ((n_embd * block_size)**0.5)
    b1 = torch.randn(n_hidden, generator=g) * 0.1
    # Layer 2
    W2 = torch.randn((n_hidden, vocab_size), generator=g) * 0.1
    b2 = torch.randn(vocab_size, generator=g) * 0.1
    # BatchNorm parameters
    bngain = torch.randn((1, n_hidden)) * 0.1 + 1.0
    bnbias = torch.randn((1, n_hidden)) * 0.1

    parameters = [C, W1, b1, W2, b2, bngain, bnbias]
    for p in parameters:
        p.requires_grad = True

    # same optimization as last time
    max_steps = args.steps
    batch_size = 32
    n = batch_size  # convenience
    lossi = []

    # use this context manager for efficiency once your backward pass is written (TODO)
    with torch.no_grad():

        # kick off optimization
        for i in range(max_steps):

            # minibatch construct
            ix = torch.randint(0, Xtr.shape[0], (batch_size,), generator=g)
            Xb, Yb = Xtr[ix], Ytr[ix]  # batch X,Y

            # forward pass
            emb = C[Xb]  # embed the characters into vectors
            embcat = emb.view(emb.shape[0], -1)  # concatenate the vectors
            # Linear layer
            hprebn = embcat @ W1 + b1  # hidden layer pre-activation
            # BatchNorm layer
            # -------------------------------------------------------------
            bnmean = hprebn.mean(0, keepdim=True)
            bnvar = hprebn.var(0, keepdim=True, unbiased=True)
            bnvar_inv = (bnvar + 1e-5)**-0.5
            bnraw = (hprebn - bnmean) * bnvar_inv
            hpreact = bngain * bnraw + bnbias
            # -------------------------------------------------------------
            # Non-linearity
            h = torch.tanh(hpreact)  # hidden layer
            logits = h @ W2 + b2  # output layer
            loss = F.cross_entropy(logits, Yb)  # loss function

            # backward pass
            for p in parameters:
                p.grad = None
            #loss.backward() # use this for correctness comparisons, delete it later!

            # manual backprop! #swole_doge_meme
            # -----------------
            dlogits = F.softmax(logits, 1)
            dlogits[range(n), Yb] -= 1
            dlogits /= n
            # 2nd layer backprop
            dh = dlogits @ W2.T
            dW2 = h.T @ dlogits
            db2 = dlogits.sum(0)
            # tanh
            dhpreact = (1.0 - h**2) * dh
            # batchnorm backprop
            dbngain = (bnraw * dhpreact).sum(0, keepdim=True)
            dbnbias = dhpreact.sum(0, keepdim=True)
            dhprebn = bngain * bnvar_inv / n * (n * dhpreact - dhpreact.sum(0) - n / (n - 1) * bnraw * (dhpreact * bnraw).sum(0))
            # 1st layer
            dembcat = dhprebn @ W1.T
            dW1 = embcat.T @ dhprebn
            db1 = dhprebn.sum(0)
            # embedding
            demb = dembcat.view(emb.shape)
            dC = torch.zeros_like(C)
            for k in range(Xb.shape[0]):
                for j in range(Xb.shape[1]):
                    ix = Xb[k, j]
                    dC[ix] += demb[k, j]
            grads = [dC, dW1, db1, dW2, db2, dbngain, dbnbias]
            # -----------------

            # update
            lr = 0.1 if i < 100000 else 0.01  # step learning rate decay
            for p, grad in zip(parameters, grads):
                #p.data += -lr * p.grad # old way of cheems doge (using PyTorch grad from .backward())
                p.data += -lr * grad  # new way of swole doge TODO: enable

            # track stats
            if i % 10000 == 0:  # print every once in a while
                log(f'{i:7d}/{max_steps:7d}: {loss.item():.4f}')
            lossi.append(loss.log10().item())

    return {"initial_state": initial_state, "step_losses": [10 ** v for v in lossi], "lossi": lossi,
            "first_loss": first_loss, "compared": compared, "loss_fast": loss_fast.item()}


# ----------------------------------------------------------------------------- part 5
def part5(args, log):
    block_size = 8  # context length: how many characters do we take to predict the next one?
    itos, vocab_size, (Xtr, Ytr), (Xdev, Ydev), (Xte, Yte) = load_data(args.n_words, block_size)

    class Linear:

        def __init__(self, fan_in, fan_out, bias=True):
            self.weight = torch.randn((fan_in, fan_out)) / fan_in**0.5  # note: kaiming init
            self.bias = torch.zeros(fan_out) if bias else None

        def __call__(self, x):
            self.out = x @ self.weight
            if self.bias is not None:
                self.out += self.bias
            return self.out

        def parameters(self):
            return [self.weight] + ([] if self.bias is None else [self.bias])

    class BatchNorm1d:

        def __init__(self, dim, eps=1e-5, momentum=0.1):
            self.eps = eps
            self.momentum = momentum
            self.training = True
            # parameters (trained with backprop)
            self.gamma = torch.ones(dim)
            self.beta = torch.zeros(dim)
            # buffers (trained with a running 'momentum update')
            self.running_mean = torch.zeros(dim)
            self.running_var = torch.ones(dim)

        def __call__(self, x):
            # calculate the forward pass
            if self.training:
                if x.ndim == 2:
                    dim = 0
                elif x.ndim == 3:
                    dim = (0, 1)
                xmean = x.mean(dim, keepdim=True)  # batch mean
                xvar = x.var(dim, keepdim=True)  # batch variance
            else:
                xmean = self.running_mean
                xvar = self.running_var
            xhat = (x - xmean) / torch.sqrt(xvar + self.eps)  # normalize to unit variance
            self.out = self.gamma * xhat + self.beta
            # update the buffers
            if self.training:
                with torch.no_grad():
                    self.running_mean = (1 - self.momentum) * self.running_mean + self.momentum * xmean
                    self.running_var = (1 - self.momentum) * self.running_var + self.momentum * xvar
            return self.out

        def parameters(self):
            return [self.gamma, self.beta]

    class Tanh:
        def __call__(self, x):
            self.out = torch.tanh(x)
            return self.out

        def parameters(self):
            return []

    class Embedding:

        def __init__(self, num_embeddings, embedding_dim):
            self.weight = torch.randn((num_embeddings, embedding_dim))

        def __call__(self, IX):
            self.out = self.weight[IX]
            return self.out

        def parameters(self):
            return [self.weight]

    class FlattenConsecutive:

        def __init__(self, n):
            self.n = n

        def __call__(self, x):
            B, T, C = x.shape
            x = x.view(B, T // self.n, C * self.n)
            if x.shape[1] == 1:
                x = x.squeeze(1)
            self.out = x
            return self.out

        def parameters(self):
            return []

    class Sequential:

        def __init__(self, layers):
            self.layers = layers

        def __call__(self, x):
            for layer in self.layers:
                x = layer(x)
            self.out = x
            return self.out

        def parameters(self):
            # get parameters of all layers and stretch them out into one list
            return [p for layer in self.layers for p in layer.parameters()]

    torch.manual_seed(42)  # seed rng for reproducibility

    # hierarchical network
    n_embd = 24  # the dimensionality of the character embedding vectors
    n_hidden = args.n_hidden  # the number of neurons in the hidden layer of the MLP
    model = Sequential([
        Embedding(vocab_size, n_embd),
        FlattenConsecutive(2), Linear(n_embd * 2, n_hidden, bias=False), BatchNorm1d(n_hidden), Tanh(),
        FlattenConsecutive(2), Linear(n_hidden * 2, n_hidden, bias=False), BatchNorm1d(n_hidden), Tanh(),
        FlattenConsecutive(2), Linear(n_hidden * 2, n_hidden, bias=False), BatchNorm1d(n_hidden), Tanh(),
        Linear(n_hidden, vocab_size),
    ])

    # parameter init
    with torch.no_grad():
        model.layers[-1].weight *= 0.1  # last layer make less confident

    parameters = model.parameters()
    initial_state = {"p%d" % i: p.clone() for i, p in enumerate(parameters)}
    log(sum(p.nelement() for p in parameters))  # number of parameters in total
    for p in parameters:
        p.requires_grad = True

    # same optimization as last time
    max_steps = args.steps
    batch_size = 32
    lossi = []
    step_losses = []

    for i in range(max_steps):

        # minibatch construct
        ix = torch.randint(0, Xtr.shape[0], (batch_size,))
        Xb, Yb = Xtr[ix], Ytr[ix]  # batch X,Y

        # forward pass
        logits = model(Xb)
        loss = F.cross_entropy(logits, Yb)  # loss function

        # backward pass
        for p in parameters:
            p.grad = None
        loss.backward()

        # update: simple SGD
        lr = 0.1 if i < 150000 else 0.01  # step learning rate decay
        for p in parameters:
            p.data += -lr * p.grad

        # track stats
        if i % 10000 == 0:  # print every once in a while
            log(f'{i:7d}/{max_steps:7d}: {loss.item():.4f}')
        lossi.append(loss.log10().item())
        step_losses.append(loss.item())

    smoothed = torch.tensor(lossi).view(-1, 10).mean(1)

    # put layers into eval mode (needed for batchnorm especially)
    for layer in model.layers:
        layer.training = False

    # evaluate the loss
    @torch.no_grad()  # this decorator disables gradient tracking inside pytorch
    def split_loss(split):
        x, y = {
            'train': (Xtr, Ytr),
            'val': (Xdev, Ydev),
            'test': (Xte, Yte),
        }[split]
        logits = model(x)
        loss = F.cross_entropy(logits, y)
        log(split, loss.item())
        return loss.item()

    split_losses = [split_loss('train'), split_loss('val')]

    # sample from the model
    samples = []
    for _ in range(20):

        out = []
        context = [0] * block_size  # initialize with all ...
        while True:
            # forward pass the neural net
            logits = model(torch.tensor([context]))
            probs = F.softmax(logits, dim=1)
            # sample from the distribution
            ix = torch.multinomial(probs, num_samples=1).item()
            # shift the context window and track the samples
            context = context[1:] + [ix]
            out.append(ix)
            # if we sample the special '.' token, break
            if ix == 0:
                break

        samples.append(''.join(itos[i] for i in out))  # decode and print the generated word
    log(samples)
    return {"initial_state": initial_state, "step_losses": step_losses, "lossi": lossi,
            "smoothed": smoothed, "split_losses": split_losses, "samples": samples,
            "shapes": [tuple(layer.out.shape) for layer in model.layers]}


def main(argv=None):
    parser = argparse.ArgumentParser()
    parser.add_argument("--part", type=int, choices=[3, 4, 5], default=3)
    parser.add_argument("--steps", type=int, default=200000)
    parser.add_argument("--n-hidden", type=int, default=100)
    parser.add_argument("--n-words", type=int, default=32033)
    parser.add_argument("--quiet", action="store_true")
    args = parser.parse_args(argv)
    log = (lambda *a: None) if args.quiet else print
    torch.manual_seed(0)  # (harness) part 4's bngain/bnbias draw from the global generator
    return {3: part3, 4: part4, 5: part5}[args.part](args, log)


if __name__ == "__main__":
    main()
