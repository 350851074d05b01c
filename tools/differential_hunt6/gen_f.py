out = []
F = "F = torch.nn.functional; torch.manual_seed(0); "
x4 = "x = torch.arange(2 * 4 * 5 * 5.).reshape(2, 4, 5, 5) / 50; "
w = "w = torch.arange(4 * 2 * 3 * 3.).reshape(4, 2, 3, 3) / 100; "
for args in ["stride=2", "padding=1", "padding='same'", "padding='valid'", "dilation=2", "groups=2", "padding='same', dilation=2", "padding='same', stride=2", "padding=(1, 0), stride=(2, 1)", "padding=-1", "stride=0", "groups=3", "padding='bogus'", "dilation=0", "padding=(1, 1, 1)", "stride=(1,)"]:
    out.append(F + x4 + w + f"r = F.conv2d(x, w, None, {args})")
    out.append(F + x4 + w + f"r = F.conv2d(x, w, torch.ones(4), {args})")
out.append(F + x4 + w + "r = F.conv2d(x, w)")
out.append(F + x4 + w + "r = F.conv2d(x[0], w, groups=2)")
out.append(F + x4 + w + "r = F.conv2d(x.double(), w, groups=2)")
out.append(F + x4 + w + "r = F.conv2d(x, w.t() if False else w.transpose(2, 3), groups=2)")
for mode in ["'constant'", "'reflect'", "'replicate'", "'circular'", "'bogus'"]:
    for pad in ["(1, 1)", "(1, 2, 0, 1)", "(2, 2, 2, 2)", "(5, 5)", "(-1, 1)", "(1,)", "(1, 1, 1, 1, 1, 1)", "(0, 0)", "(4, 0)"]:
        out.append(F + x4 + f"r = F.pad(x, {pad}, mode={mode})")
        out.append(F + f"x = torch.arange(6.).reshape(1, 2, 3); r = F.pad(x, {pad}, mode={mode})")
        out.append(F + f"x = torch.arange(6.).reshape(2, 3); r = F.pad(x, {pad}, mode={mode})")
    out.append(F + x4 + f"r = F.pad(x, (1, 1), mode={mode}, value=2.5)")
for red in ["'none'", "'sum'", "'mean'", "'bogus'"]:
    for extra in ["", ", ignore_index=1", ", label_smoothing=0.2", ", weight=torch.tensor([1., 2., 3.])", ", ignore_index=-100, label_smoothing=0.1, weight=torch.tensor([1., 0., 3.])", ", label_smoothing=1.5", ", weight=torch.tensor([1., 2.])", ", ignore_index=5"]:
        out.append(F + f"x = torch.arange(12.).reshape(4, 3) / 5; t = torch.tensor([0, 1, 2, 1]); r = F.cross_entropy(x, t, reduction={red}{extra})")
        out.append(F + f"x = torch.arange(12.).reshape(4, 3) / 5; t = torch.tensor([0, 1, 1, 1]); r = F.cross_entropy(x, t, reduction={red}{extra})")
        out.append(F + f"x = torch.arange(24.).reshape(2, 3, 4) / 5; t = torch.tensor([[0, 1, 2, 1], [2, 2, 0, 1]]); r = F.cross_entropy(x, t, reduction={red}{extra})")
        out.append(F + f"x = torch.arange(12.).reshape(4, 3) / 5; t = torch.softmax(torch.arange(12.).reshape(4, 3).flip(0), 1); r = F.cross_entropy(x, t, reduction={red}{extra})")
        out.append(F + f"x = torch.arange(12.).reshape(4, 3) / 5; t = torch.tensor([0, 1, 1, 1]); r = F.nll_loss(x, t, reduction={red}{extra.replace(', label_smoothing=0.2', '').replace(', label_smoothing=1.5', '').replace(', label_smoothing=0.1', '')})")
    out.append(F + f"x = torch.arange(12.).reshape(4, 3) / 5; t = torch.tensor([0, 1, 3, 1]); r = F.cross_entropy(x, t, reduction={red})")
    out.append(F + f"x = torch.arange(12.).reshape(4, 3) / 5; t = torch.tensor([0, 1, -1, 1]); r = F.cross_entropy(x, t, reduction={red})")
    out.append(F + f"x = torch.empty(0, 3); t = torch.empty(0, dtype=torch.int64); r = F.cross_entropy(x, t, reduction={red})")
    for loss in ["mse_loss", "l1_loss", "smooth_l1_loss", "huber_loss", "binary_cross_entropy", "binary_cross_entropy_with_logits", "soft_margin_loss", "kl_div", "poisson_nll_loss", "gaussian_nll_loss", "hinge_embedding_loss", "multilabel_soft_margin_loss"]:
        a = "torch.sigmoid(torch.arange(6.).reshape(2, 3) - 2)"
        b = "torch.tensor([[0., 1., 1.], [1., 0., 0.5]])"
        if loss == "gaussian_nll_loss":
            out.append(F + f"r = F.{loss}({a}, {b}, torch.ones(2, 3), reduction={red})")
            out.append(F + f"r = F.{loss}({a}, {b}, torch.ones(2, 1), full=True, reduction={red})")
        else:
            out.append(F + f"r = F.{loss}({a}, {b}, reduction={red})")
            out.append(F + f"r = F.{loss}({a}, {b}[0], reduction={red})")
            out.append(F + f"r = F.{loss}(torch.empty(0), torch.empty(0), reduction={red})")
            out.append(F + f"r = F.{loss}({a}.double(), {b}, reduction={red})")
for f in ["max_pool2d", "avg_pool2d", "lp_pool2d"]:
    for args in ["2", "3, stride=1", "2, padding=1", "(2, 3), ceil_mode=True", "3, 2, 1, ceil_mode=True", "2, padding=2", "5", "6", "2, stride=0"]:
        if f == "lp_pool2d":
            out.append(F + x4 + f"r = F.{f}(x, 2, {args.replace(', padding=1', '').replace(', padding=2', '')})")
        else:
            out.append(F + x4 + f"r = F.{f}(x, {args})")
for args in ["scale_factor=2", "size=(3, 7)", "scale_factor=1.5, mode='bilinear'", "scale_factor=0.5, mode='bilinear', align_corners=True", "size=3, mode='bicubic'", "scale_factor=2, mode='nearest-exact'", "size=(2, 2), mode='area'", "scale_factor=2, mode='linear'", "size=(3, 3), scale_factor=2", "mode='nearest'", "scale_factor=2, mode='bilinear', recompute_scale_factor=True", "scale_factor=(2, 3)", "scale_factor=(2,)", "size=0"]:
    out.append(F + x4 + f"r = F.interpolate(x, {args})")
for f in ["softmax", "log_softmax", "softmin"]:
    for a in ["dim=0", "dim=-1", "dim=1, dtype=torch.float64", "", "dim=4", "_stacklevel=5, dim=1"]:
        out.append(F + x4 + f"r = F.{f}(x, {a})")
for f in ["gelu", "silu", "mish", "elu", "selu", "celu", "leaky_relu", "hardswish", "hardsigmoid", "softplus", "relu6", "logsigmoid", "tanhshrink", "softsign", "glu", "normalize", "dropout", "alpha_dropout", "dropout2d", "layer_norm", "group_norm", "instance_norm", "local_response_norm", "embedding", "one_hot", "pixel_shuffle", "pixel_unshuffle", "unfold", "fold", "cosine_similarity", "pairwise_distance", "pdist", "grid_sample", "affine_grid"]:
    for a in ["x", "x.int()", "x[0, 0, 0]", "torch.empty(0, 4, 5, 5)", "x.double()", "x.half()"]:
        extra = {"gelu": ", approximate='tanh'", "glu": ", dim=1", "normalize": ", p=1, dim=0", "dropout": ", p=1.0", "alpha_dropout": ", p=0.5, training=False", "dropout2d": ", p=0.0", "layer_norm": ", (5,)", "group_norm": ", 2", "instance_norm": "", "local_response_norm": ", 2", "embedding": ", torch.ones(30, 2)", "one_hot": "", "pixel_shuffle": ", 2", "pixel_unshuffle": ", 5", "unfold": ", 2", "fold": ", (3, 3), 2", "cosine_similarity": ", " + a, "pairwise_distance": ", " + a, "pdist": "", "grid_sample": ", torch.zeros(2, 3, 3, 2)", "affine_grid": ", (2, 4, 3, 3)", "softplus": ", beta=2, threshold=1", "elu": ", alpha=-1.", "leaky_relu": ", -0.5", "celu": ", alpha=0."}.get(f, "")
        out.append(F + x4 + f"r = F.{f}({a}{extra})")
print('\n'.join(out))
