"""dreamquark-ai/tabnet's pytorch_tabnet/tab_network.py and sparsemax.py as written (trimmed): initialize_non_glu
/ initialize_glu by xavier_normal_ with gain sqrt((in + out) / sqrt(4 * in)), GBN (ghost batch norm: x.chunk
(int(np.ceil(x.shape[0] / self.virtual_batch_size)), 0) then torch.cat of per-chunk BatchNorm1d), GLU_Layer
(x[:, :output_dim] * torch.sigmoid(x[:, output_dim:])), GLU_Block with scale = torch.sqrt(torch.FloatTensor([0.5]))
residuals, FeatTransformer with shared and independent blocks, AttentiveTransformer with the prior, Sparsemax
as a custom autograd.Function (_threshold_and_support by input.sort(dim=dim, descending=True), cumsum, _make_ix_like
arange views, support.sum(dim).unsqueeze(dim), gather; backward with ctx.save_for_backward(supp_size, output) and
grad_input.masked_fill / v_hat), Entmax15 by its own Function (input / 2, sort, cumsum of squares, sqrt of delta
clamped, tau_star gather, clamp(min=0) ** 2), the M_loss entropy term torch.mean(torch.sum(torch.mul(M,
torch.log(M + self.epsilon)), dim=1)), EmbeddingGenerator for categorical columns, the lambda_sparse-weighted
loss, Adam + StepLR and explain()'s M_explain masks by torch.mul and torch.sum."""
import argparse

import numpy as np
import torch
from torch import nn
from torch.autograd import Function
from torch.nn import BatchNorm1d, Linear, ReLU


def initialize_non_glu(module, input_dim, output_dim):
    gain_value = np.sqrt((input_dim + output_dim) / np.sqrt(4 * input_dim))
    torch.nn.init.xavier_normal_(module.weight, gain=gain_value)


def initialize_glu(module, input_dim, output_dim):
    gain_value = np.sqrt((input_dim + output_dim) / np.sqrt(input_dim))
    torch.nn.init.xavier_normal_(module.weight, gain=gain_value)


def _make_ix_like(input, dim=0):
    d = input.size(dim)
    rho = torch.arange(1, d + 1, device=input.device, dtype=input.dtype)
    view = [1] * input.dim()
    view[0] = -1
    return rho.view(view).transpose(0, dim)


class SparsemaxFunction(Function):
    @staticmethod
    def forward(ctx, input, dim=-1):
        ctx.dim = dim
        max_val, _ = input.max(dim=dim, keepdim=True)
        input -= max_val
        tau, supp_size = SparsemaxFunction._threshold_and_support(input, dim=dim)
        output = torch.clamp(input - tau, min=0)
        ctx.save_for_backward(supp_size, output)
        return output

    @staticmethod
    def backward(ctx, grad_output):
        supp_size, output = ctx.saved_tensors
        dim = ctx.dim
        grad_input = grad_output.clone()
        grad_input[output == 0] = 0
        v_hat = grad_input.sum(dim=dim) / supp_size.to(output.dtype).squeeze()
        v_hat = v_hat.unsqueeze(dim)
        grad_input = torch.where(output != 0, grad_input - v_hat, grad_input)
        return grad_input, None

    @staticmethod
    def _threshold_and_support(input, dim=-1):
        input_srt, _ = torch.sort(input, descending=True, dim=dim)
        input_cumsum = input_srt.cumsum(dim) - 1
        rhos = _make_ix_like(input, dim)
        support = rhos * input_srt > input_cumsum
        support_size = support.sum(dim=dim).unsqueeze(dim)
        tau = input_cumsum.gather(dim, support_size - 1)
        tau /= support_size.to(input.dtype)
        return tau, support_size


sparsemax = SparsemaxFunction.apply


class Sparsemax(nn.Module):
    def __init__(self, dim=-1):
        self.dim = dim
        super(Sparsemax, self).__init__()

    def forward(self, input):
        return sparsemax(input, self.dim)


class Entmax15Function(Function):
    @staticmethod
    def forward(ctx, input, dim=-1):
        ctx.dim = dim
        max_val, _ = input.max(dim=dim, keepdim=True)
        input = input - max_val
        input = input / 2
        tau_star, _ = Entmax15Function._threshold_and_support(input, dim)
        output = torch.clamp(input - tau_star, min=0) ** 2
        ctx.save_for_backward(output)
        return output

    @staticmethod
    def backward(ctx, grad_output):
        Y, = ctx.saved_tensors
        gppr = Y.sqrt()
        dX = grad_output * gppr
        q = dX.sum(ctx.dim) / gppr.sum(ctx.dim)
        q = q.unsqueeze(ctx.dim)
        dX -= q * gppr
        return dX, None

    @staticmethod
    def _threshold_and_support(input, dim=-1):
        Xsrt, _ = torch.sort(input, descending=True, dim=dim)
        rho = _make_ix_like(input, dim)
        mean = Xsrt.cumsum(dim) / rho
        mean_sq = (Xsrt ** 2).cumsum(dim) / rho
        ss = rho * (mean_sq - mean ** 2)
        delta = (1 - ss) / rho
        delta_nz = torch.clamp(delta, 0)
        tau = mean - torch.sqrt(delta_nz)
        support_size = (tau <= Xsrt).sum(dim).unsqueeze(dim)
        tau_star = tau.gather(dim, support_size - 1)
        return tau_star, support_size


class Entmax15(nn.Module):
    def __init__(self, dim=-1):
        self.dim = dim
        super(Entmax15, self).__init__()

    def forward(self, input):
        return Entmax15Function.apply(input, self.dim)


class GBN(torch.nn.Module):
    def __init__(self, input_dim, virtual_batch_size=128, momentum=0.01):
        super(GBN, self).__init__()
        self.input_dim = input_dim
        self.virtual_batch_size = virtual_batch_size
        self.bn = BatchNorm1d(self.input_dim, momentum=momentum)

    def forward(self, x):
        chunks = x.chunk(int(np.ceil(x.shape[0] / self.virtual_batch_size)), 0)
        res = [self.bn(x_) for x_ in chunks]
        return torch.cat(res, dim=0)


class GLU_Layer(torch.nn.Module):
    def __init__(self, input_dim, output_dim, fc=None, virtual_batch_size=128, momentum=0.02):
        super(GLU_Layer, self).__init__()
        self.output_dim = output_dim
        if fc:
            self.fc = fc
        else:
            self.fc = Linear(input_dim, 2 * output_dim, bias=False)
        initialize_glu(self.fc, input_dim, 2 * output_dim)
        self.bn = GBN(2 * output_dim, virtual_batch_size=virtual_batch_size, momentum=momentum)

    def forward(self, x):
        x = self.fc(x)
        x = self.bn(x)
        out = torch.mul(x[:, : self.output_dim], torch.sigmoid(x[:, self.output_dim:]))
        return out


class GLU_Block(torch.nn.Module):
    def __init__(self, input_dim, output_dim, n_glu=2, first=False, shared_layers=None, virtual_batch_size=128,
                 momentum=0.02):
        super(GLU_Block, self).__init__()
        self.first = first
        self.shared_layers = shared_layers
        self.n_glu = n_glu
        self.glu_layers = torch.nn.ModuleList()
        params = {"virtual_batch_size": virtual_batch_size, "momentum": momentum}
        fc = shared_layers[0] if shared_layers else None
        self.glu_layers.append(GLU_Layer(input_dim, output_dim, fc=fc, **params))
        for glu_id in range(1, self.n_glu):
            fc = shared_layers[glu_id] if shared_layers else None
            self.glu_layers.append(GLU_Layer(output_dim, output_dim, fc=fc, **params))

    def forward(self, x):
        scale = torch.sqrt(torch.FloatTensor([0.5]).to(x.device))
        if self.first:
            x = self.glu_layers[0](x)
            layers_left = range(1, self.n_glu)
        else:
            layers_left = range(self.n_glu)
        for glu_id in layers_left:
            x = torch.add(x, self.glu_layers[glu_id](x))
            x = x * scale
        return x


class FeatTransformer(torch.nn.Module):
    def __init__(self, input_dim, output_dim, shared_layers, n_glu_independent, virtual_batch_size=128,
                 momentum=0.02):
        super(FeatTransformer, self).__init__()
        params = {"n_glu": n_glu_independent, "virtual_batch_size": virtual_batch_size, "momentum": momentum}
        if shared_layers is None:
            self.shared = torch.nn.Identity()
            is_first = True
        else:
            self.shared = GLU_Block(input_dim, output_dim, first=True, shared_layers=shared_layers,
                                    n_glu=len(shared_layers), virtual_batch_size=virtual_batch_size,
                                    momentum=momentum)
            is_first = False
        if n_glu_independent == 0:
            self.specifics = torch.nn.Identity()
        else:
            spec_input_dim = input_dim if is_first else output_dim
            self.specifics = GLU_Block(spec_input_dim, output_dim, first=is_first, **params)

    def forward(self, x):
        x = self.shared(x)
        x = self.specifics(x)
        return x


class AttentiveTransformer(torch.nn.Module):
    def __init__(self, input_dim, group_dim, virtual_batch_size=128, momentum=0.02, mask_type="sparsemax"):
        super(AttentiveTransformer, self).__init__()
        self.fc = Linear(input_dim, group_dim, bias=False)
        initialize_non_glu(self.fc, input_dim, group_dim)
        self.bn = GBN(group_dim, virtual_batch_size=virtual_batch_size, momentum=momentum)
        if mask_type == "sparsemax":
            self.selector = Sparsemax(dim=-1)
        elif mask_type == "entmax":
            self.selector = Entmax15(dim=-1)
        else:
            raise NotImplementedError("Please choose either sparsemax or entmax as masktype")

    def forward(self, priors, processed_feat):
        x = self.fc(processed_feat)
        x = self.bn(x)
        x = torch.mul(x, priors)
        x = self.selector(x)
        return x


class TabNetEncoder(torch.nn.Module):
    def __init__(self, input_dim, output_dim, n_d=8, n_a=8, n_steps=3, gamma=1.3, n_independent=2, n_shared=2,
                 epsilon=1e-15, virtual_batch_size=128, momentum=0.02, mask_type="sparsemax"):
        super(TabNetEncoder, self).__init__()
        self.input_dim = input_dim
        self.output_dim = output_dim
        self.n_d = n_d
        self.n_a = n_a
        self.n_steps = n_steps
        self.gamma = gamma
        self.epsilon = epsilon
        self.virtual_batch_size = virtual_batch_size
        self.initial_bn = BatchNorm1d(self.input_dim, momentum=0.01)
        shared_feat_transform = torch.nn.ModuleList()
        for i in range(n_shared):
            if i == 0:
                shared_feat_transform.append(Linear(self.input_dim, 2 * (n_d + n_a), bias=False))
            else:
                shared_feat_transform.append(Linear(n_d + n_a, 2 * (n_d + n_a), bias=False))
        self.initial_splitter = FeatTransformer(self.input_dim, n_d + n_a, shared_feat_transform,
                                                n_glu_independent=n_independent,
                                                virtual_batch_size=self.virtual_batch_size, momentum=momentum)
        self.feat_transformers = torch.nn.ModuleList()
        self.att_transformers = torch.nn.ModuleList()
        for step in range(n_steps):
            transformer = FeatTransformer(self.input_dim, n_d + n_a, shared_feat_transform,
                                          n_glu_independent=n_independent,
                                          virtual_batch_size=self.virtual_batch_size, momentum=momentum)
            attention = AttentiveTransformer(n_a, self.input_dim, virtual_batch_size=self.virtual_batch_size,
                                             momentum=momentum, mask_type=mask_type)
            self.feat_transformers.append(transformer)
            self.att_transformers.append(attention)

    def forward(self, x, prior=None):
        x = self.initial_bn(x)
        if prior is None:
            prior = torch.ones(x.shape).to(x.device)
        M_loss = 0
        att = self.initial_splitter(x)[:, self.n_d:]
        steps_output = []
        for step in range(self.n_steps):
            M = self.att_transformers[step](prior, att)
            M_loss += torch.mean(torch.sum(torch.mul(M, torch.log(M + self.epsilon)), dim=1))
            prior = torch.mul(self.gamma - M, prior)
            masked_x = torch.mul(M, x)
            out = self.feat_transformers[step](masked_x)
            d = ReLU()(out[:, : self.n_d])
            steps_output.append(d)
            att = out[:, self.n_d:]
        M_loss /= self.n_steps
        return steps_output, M_loss

    def forward_masks(self, x):
        x = self.initial_bn(x)
        prior = torch.ones(x.shape).to(x.device)
        M_explain = torch.zeros(x.shape).to(x.device)
        att = self.initial_splitter(x)[:, self.n_d:]
        masks = {}
        for step in range(self.n_steps):
            M = self.att_transformers[step](prior, att)
            masks[step] = M
            prior = torch.mul(self.gamma - M, prior)
            masked_x = torch.mul(M, x)
            out = self.feat_transformers[step](masked_x)
            d = ReLU()(out[:, : self.n_d])
            step_importance = torch.sum(d, axis=1)
            M_explain += torch.mul(M, step_importance.unsqueeze(dim=1))
            att = out[:, self.n_d:]
        return M_explain, masks


class EmbeddingGenerator(torch.nn.Module):
    def __init__(self, input_dim, cat_dims, cat_idxs, cat_emb_dim):
        super(EmbeddingGenerator, self).__init__()
        self.skip_embedding = False
        self.post_embed_dim = int(input_dim + np.sum(cat_emb_dim) - len(cat_emb_dim))
        self.embeddings = torch.nn.ModuleList()
        for cat_dim, emb_dim in zip(cat_dims, cat_emb_dim):
            self.embeddings.append(torch.nn.Embedding(cat_dim, emb_dim))
        self.continuous_idx = torch.ones(input_dim, dtype=torch.bool)
        self.continuous_idx[cat_idxs] = 0

    def forward(self, x):
        cols = []
        cat_feat_counter = 0
        for feat_init_idx, is_continuous in enumerate(self.continuous_idx):
            if is_continuous:
                cols.append(x[:, feat_init_idx].float().view(-1, 1))
            else:
                cols.append(self.embeddings[cat_feat_counter](x[:, feat_init_idx].long()))
                cat_feat_counter += 1
        post_embeddings = torch.cat(cols, dim=1)
        return post_embeddings


class TabNet(torch.nn.Module):
    def __init__(self, input_dim, output_dim, cat_idxs, cat_dims, cat_emb_dim, mask_type, virtual_batch_size):
        super().__init__()
        self.embedder = EmbeddingGenerator(input_dim, cat_dims, cat_idxs, cat_emb_dim)
        self.encoder = TabNetEncoder(self.embedder.post_embed_dim, output_dim, virtual_batch_size=virtual_batch_size,
                                     mask_type=mask_type)
        self.final_mapping = Linear(8, output_dim, bias=False)
        initialize_non_glu(self.final_mapping, 8, output_dim)

    def forward(self, x):
        x = self.embedder(x)
        steps_output, M_loss = self.encoder(x)
        res = torch.sum(torch.stack(steps_output, dim=0), dim=0)
        return self.final_mapping(res), M_loss


def main(argv=None):
    parser = argparse.ArgumentParser()
    parser.add_argument("--mask_type", default="sparsemax")
    parser.add_argument("--steps", type=int, default=10)
    parser.add_argument("--quiet", action="store_true")
    args = parser.parse_args(argv)
    log = (lambda *a: None) if args.quiet else print
    torch.manual_seed(0)
    np.random.seed(0)
    n, d = 96, 6
    X = np.random.randn(n, d).astype(np.float32)
    X[:, 1] = np.random.randint(0, 4, n)
    X[:, 4] = np.random.randint(0, 3, n)
    y = ((X[:, 0] + (X[:, 1] == 2) - X[:, 3]) > 0).astype(np.int64)
    network = TabNet(d, 2, [1, 4], [4, 3], [2, 2], args.mask_type, virtual_batch_size=16)
    initial_state = {k: v.clone() for k, v in network.state_dict().items()}
    optimizer = torch.optim.Adam(network.parameters(), lr=2e-2)
    scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=5, gamma=0.9)
    loss_fn = torch.nn.functional.cross_entropy
    lambda_sparse = 1e-3
    step_losses = []
    perm = np.random.permutation(n)
    for it in range(args.steps):
        network.train()
        idx = perm[(it * 32) % n: (it * 32) % n + 32]
        X_b, y_b = torch.from_numpy(X[idx]), torch.from_numpy(y[idx])
        for param in network.parameters():
            param.grad = None
        output, M_loss = network(X_b)
        loss = loss_fn(output, y_b)
        loss = loss - lambda_sparse * M_loss
        loss.backward()
        torch.nn.utils.clip_grad_norm_(network.parameters(), 1)
        optimizer.step()
        scheduler.step()
        step_losses.append(loss.cpu().detach().numpy().item())
        log("iter %d loss %.4f" % (it, step_losses[-1]))
    network.eval()
    with torch.no_grad():
        out, _ = network(torch.from_numpy(X))
        M_explain, masks = network.encoder.forward_masks(network.embedder(torch.from_numpy(X)))
    x = torch.randn(5, 7, requires_grad=True)
    sp = sparsemax(x.clone(), -1)
    en = Entmax15Function.apply(x, -1)
    (sp * torch.arange(7.)).sum().backward(retain_graph=True)
    gsp = x.grad.clone()
    x.grad = None
    (en * torch.arange(7.)).sum().backward()
    return {"initial_state": initial_state, "step_losses": step_losses, "out": out, "explain": M_explain,
            "mask0": masks[0], "sp": sp.detach(), "en": en.detach(), "gsp": gsp, "gen": x.grad}


if __name__ == "__main__":
    main()
