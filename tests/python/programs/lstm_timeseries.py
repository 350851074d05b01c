"""Two public LSTM time-series regressions:

--script airline: machinelearningmastery's "LSTM for Time Series Prediction in PyTorch" (Adrian Tam): the
  airline-passengers series as df[["Passengers"]].values.astype('float32'), create_dataset's
  torch.tensor(list of numpy windows), AirModel (nn.LSTM(batch_first=True) + nn.Linear on every step),
  data.DataLoader(data.TensorDataset(X_train, y_train), shuffle=True, batch_size=8), Adam, np.sqrt of a
  0-dim loss tensor for the RMSE, and the plot arrays filled with train_plot[lookback:train_size] =
  model(X_train)[:, -1, :]. The loss and the learning-rate schedule are options here, as the variants
  of it do: nn.MSELoss / nn.SmoothL1Loss(beta=) / nn.HuberLoss(delta=), and ReduceLROnPlateau on the
  test loss, OneCycleLR stepped per batch, or CosineAnnealingWarmRestarts stepped with
  scheduler.step(epoch + i / iters) as its documentation shows.
--script covid: curiousily's "Time Series Forecasting with LSTMs for Daily Coronavirus Cases": a
  MinMaxScaler by hand, create_sequences, CoronaVirusPredictor (a 2-layer nn.LSTM with dropout=0.5 over
  sequences.view(len(sequences), self.seq_len, -1), reset_hidden_state, lstm_out.view(...)[-1]),
  MSELoss(reduction='sum'), Adam(lr=1e-3), train_model's train/test histories, and the closed-loop
  forecast (test_seq.numpy().flatten(), np.append, torch.as_tensor(new_seq).view(1, seq_length, 1)).

The data are synthetic series of the same shapes (seasonal growth for the passengers, a noisy
logistic curve for the daily cases)."""
import argparse

import numpy as np

import torch
import torch.nn as nn
import torch.optim as optim
import torch.utils.data as data


# ---- airline passengers -----------------------------------------------------------------------------
def airline_passengers(n_months=144):
    t = np.arange(n_months)
    trend = 110 + 2.6 * t
    season = (1 + 0.0045 * t) * 28 * np.sin(2 * np.pi * (t - 3) / 12)
    noise = np.random.RandomState(1949).randn(n_months) * 6
    return np.round(trend + season + noise)[:, None]  # df[["Passengers"]].values


def create_dataset(dataset, lookback):
    """Transform a time series into a prediction dataset

    Args:
        dataset: A numpy array of time series, first dimension is the time steps
        lookback: Size of window for prediction
    """
    X, y = [], []
    for i in range(len(dataset)-lookback):
        feature = dataset[i:i+lookback]
        target = dataset[i+1:i+lookback+1]
        X.append(feature)
        y.append(target)
    return torch.tensor(X), torch.tensor(y)


class AirModel(nn.Module):
    def __init__(self, hidden_size=50):
        super().__init__()
        self.lstm = nn.LSTM(input_size=1, hidden_size=hidden_size, num_layers=1, batch_first=True)
        self.linear = nn.Linear(hidden_size, 1)

    def forward(self, x):
        x, _ = self.lstm(x)
        x = self.linear(x)
        return x


def run_airline(args, log):
    timeseries = airline_passengers().astype('float32')
    if args.scale:
        timeseries = timeseries / 100.0

    # train-test split for time series
    train_size = int(len(timeseries) * 0.67)
    test_size = len(timeseries) - train_size
    train, test = timeseries[:train_size], timeseries[train_size:]

    lookback = args.lookback
    X_train, y_train = create_dataset(train, lookback=lookback)
    X_test, y_test = create_dataset(test, lookback=lookback)

    model = AirModel(args.hidden)
    initial_state = {k: v.clone() for k, v in model.state_dict().items()}
    optimizer = optim.Adam(model.parameters(), lr=args.lr)
    if args.loss == 'mse':
        loss_fn = nn.MSELoss()
    elif args.loss == 'smooth_l1':
        loss_fn = nn.SmoothL1Loss(beta=args.beta)
    else:
        loss_fn = nn.HuberLoss(delta=args.beta)
    loader = data.DataLoader(data.TensorDataset(X_train, y_train), shuffle=True, batch_size=8)
    iters = len(loader)

    scheduler = None
    if args.scheduler == 'plateau':
        scheduler = optim.lr_scheduler.ReduceLROnPlateau(optimizer, mode='min', factor=0.5, patience=1,
                                                         threshold=1e-3, cooldown=1, min_lr=1e-5)
    elif args.scheduler == 'onecycle':
        scheduler = optim.lr_scheduler.OneCycleLR(optimizer, max_lr=args.lr * 10, epochs=args.n_epochs,
                                                  steps_per_epoch=iters, pct_start=0.3, anneal_strategy='cos')
    elif args.scheduler == 'cosine_warm':
        scheduler = optim.lr_scheduler.CosineAnnealingWarmRestarts(optimizer, T_0=3, T_mult=2, eta_min=1e-5)

    record = {'initial_state': initial_state, 'step_losses': [], 'lrs': [], 'rmse': [], 'test_losses': []}
    n_epochs = args.n_epochs
    for epoch in range(n_epochs):
        model.train()
        for i, (X_batch, y_batch) in enumerate(loader):
            y_pred = model(X_batch)
            loss = loss_fn(y_pred, y_batch)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            record['step_losses'].append(loss.item())
            if args.scheduler == 'onecycle':
                scheduler.step()
            elif args.scheduler == 'cosine_warm':
                scheduler.step(epoch + i / iters)
            record['lrs'].append(optimizer.param_groups[0]['lr'])
        model.eval()
        with torch.no_grad():
            test_loss = loss_fn(model(X_test), y_test)
        record['test_losses'].append(test_loss.item())
        if args.scheduler == 'plateau':
            scheduler.step(test_loss)
        # Validation
        if epoch % args.eval_every != 0:
            continue
        model.eval()
        with torch.no_grad():
            y_pred = model(X_train)
            train_rmse = np.sqrt(loss_fn(y_pred, y_train))
            y_pred = model(X_test)
            test_rmse = np.sqrt(loss_fn(y_pred, y_test))
        record['rmse'].append((float(train_rmse), float(test_rmse)))
        log("Epoch %d: train RMSE %.4f, test RMSE %.4f" % (epoch, train_rmse, test_rmse))

    with torch.no_grad():
        # shift train predictions for plotting
        train_plot = np.ones_like(timeseries) * np.nan
        y_pred = model(X_train)
        y_pred = y_pred[:, -1, :]
        train_plot[lookback:train_size] = model(X_train)[:, -1, :]
        # shift test predictions for plotting
        test_plot = np.ones_like(timeseries) * np.nan
        test_plot[train_size+lookback:len(timeseries)] = model(X_test)[:, -1, :]
    record['train_plot'] = train_plot
    record['test_plot'] = test_plot
    record['shapes'] = (tuple(X_train.shape), str(X_train.dtype), tuple(y_test.shape), test_size)
    return record


# ---- daily coronavirus cases ---------------------------------------------------------------------------------
class MinMaxScaler:
    """sklearn.preprocessing.MinMaxScaler's fit/transform/inverse_transform (feature_range=(0, 1))."""
    def fit(self, X):
        self.data_min_, self.data_max_ = X.min(axis=0), X.max(axis=0)
        self.scale_ = 1.0 / (self.data_max_ - self.data_min_)
        self.min_ = -self.data_min_ * self.scale_
        return self

    def transform(self, X):
        return X * self.scale_ + self.min_

    def inverse_transform(self, X):
        return (X - self.min_) / self.scale_


def create_sequences(data, seq_length):
    xs = []
    ys = []

    for i in range(len(data)-seq_length-1):
        x = data[i:(i+seq_length)]
        y = data[i+seq_length]
        xs.append(x)
        ys.append(y)

    return np.array(xs), np.array(ys)


class CoronaVirusPredictor(nn.Module):

    def __init__(self, n_features, n_hidden, seq_len, n_layers=2):
        super(CoronaVirusPredictor, self).__init__()

        self.n_hidden = n_hidden
        self.seq_len = seq_len
        self.n_layers = n_layers

        self.lstm = nn.LSTM(
            input_size=n_features,
            hidden_size=n_hidden,
            num_layers=n_layers,
            dropout=0.5
        )

        self.linear = nn.Linear(in_features=n_hidden, out_features=1)

    def reset_hidden_state(self):
        self.hidden = (
            torch.zeros(self.n_layers, self.seq_len, self.n_hidden),
            torch.zeros(self.n_layers, self.seq_len, self.n_hidden)
        )

    def forward(self, sequences):
        lstm_out, self.hidden = self.lstm(
            sequences.view(len(sequences), self.seq_len, -1),
            self.hidden
        )
        last_time_step = \
            lstm_out.view(self.seq_len, len(sequences), self.n_hidden)[-1]
        y_pred = self.linear(last_time_step)
        return y_pred


def run_covid(args, log):
    rng = np.random.RandomState(2020)
    days = np.arange(args.days)
    cumulative = 80000 / (1 + np.exp(-(days - args.days * 0.45) / (args.days * 0.09)))
    daily_cases = np.maximum(np.diff(cumulative, prepend=0) * (1 + 0.15 * rng.randn(args.days)), 0).round()

    test_data_size = 14

    train_data = daily_cases[:-test_data_size]
    test_data = daily_cases[-test_data_size:]

    scaler = MinMaxScaler()

    scaler = scaler.fit(np.expand_dims(train_data, axis=1))

    train_data = scaler.transform(np.expand_dims(train_data, axis=1))

    test_data = scaler.transform(np.expand_dims(test_data, axis=1))

    seq_length = 5
    X_train, y_train = create_sequences(train_data, seq_length)
    X_test, y_test = create_sequences(test_data, seq_length)

    X_train = torch.from_numpy(X_train).float()
    y_train = torch.from_numpy(y_train).float()

    X_test = torch.from_numpy(X_test).float()
    y_test = torch.from_numpy(y_test).float()

    def train_model(
        model,
        train_data,
        train_labels,
        test_data=None,
        test_labels=None
    ):
        loss_fn = torch.nn.MSELoss(reduction='sum')

        optimiser = torch.optim.Adam(model.parameters(), lr=1e-3)
        num_epochs = args.n_epochs

        train_hist = np.zeros(num_epochs)
        test_hist = np.zeros(num_epochs)

        for t in range(num_epochs):
            model.reset_hidden_state()

            y_pred = model(X_train)

            loss = loss_fn(y_pred.float(), y_train)

            if test_data is not None:
                with torch.no_grad():
                    y_test_pred = model(X_test)
                    test_loss = loss_fn(y_test_pred.float(), y_test)
                test_hist[t] = test_loss.item()

                if t % 10 == 0:
                    log(f'Epoch {t} train loss: {loss.item()} test loss: {test_loss.item()}')
            elif t % 10 == 0:
                log(f'Epoch {t} train loss: {loss.item()}')

            train_hist[t] = loss.item()

            optimiser.zero_grad()

            loss.backward()

            optimiser.step()

        return model.eval(), train_hist, test_hist

    model = CoronaVirusPredictor(
        n_features=1,
        n_hidden=args.hidden,
        seq_len=seq_length,
        n_layers=2
    )
    initial_state = {k: v.clone() for k, v in model.state_dict().items()}
    model, train_hist, test_hist = train_model(
        model,
        X_train,
        y_train,
        X_test,
        y_test
    )

    with torch.no_grad():
        test_seq = X_test[:1]
        preds = []
        for _ in range(len(X_test)):
            y_test_pred = model(test_seq)
            pred = torch.flatten(y_test_pred).item()
            preds.append(pred)
            new_seq = test_seq.numpy().flatten()
            new_seq = np.append(new_seq, [pred])
            new_seq = new_seq[1:]
            test_seq = torch.as_tensor(new_seq).view(1, seq_length, 1).float()

    true_cases = scaler.inverse_transform(
        np.expand_dims(y_test.flatten().numpy(), axis=0)
    ).flatten()

    predicted_cases = scaler.inverse_transform(
        np.expand_dims(preds, axis=0)
    ).flatten()
    return {'initial_state': initial_state, 'step_losses': list(train_hist), 'test_losses': list(test_hist),
            'preds': preds, 'predicted_cases': predicted_cases, 'true_cases': true_cases}


def main(argv=None):
    parser = argparse.ArgumentParser()
    parser.add_argument('--script', choices=['airline', 'covid'], default='airline')
    parser.add_argument('--n_epochs', type=int, default=2000)
    parser.add_argument('--eval_every', type=int, default=100)
    parser.add_argument('--lookback', type=int, default=4)
    parser.add_argument('--hidden', type=int, default=50)
    parser.add_argument('--lr', type=float, default=1e-3)
    parser.add_argument('--loss', choices=['mse', 'smooth_l1', 'huber'], default='mse')
    parser.add_argument('--beta', type=float, default=1.0)
    parser.add_argument('--scheduler', choices=['none', 'plateau', 'onecycle', 'cosine_warm'], default='none')
    parser.add_argument('--scale', action='store_true', help='passengers in hundreds')
    parser.add_argument('--days', type=int, default=120)
    parser.add_argument('--quiet', action='store_true')
    args = parser.parse_args(argv)
    log = (lambda *a: None) if args.quiet else print

    torch.manual_seed(42)
    if args.script == 'airline':
        return run_airline(args, log)
    return run_covid(args, log)


if __name__ == '__main__':
    main()
