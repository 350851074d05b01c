"""victoresque/pytorch-template, its MNIST example collapsed into one file: BaseDataLoader (a DataLoader
subclass with a validation split by np.random.shuffle and two SubsetRandomSamplers, default_collate,
split_validation), BaseModel's __str__ counting np.prod(p.size()) over the trainable parameters,
MnistModel (Conv2d, Dropout2d, max_pool2d, F.dropout(training=self.training), log_softmax), the
nll_loss / accuracy / top_k_acc (torch.topk) functions, ConfigParser.init_obj (getattr(torch.optim,
'Adam')(trainable_params, lr=..., amsgrad=True) and getattr(torch.optim.lr_scheduler, 'StepLR')),
MetricTracker (a dict in place of the pandas DataFrame), Trainer._train_epoch/_valid_epoch with
inf_loop and len_epoch, BaseTrainer.train's monitor ('min val_loss') and early stop, _save_checkpoint
(torch.save of {'arch', 'epoch', 'state_dict', 'optimizer': optimizer.state_dict(), 'monitor_best',
'config'} to checkpoint-epoch{n}.pth and model_best.pth) and _resume_checkpoint (torch.load,
load_state_dict of the model and the optimizer, start_epoch). `--resume_at N` trains N epochs, then
builds a fresh model, optimizer and scheduler (as `python train.py --resume ...` does) and resumes from
the saved checkpoint. MNIST is replaced by synthetic 28x28 digits."""
import argparse
import os
import types
import tempfile
from abc import abstractmethod
from itertools import repeat
from pathlib import Path

import numpy as np

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, TensorDataset
from torch.utils.data.dataloader import default_collate
from torch.utils.data.sampler import SubsetRandomSampler


# ---- base/base_data_loader.py -------------------------------------------------------------------------------
class BaseDataLoader(DataLoader):
    """
    Base class for all data loaders
    """
    def __init__(self, dataset, batch_size, shuffle, validation_split, num_workers, collate_fn=default_collate):
        self.validation_split = validation_split
        self.shuffle = shuffle

        self.batch_idx = 0
        self.n_samples = len(dataset)

        self.sampler, self.valid_sampler = self._split_sampler(self.validation_split)

        self.init_kwargs = {
            'dataset': dataset,
            'batch_size': batch_size,
            'shuffle': self.shuffle,
            'collate_fn': collate_fn,
            'num_workers': num_workers
        }
        super().__init__(sampler=self.sampler, **self.init_kwargs)

    def _split_sampler(self, split):
        if split == 0.0:
            return None, None

        idx_full = np.arange(self.n_samples)

        np.random.seed(0)
        np.random.shuffle(idx_full)

        if isinstance(split, int):
            assert split > 0
            assert split < self.n_samples, "validation set size is configured to be larger than entire dataset."
            len_valid = split
        else:
            len_valid = int(self.n_samples * split)

        valid_idx = idx_full[0:len_valid]
        train_idx = np.delete(idx_full, np.arange(0, len_valid))

        train_sampler = SubsetRandomSampler(train_idx)
        valid_sampler = SubsetRandomSampler(valid_idx)

        # turn off shuffle option which is mutually exclusive with sampler
        self.shuffle = False
        self.n_samples = len(train_idx)

        return train_sampler, valid_sampler

    def split_validation(self):
        if self.valid_sampler is None:
            return None
        else:
            return DataLoader(sampler=self.valid_sampler, **self.init_kwargs)


def synthetic_mnist(n, seed):
    g = torch.Generator().manual_seed(seed)
    targets = torch.randint(0, 10, (n,), generator=g)
    protos = torch.rand(10, 1, 28, 28, generator=torch.Generator().manual_seed(99)) > 0.7
    data = protos[targets].float() * 0.8 + 0.3 * torch.rand(n, 1, 28, 28, generator=g)
    return TensorDataset((data - 0.1307) / 0.3081, targets)


class MnistDataLoader(BaseDataLoader):
    """
    MNIST data loading demo using BaseDataLoader
    """
    def __init__(self, data_dir, batch_size, shuffle=True, validation_split=0.0, num_workers=1, training=True,
                 n_samples=1000):
        self.data_dir = data_dir
        self.dataset = synthetic_mnist(n_samples, 1 if training else 2)
        super().__init__(self.dataset, batch_size, shuffle, validation_split, num_workers)


# ---- base/base_model.py, model/model.py, model/loss.py, model/metric.py ---------------------------------
class BaseModel(nn.Module):
    """
    Base class for all models
    """
    @abstractmethod
    def forward(self, *inputs):
        """
        Forward pass logic

        :return: Model output
        """
        raise NotImplementedError

    def __str__(self):
        """
        Model prints with number of trainable parameters
        """
        model_parameters = filter(lambda p: p.requires_grad, self.parameters())
        params = sum([np.prod(p.size()) for p in model_parameters])
        return super().__str__() + '\nTrainable parameters: {}'.format(params)


class MnistModel(BaseModel):
    def __init__(self, num_classes=10):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 10, kernel_size=5)
        self.conv2 = nn.Conv2d(10, 20, kernel_size=5)
        self.conv2_drop = nn.Dropout2d()
        self.fc1 = nn.Linear(320, 50)
        self.fc2 = nn.Linear(50, num_classes)

    def forward(self, x):
        x = F.relu(F.max_pool2d(self.conv1(x), 2))
        x = F.relu(F.max_pool2d(self.conv2_drop(self.conv2(x)), 2))
        x = x.view(-1, 320)
        x = F.relu(self.fc1(x))
        x = F.dropout(x, training=self.training)
        x = self.fc2(x)
        return F.log_softmax(x, dim=1)


def nll_loss(output, target):
    return F.nll_loss(output, target)


def accuracy(output, target):
    with torch.no_grad():
        pred = torch.argmax(output, dim=1)
        assert pred.shape[0] == len(target)
        correct = 0
        correct += torch.sum(pred == target).item()
    return correct / len(target)


def top_k_acc(output, target, k=3):
    with torch.no_grad():
        pred = torch.topk(output, k, dim=1)[1]
        assert pred.shape[0] == len(target)
        correct = 0
        for i in range(k):
            correct += torch.sum(pred[:, i] == target).item()
    return correct / len(target)


# ---- utils/util.py, parse_config.py ---------------------------------------------------------------------------
def inf_loop(data_loader):
    ''' wrapper function for endless data loader. '''
    for loader in repeat(data_loader):
        yield from loader


class MetricTracker:
    def __init__(self, *keys, writer=None):
        self.writer = writer
        self._data = {key: [0.0, 0, 0.0] for key in keys}  # total, counts, average
        self.reset()

    def reset(self):
        for key in self._data:
            self._data[key] = [0.0, 0, 0.0]

    def update(self, key, value, n=1):
        row = self._data[key]
        row[0] += value * n
        row[1] += n
        row[2] = row[0] / row[1]

    def avg(self, key):
        return self._data[key][2]

    def result(self):
        return {key: row[2] for key, row in self._data.items()}


class ConfigParser:
    def __init__(self, config, save_dir):
        self._config = config
        self.save_dir = Path(save_dir)

    def init_obj(self, name, module, *args, **kwargs):
        """
        Finds a function handle with the name given as 'type' in config, and returns the
        instance initialized with corresponding arguments given.

        `object = config.init_obj('name', module, a, b=1)`
        is equivalent to
        `object = module.name(a, b=1)`
        """
        module_name = self[name]['type']
        module_args = dict(self[name]['args'])
        assert all([k not in module_args for k in kwargs]), 'Overwriting kwargs given in config file is not allowed'
        module_args.update(kwargs)
        return getattr(module, module_name)(*args, **module_args)

    def __getitem__(self, name):
        """Access items like ordinary dict."""
        return self._config[name]

    @property
    def config(self):
        return self._config


# the project's modules: import data_loader.data_loaders as module_data, import model.model as module_arch
module_data = types.SimpleNamespace(MnistDataLoader=MnistDataLoader)
module_arch = types.SimpleNamespace(MnistModel=MnistModel)


# ---- base/base_trainer.py, trainer/trainer.py ---------------------------------------------------------
class BaseTrainer:
    """
    Base class for all trainers
    """
    def __init__(self, model, criterion, metric_ftns, optimizer, config, log):
        self.config = config
        self.logger = log

        self.model = model
        self.criterion = criterion
        self.metric_ftns = metric_ftns
        self.optimizer = optimizer

        cfg_trainer = config['trainer']
        self.epochs = cfg_trainer['epochs']
        self.save_period = cfg_trainer['save_period']
        self.monitor = cfg_trainer.get('monitor', 'off')

        # configuration to monitor model performance and save best
        if self.monitor == 'off':
            self.mnt_mode = 'off'
            self.mnt_best = 0
        else:
            self.mnt_mode, self.mnt_metric = self.monitor.split()
            assert self.mnt_mode in ['min', 'max']

            self.mnt_best = np.inf if self.mnt_mode == 'min' else -np.inf
            self.early_stop = cfg_trainer.get('early_stop', np.inf)
            if self.early_stop <= 0:
                self.early_stop = np.inf

        self.start_epoch = 1

        self.checkpoint_dir = config.save_dir
        self.history = []

    @abstractmethod
    def _train_epoch(self, epoch):
        """
        Training logic for an epoch

        :param epoch: Current epoch number
        """
        raise NotImplementedError

    def train(self):
        """
        Full training logic
        """
        not_improved_count = 0
        for epoch in range(self.start_epoch, self.epochs + 1):
            result = self._train_epoch(epoch)

            # save logged informations into log dict
            log = {'epoch': epoch}
            log.update(result)
            self.history.append(log)

            # print logged informations to the screen
            for key, value in log.items():
                self.logger('    {:15s}: {}'.format(str(key), value))

            # evaluate model performance according to configured metric, save best checkpoint as model_best
            best = False
            if self.mnt_mode != 'off':
                try:
                    # check whether model performance improved or not, according to specified metric(mnt_metric)
                    improved = (self.mnt_mode == 'min' and log[self.mnt_metric] <= self.mnt_best) or \
                               (self.mnt_mode == 'max' and log[self.mnt_metric] >= self.mnt_best)
                except KeyError:
                    self.logger("Warning: Metric '{}' is not found. "
                                "Model performance monitoring is disabled.".format(self.mnt_metric))
                    self.mnt_mode = 'off'
                    improved = False

                if improved:
                    self.mnt_best = log[self.mnt_metric]
                    not_improved_count = 0
                    best = True
                else:
                    not_improved_count += 1

                if not_improved_count > self.early_stop:
                    self.logger("Validation performance didn\'t improve for {} epochs. "
                                "Training stops.".format(self.early_stop))
                    break

            if epoch % self.save_period == 0:
                self._save_checkpoint(epoch, save_best=best)

    def _save_checkpoint(self, epoch, save_best=False):
        """
        Saving checkpoints

        :param epoch: current epoch number
        :param log: logging information of the epoch
        :param save_best: if True, rename the saved checkpoint to 'model_best.pth'
        """
        arch = type(self.model).__name__
        state = {
            'arch': arch,
            'epoch': epoch,
            'state_dict': self.model.state_dict(),
            'optimizer': self.optimizer.state_dict(),
            'monitor_best': self.mnt_best,
            'config': self.config.config
        }
        filename = str(self.checkpoint_dir / 'checkpoint-epoch{}.pth'.format(epoch))
        torch.save(state, filename)
        self.logger("Saving checkpoint: {} ...".format(filename))
        if save_best:
            best_path = str(self.checkpoint_dir / 'model_best.pth')
            torch.save(state, best_path)
            self.logger("Saving current best: model_best.pth ...")

    def _resume_checkpoint(self, resume_path):
        """
        Resume from saved checkpoints

        :param resume_path: Checkpoint path to be resumed
        """
        resume_path = str(resume_path)
        self.logger("Loading checkpoint: {} ...".format(resume_path))
        checkpoint = torch.load(resume_path)
        self.start_epoch = checkpoint['epoch'] + 1
        self.mnt_best = checkpoint['monitor_best']

        # load architecture params from checkpoint.
        if checkpoint['config']['arch'] != self.config['arch']:
            self.logger("Warning: Architecture configuration given in config file is different from that of "
                        "checkpoint. This may yield an exception while state_dict is being loaded.")
        self.model.load_state_dict(checkpoint['state_dict'])

        # load optimizer state from checkpoint only when optimizer type is not changed.
        if checkpoint['config']['optimizer']['type'] != self.config['optimizer']['type']:
            self.logger("Warning: Optimizer type given in config file is different from that of checkpoint. "
                        "Optimizer parameters not being resumed.")
        else:
            self.optimizer.load_state_dict(checkpoint['optimizer'])

        self.logger("Checkpoint loaded. Resume training from epoch {}".format(self.start_epoch))


class Trainer(BaseTrainer):
    """
    Trainer class
    """
    def __init__(self, model, criterion, metric_ftns, optimizer, config, device,
                 data_loader, valid_data_loader=None, lr_scheduler=None, len_epoch=None, log=print, record=None):
        super().__init__(model, criterion, metric_ftns, optimizer, config, log)
        self.config = config
        self.device = device
        self.data_loader = data_loader
        if len_epoch is None:
            # epoch-based training
            self.len_epoch = len(self.data_loader)
        else:
            # iteration-based training
            self.data_loader = inf_loop(data_loader)
            self.len_epoch = len_epoch
        self.valid_data_loader = valid_data_loader
        self.do_validation = self.valid_data_loader is not None
        self.lr_scheduler = lr_scheduler
        self.log_step = int(np.sqrt(data_loader.batch_size))
        self.record = record

        self.train_metrics = MetricTracker('loss', *[m.__name__ for m in self.metric_ftns])
        self.valid_metrics = MetricTracker('loss', *[m.__name__ for m in self.metric_ftns])

    def _train_epoch(self, epoch):
        """
        Training logic for an epoch

        :param epoch: Integer, current training epoch.
        :return: A log that contains average loss and metric in this epoch.
        """
        self.model.train()
        self.train_metrics.reset()
        for batch_idx, (data, target) in enumerate(self.data_loader):
            data, target = data.to(self.device), target.to(self.device)

            self.optimizer.zero_grad()
            output = self.model(data)
            loss = self.criterion(output, target)
            loss.backward()
            self.optimizer.step()

            self.train_metrics.update('loss', loss.item())
            self.record['step_losses'].append(loss.item())
            for met in self.metric_ftns:
                self.train_metrics.update(met.__name__, met(output, target))

            if batch_idx % self.log_step == 0:
                self.logger('Train Epoch: {} {} Loss: {:.6f}'.format(
                    epoch,
                    self._progress(batch_idx),
                    loss.item()))

            if batch_idx == self.len_epoch:
                break
        log = self.train_metrics.result()

        if self.do_validation:
            val_log = self._valid_epoch(epoch)
            log.update(**{'val_'+k : v for k, v in val_log.items()})

        if self.lr_scheduler is not None:
            self.lr_scheduler.step()
        self.record['lrs'].append(self.optimizer.param_groups[0]['lr'])
        return log

    def _valid_epoch(self, epoch):
        """
        Validate after training an epoch

        :param epoch: Integer, current training epoch.
        :return: A log that contains information about validation
        """
        self.model.eval()
        self.valid_metrics.reset()
        with torch.no_grad():
            for batch_idx, (data, target) in enumerate(self.valid_data_loader):
                data, target = data.to(self.device), target.to(self.device)

                output = self.model(data)
                loss = self.criterion(output, target)

                self.valid_metrics.update('loss', loss.item())
                for met in self.metric_ftns:
                    self.valid_metrics.update(met.__name__, met(output, target))

        return self.valid_metrics.result()

    def _progress(self, batch_idx):
        base = '[{}/{} ({:.0f}%)]'
        if hasattr(self.data_loader, 'n_samples'):
            current = batch_idx * self.data_loader.batch_size
            total = self.data_loader.n_samples
        else:
            current = batch_idx
            total = self.len_epoch
        return base.format(current, total, 100.0 * current / total)


def main(argv=None):
    parser = argparse.ArgumentParser()
    parser.add_argument('--epochs', type=int, default=100)
    parser.add_argument('--n_samples', type=int, default=1000)
    parser.add_argument('--batch_size', type=int, default=128)
    parser.add_argument('--len_epoch', type=int, default=None)
    parser.add_argument('--step_size', type=int, default=50)
    parser.add_argument('--early_stop', type=int, default=10)
    parser.add_argument('--resume_at', type=int, default=0)
    parser.add_argument('--quiet', action='store_true')
    args = parser.parse_args(argv)
    log = (lambda *a: None) if args.quiet else print

    # fix random seeds for reproducibility
    SEED = 123
    torch.manual_seed(SEED)
    torch.backends.cudnn.deterministic = True
    torch.backends.cudnn.benchmark = False
    np.random.seed(SEED)

    config = ConfigParser({
        "name": "Mnist_LeNet",
        "n_gpu": 1,
        "arch": {"type": "MnistModel", "args": {}},
        "data_loader": {"type": "MnistDataLoader",
                        "args": {"data_dir": "data/", "batch_size": args.batch_size, "shuffle": True,
                                 "validation_split": 0.1, "num_workers": 0, "n_samples": args.n_samples}},
        "optimizer": {"type": "Adam", "args": {"lr": 0.001, "weight_decay": 0, "amsgrad": True}},
        "loss": "nll_loss",
        "metrics": ["accuracy", "top_k_acc"],
        "lr_scheduler": {"type": "StepLR", "args": {"step_size": args.step_size, "gamma": 0.1}},
        "trainer": {"epochs": args.epochs, "save_dir": "saved/", "save_period": 1, "verbosity": 2,
                    "monitor": "min val_loss", "early_stop": args.early_stop, "tensorboard": False},
    }, tempfile.mkdtemp())

    # setup data_loader instances
    data_loader = config.init_obj('data_loader', module_data)
    valid_data_loader = data_loader.split_validation()

    record = {'step_losses': [], 'lrs': []}

    def build():
        # build model architecture, then print to console
        model = config.init_obj('arch', module_arch)
        log(model)

        # prepare for (multi-device) GPU training
        device = torch.device('cpu')
        model = model.to(device)

        # get function handles of loss and metrics
        criterion = {'nll_loss': nll_loss}[config['loss']]
        metrics = [{'accuracy': accuracy, 'top_k_acc': top_k_acc}[met] for met in config['metrics']]

        # build optimizer, learning rate scheduler. delete every lines containing lr_scheduler for disabling scheduler
        trainable_params = filter(lambda p: p.requires_grad, model.parameters())
        optimizer = config.init_obj('optimizer', torch.optim, trainable_params)
        lr_scheduler = config.init_obj('lr_scheduler', torch.optim.lr_scheduler, optimizer)

        trainer = Trainer(model, criterion, metrics, optimizer,
                          config=config,
                          device=device,
                          data_loader=data_loader,
                          valid_data_loader=valid_data_loader,
                          lr_scheduler=lr_scheduler,
                          len_epoch=args.len_epoch,
                          log=log, record=record)
        return model, trainer

    model, trainer = build()
    initial_state = {k: v.clone() for k, v in model.state_dict().items()}
    history = []
    if args.resume_at:
        trainer.epochs = args.resume_at
        trainer.train()
        history += trainer.history
        # python train.py --resume saved/models/Mnist_LeNet/checkpoint-epochN.pth: a fresh process
        model, trainer = build()
        trainer._resume_checkpoint(config.save_dir / 'checkpoint-epoch{}.pth'.format(args.resume_at))
        trainer.epochs = args.epochs
    trainer.train()
    history += trainer.history

    checkpoint = torch.load(str(config.save_dir / 'model_best.pth'))
    return {'initial_state': initial_state, 'step_losses': record['step_losses'], 'lrs': record['lrs'],
            'history': history, 'model_str': str(model), 'best_epoch': checkpoint['epoch'],
            'monitor_best': checkpoint['monitor_best'], 'saved': sorted(os.listdir(config.save_dir)),
            'optimizer_state': checkpoint['optimizer'], 'n_samples': data_loader.n_samples,
            'final_state': {k: v.clone() for k, v in model.state_dict().items()}}


if __name__ == '__main__':
    main()
