"""Two recommendation programs. guoyang9/NCF (model.py: NCF with GMF / MLP / NeuMF-end embeddings,
_init_weight_ (nn.init.normal_(std=0.01), xavier_uniform_ for the MLP, kaiming_uniform_(a=1,
nonlinearity='sigmoid') for the predict layer, zeroed biases), the MLP tower built as a list of
Dropout/Linear/ReLU, torch.cat of the GMF and MLP outputs, prediction.view(-1); data_utils.NCFData's
ng_sample negatives; main.py's BCEWithLogitsLoss on float labels with Adam; evaluate.py's hit/ndcg
from torch.topk and torch.take). chenxijun1029/DeepFM_with_PyTorch (model/DeepFM.py: nn.ModuleList of
first- and second-order nn.Embedding per field, fm_first_order_emb_arr / fm_second_order_emb_arr by
torch.sum(emb(Xi[:, i, :]), 1).t() * Xv[:, i], the sum-square minus square-sum trick, deep layers of
Linear + BatchNorm1d + Dropout set with setattr / getattr, total_sum, F.binary_cross_entropy_with_logits,
check_accuracy with F.sigmoid(total) > 0.5) and an nn.EmbeddingBag(mode='sum', per_sample_weights) FM
variant."""
import argparse

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.optim as optim
import torch.utils.data as data


# ---------------------------------------------------------------- guoyang9/NCF
class NCF(nn.Module):
    def __init__(self, user_num, item_num, factor_num, num_layers, dropout, model, GMF_model=None, MLP_model=None):
        super(NCF, self).__init__()
        self.dropout = dropout
        self.model = model
        self.GMF_model = GMF_model
        self.MLP_model = MLP_model

        self.embed_user_GMF = nn.Embedding(user_num, factor_num)
        self.embed_item_GMF = nn.Embedding(item_num, factor_num)
        self.embed_user_MLP = nn.Embedding(user_num, factor_num * (2 ** (num_layers - 1)))
        self.embed_item_MLP = nn.Embedding(item_num, factor_num * (2 ** (num_layers - 1)))

        MLP_modules = []
        for i in range(num_layers):
            input_size = factor_num * (2 ** (num_layers - i))
            MLP_modules.append(nn.Dropout(p=self.dropout))
            MLP_modules.append(nn.Linear(input_size, input_size // 2))
            MLP_modules.append(nn.ReLU())
        self.MLP_layers = nn.Sequential(*MLP_modules)

        if self.model in ['MLP', 'GMF']:
            predict_size = factor_num
        else:
            predict_size = factor_num * 2
        self.predict_layer = nn.Linear(predict_size, 1)

        self._init_weight_()

    def _init_weight_(self):
        """ We leave the weights initialization here. """
        if not self.model == 'NeuMF-pre':
            nn.init.normal_(self.embed_user_GMF.weight, std=0.01)
            nn.init.normal_(self.embed_user_MLP.weight, std=0.01)
            nn.init.normal_(self.embed_item_GMF.weight, std=0.01)
            nn.init.normal_(self.embed_item_MLP.weight, std=0.01)

            for m in self.MLP_layers:
                if isinstance(m, nn.Linear):
                    nn.init.xavier_uniform_(m.weight)
            nn.init.kaiming_uniform_(self.predict_layer.weight, a=1, nonlinearity='sigmoid')

            for m in self.modules():
                if isinstance(m, nn.Linear) and m.bias is not None:
                    m.bias.data.zero_()

    def forward(self, user, item):
        if not self.model == 'MLP':
            embed_user_GMF = self.embed_user_GMF(user)
            embed_item_GMF = self.embed_item_GMF(item)
            output_GMF = embed_user_GMF * embed_item_GMF
        if not self.model == 'GMF':
            embed_user_MLP = self.embed_user_MLP(user)
            embed_item_MLP = self.embed_item_MLP(item)
            interaction = torch.cat((embed_user_MLP, embed_item_MLP), -1)
            output_MLP = self.MLP_layers(interaction)

        if self.model == 'GMF':
            concat = output_GMF
        elif self.model == 'MLP':
            concat = output_MLP
        else:
            concat = torch.cat((output_GMF, output_MLP), -1)

        prediction = self.predict_layer(concat)
        return prediction.view(-1)


class NCFData(data.Dataset):
    def __init__(self, features, num_item, train_mat=None, num_ng=0, is_training=None):
        super(NCFData, self).__init__()
        self.features_ps = features
        self.num_item = num_item
        self.train_mat = train_mat
        self.num_ng = num_ng
        self.is_training = is_training
        self.labels = [0 for _ in range(len(features))]

    def ng_sample(self):
        assert self.is_training, 'no need to sampling when testing'

        self.features_ng = []
        for x in self.features_ps:
            u = x[0]
            for t in range(self.num_ng):
                j = np.random.randint(self.num_item)
                while (u, j) in self.train_mat:
                    j = np.random.randint(self.num_item)
                self.features_ng.append([u, j])

        labels_ps = [1 for _ in range(len(self.features_ps))]
        labels_ng = [0 for _ in range(len(self.features_ng))]

        self.features_fill = self.features_ps + self.features_ng
        self.labels_fill = labels_ps + labels_ng

    def __len__(self):
        return (self.num_ng + 1) * len(self.labels)

    def __getitem__(self, idx):
        features = self.features_fill if self.is_training else self.features_ps
        labels = self.labels_fill if self.is_training else self.labels

        user = features[idx][0]
        item = features[idx][1]
        label = labels[idx]
        return user, item, label


def hit(gt_item, pred_items):
    if gt_item in pred_items:
        return 1
    return 0


def ndcg(gt_item, pred_items):
    if gt_item in pred_items:
        index = pred_items.index(gt_item)
        return np.reciprocal(np.log2(index + 2))
    return 0


def metrics(model, test_loader, top_k):
    HR, NDCG = [], []

    for user, item, label in test_loader:
        predictions = model(user, item)
        _, indices = torch.topk(predictions, top_k)
        recommends = torch.take(item, indices).cpu().numpy().tolist()

        gt_item = item[0].item()
        HR.append(hit(gt_item, recommends))
        NDCG.append(ndcg(gt_item, recommends))

    return np.mean(HR), np.mean(NDCG)


def run_ncf(args, log):
    np.random.seed(0)
    torch.manual_seed(0)
    user_num, item_num = 40, 60
    rng = np.random.RandomState(1)
    train_data, train_mat, test_data = [], set(), []
    for u in range(user_num):
        items = rng.choice(item_num, size=8, replace=False)
        for i in items[:-1]:
            train_data.append([u, int(i)])
            train_mat.add((u, int(i)))
        test_data.append([u, int(items[-1])])
        negs = [j for j in range(item_num) if (u, j) not in train_mat and j != items[-1]][:19]
        test_data += [[u, j] for j in negs]
    train_dataset = NCFData(train_data, item_num, train_mat, 4, True)
    test_dataset = NCFData(test_data, item_num, train_mat, 0, False)
    train_loader = data.DataLoader(train_dataset, batch_size=64, shuffle=True, num_workers=0)
    test_loader = data.DataLoader(test_dataset, batch_size=20, shuffle=False, num_workers=0)

    model = NCF(user_num, item_num, 8, 3, 0.0, args.model)
    initial_state = {k: v.clone() for k, v in model.state_dict().items()}
    loss_function = nn.BCEWithLogitsLoss()
    optimizer = optim.Adam(model.parameters(), lr=args.lr)
    step_losses, hrs = [], []
    for epoch in range(args.epochs):
        model.train()  # Enable dropout (if have).
        train_loader.dataset.ng_sample()
        for user, item, label in train_loader:
            label = label.float()
            model.zero_grad()
            prediction = model(user, item)
            loss = loss_function(prediction, label)
            loss.backward()
            optimizer.step()
            step_losses.append(loss.item())
        model.eval()
        HR, NDCG = metrics(model, test_loader, 10)
        hrs.append((float(HR), float(NDCG)))
        log("HR: {:.3f}\tNDCG: {:.3f}".format(np.mean(HR), np.mean(NDCG)))
    return {"initial_state": initial_state, "step_losses": step_losses, "hrs": hrs, "final_state": model.state_dict()}


# ---------------------------------------------------------------- chenxijun1029/DeepFM_with_PyTorch
class DeepFM(nn.Module):
    def __init__(self, feature_sizes, embedding_size=4, hidden_dims=[32, 32], num_classes=1, dropout=[0.5, 0.5],
                 use_cuda=False, verbose=False):
        super().__init__()
        self.field_size = len(feature_sizes)
        self.feature_sizes = feature_sizes
        self.embedding_size = embedding_size
        self.hidden_dims = hidden_dims
        self.num_classes = num_classes
        self.dtype = torch.long
        self.bias = torch.nn.Parameter(torch.randn(1))
        self.device = torch.device('cpu')
        self.fm_first_order_embeddings = nn.ModuleList(
            [nn.Embedding(feature_size, 1) for feature_size in self.feature_sizes])
        self.fm_second_order_embeddings = nn.ModuleList(
            [nn.Embedding(feature_size, self.embedding_size) for feature_size in self.feature_sizes])
        all_dims = [self.field_size * self.embedding_size] + self.hidden_dims + [self.num_classes]
        for i in range(1, len(hidden_dims) + 1):
            setattr(self, 'linear_' + str(i), nn.Linear(all_dims[i - 1], all_dims[i]))
            setattr(self, 'batchNorm_' + str(i), nn.BatchNorm1d(all_dims[i]))
            setattr(self, 'dropout_' + str(i), nn.Dropout(dropout[i - 1]))

    def forward(self, Xi, Xv):
        fm_first_order_emb_arr = [(torch.sum(emb(Xi[:, i, :]), 1).t() * Xv[:, i]).t() for i, emb in
                                  enumerate(self.fm_first_order_embeddings)]
        fm_first_order = torch.cat(fm_first_order_emb_arr, 1)
        fm_second_order_emb_arr = [(torch.sum(emb(Xi[:, i, :]), 1).t() * Xv[:, i]).t() for i, emb in
                                   enumerate(self.fm_second_order_embeddings)]
        fm_sum_second_order_emb = sum(fm_second_order_emb_arr)
        fm_sum_second_order_emb_square = fm_sum_second_order_emb * fm_sum_second_order_emb  # (x+y)^2
        fm_second_order_emb_square = [item * item for item in fm_second_order_emb_arr]
        fm_second_order_emb_square_sum = sum(fm_second_order_emb_square)  # x^2+y^2
        fm_second_order = (fm_sum_second_order_emb_square - fm_second_order_emb_square_sum) * 0.5
        deep_emb = torch.cat(fm_second_order_emb_arr, 1)
        deep_out = deep_emb
        for i in range(1, len(self.hidden_dims) + 1):
            deep_out = getattr(self, 'linear_' + str(i))(deep_out)
            deep_out = getattr(self, 'batchNorm_' + str(i))(deep_out)
            deep_out = getattr(self, 'dropout_' + str(i))(deep_out)
        total_sum = torch.sum(fm_first_order, 1) + \
            torch.sum(fm_second_order, 1) + torch.sum(deep_out, 1) + self.bias
        return total_sum

    def fit(self, loader_train, loader_val, optimizer, epochs=100, verbose=False, print_every=100, step_losses=None,
            accs=None):
        model = self.train().to(device=self.device)
        criterion = F.binary_cross_entropy_with_logits

        for _ in range(epochs):
            for t, (xi, xv, y) in enumerate(loader_train):
                xi = xi.to(device=self.device, dtype=self.dtype)
                xv = xv.to(device=self.device, dtype=torch.float)
                y = y.to(device=self.device, dtype=torch.float)

                total = model(xi, xv)
                loss = criterion(total, y)
                optimizer.zero_grad()
                loss.backward()
                optimizer.step()
                step_losses.append(loss.item())
            accs.append(self.check_accuracy(loader_val, model))

    def check_accuracy(self, loader, model):
        num_correct = 0
        num_samples = 0
        model.eval()  # set model to evaluation mode
        with torch.no_grad():
            for xi, xv, y in loader:
                xi = xi.to(device=self.device, dtype=self.dtype)  # move to device, e.g. GPU
                xv = xv.to(device=self.device, dtype=torch.float)
                y = y.to(device=self.device, dtype=torch.bool)
                total = model(xi, xv)
                preds = (F.sigmoid(total) > 0.5)
                num_correct += (preds == y).sum()
                num_samples += preds.size(0)
            acc = float(num_correct) / num_samples
        model.train()
        return acc


class BagFM(nn.Module):
    """A factorization machine over nn.EmbeddingBag(mode='sum') with offsets and per_sample_weights."""

    def __init__(self, num_features, k):
        super().__init__()
        self.linear = nn.EmbeddingBag(num_features, 1, mode='sum')
        self.v = nn.EmbeddingBag(num_features, k, mode='sum')
        self.v_sq = nn.EmbeddingBag(num_features, k, mode='sum')
        self.bias = nn.Parameter(torch.zeros(1))

    def forward(self, idx, offsets, vals):
        lin = self.linear(idx, offsets, per_sample_weights=vals).squeeze(1)
        s = self.v(idx, offsets, per_sample_weights=vals)
        sq = F.embedding_bag(idx, self.v.weight ** 2, offsets, mode='sum', per_sample_weights=vals ** 2)
        return lin + 0.5 * (s * s - sq).sum(1) + self.bias


def run_deepfm(args, log):
    torch.manual_seed(0)
    rng = np.random.RandomState(0)
    feature_sizes = [1, 1, 1, 6, 9, 4]
    n = 256
    Xi = np.stack([rng.randint(0, s, size=n) for s in feature_sizes], 1)[:, :, None]
    Xv = np.concatenate([rng.rand(n, 3), np.ones((n, 3))], 1).astype(np.float32)
    y = ((Xv[:, 0] + (Xi[:, 3, 0] % 2) + (Xi[:, 4, 0] > 4)) > 1.5).astype(np.float32)
    ds = data.TensorDataset(torch.from_numpy(Xi), torch.from_numpy(Xv), torch.from_numpy(y))
    loader_train = data.DataLoader(ds, batch_size=32, sampler=data.sampler.SubsetRandomSampler(range(200)))
    loader_val = data.DataLoader(ds, batch_size=32, sampler=data.sampler.SubsetRandomSampler(range(200, n)))
    if args.model == 'deepfm':
        model = DeepFM(feature_sizes, use_cuda=False)
        initial_state = {k: v.clone() for k, v in model.state_dict().items()}
        optimizer = optim.Adam(model.parameters(), lr=args.lr, weight_decay=0.0)
        step_losses, accs = [], []
        model.fit(loader_train, loader_val, optimizer, epochs=args.epochs, step_losses=step_losses, accs=accs)
    else:
        offsets_base = np.cumsum([0] + feature_sizes[:-1])
        model = BagFM(sum(feature_sizes), 4)
        initial_state = {k: v.clone() for k, v in model.state_dict().items()}
        optimizer = optim.Adagrad(model.parameters(), lr=args.lr * 10)
        step_losses, accs = [], []
        for epoch in range(args.epochs):
            for xi, xv, yy in loader_train:
                idx = (xi[:, :, 0] + torch.from_numpy(offsets_base)).reshape(-1)
                offsets = torch.arange(0, xi.shape[0] * len(feature_sizes), len(feature_sizes))
                out = model(idx, offsets, xv.reshape(-1))
                loss = F.binary_cross_entropy_with_logits(out, yy)
                optimizer.zero_grad()
                loss.backward()
                optimizer.step()
                step_losses.append(loss.item())
    return {"initial_state": initial_state, "step_losses": step_losses, "accs": accs, "final_state": model.state_dict()}


def main(argv=None):
    p = argparse.ArgumentParser()
    p.add_argument('--model', default='NeuMF-end', choices=['GMF', 'MLP', 'NeuMF-end', 'deepfm', 'bagfm'])
    p.add_argument('--epochs', type=int, default=3)
    p.add_argument('--lr', type=float, default=0.001)
    p.add_argument('--quiet', action='store_true')
    args = p.parse_args(argv)
    log = (lambda *a: None) if args.quiet else print
    if args.model in ('deepfm', 'bagfm'):
        return run_deepfm(args, log)
    return run_ncf(args, log)


if __name__ == '__main__':
    main()
