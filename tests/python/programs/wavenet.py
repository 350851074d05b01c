"""A WaveNet as golbin/WaveNet (wavenet/networks.py and wavenet/model.py) writes it: DilatedCausalConv1d
(Conv1d(kernel_size=2, dilation=d, bias=False)), CausalConv1d (kernel_size=2, padding=1, dropping the
last output), ResidualBlock (tanh * sigmoid gate, 1x1 residual and skip convs, output[:, :, -skip_size:]),
ResidualStack's dilations, DenseNet (ReLU / 1x1 conv / ReLU / 1x1 conv / Softmax(dim=1)), WaveNet's
calc_receptive_fields / calc_output_size and check_input_dim raising InputSizeError, torch.stack of the
skip connections and torch.sum; utils' mu-law companding (np.sign * np.log1p(mu * abs) / np.log1p(mu))
and one_hot_encode; model.py's train step (CrossEntropyLoss on outputs.view(-1, in_channels) against
targets.long().view(-1), Adam) and the autoregressive generation by argmax. Audio is a synthetic
sinusoid; the model is small."""
import argparse

import numpy as np
import torch


class InputSizeError(Exception):
    def __init__(self, input_size, receptive_fields, output_size):
        message = 'Input size has to be larger than receptive_fields\n'
        message += 'Input size: {0}, Receptive fields size: {1}, Output size: {2}'.format(
            input_size, receptive_fields, output_size)
        super(InputSizeError, self).__init__(message)


class DilatedCausalConv1d(torch.nn.Module):
    """Dilated Causal Convolution for WaveNet"""

    def __init__(self, channels, dilation=1):
        super(DilatedCausalConv1d, self).__init__()

        self.conv = torch.nn.Conv1d(channels, channels,
                                    kernel_size=2, stride=1,  # Fixed for WaveNet
                                    dilation=dilation,
                                    padding=0,  # Fixed for WaveNet dilation
                                    bias=False)  # Fixed for WaveNet but not sure

    def init_weights_for_test(self):
        for m in self.modules():
            if isinstance(m, torch.nn.Conv1d):
                m.weight.data.fill_(1)

    def forward(self, x):
        output = self.conv(x)
        return output


class CausalConv1d(torch.nn.Module):
    """Causal Convolution for WaveNet"""

    def __init__(self, in_channels, out_channels):
        super(CausalConv1d, self).__init__()

        # padding=1 for same size(length) between input and output for causal convolution
        self.conv = torch.nn.Conv1d(in_channels, out_channels,
                                    kernel_size=2, stride=1, padding=1,
                                    bias=False)  # Fixed for WaveNet but not sure

    def forward(self, x):
        output = self.conv(x)

        # remove last value for causal convolution
        return output[:, :, :-1]


class ResidualBlock(torch.nn.Module):
    def __init__(self, res_channels, skip_channels, dilation):
        super(ResidualBlock, self).__init__()

        self.dilated = DilatedCausalConv1d(res_channels, dilation=dilation)
        self.conv_res = torch.nn.Conv1d(res_channels, res_channels, 1)
        self.conv_skip = torch.nn.Conv1d(res_channels, skip_channels, 1)

        self.gate_tanh = torch.nn.Tanh()
        self.gate_sigmoid = torch.nn.Sigmoid()

    def forward(self, x, skip_size):
        output = self.dilated(x)

        # PixelCNN gate
        gated_tanh = self.gate_tanh(output)
        gated_sigmoid = self.gate_sigmoid(output)
        gated = gated_tanh * gated_sigmoid

        # Residual network
        output = self.conv_res(gated)
        input_cut = x[:, :, -output.size(2):]
        output += input_cut

        # Skip connection
        skip = self.conv_skip(gated)
        skip = skip[:, :, -skip_size:]

        return output, skip


class ResidualStack(torch.nn.Module):
    def __init__(self, layer_size, stack_size, res_channels, skip_channels):
        super(ResidualStack, self).__init__()

        self.layer_size = layer_size
        self.stack_size = stack_size

        self.res_blocks = torch.nn.ModuleList(self.stack_res_block(res_channels, skip_channels))

    @staticmethod
    def _residual_block(res_channels, skip_channels, dilation):
        block = ResidualBlock(res_channels, skip_channels, dilation)
        return block

    def build_dilations(self):
        dilations = []

        # 5 = stack[layer1, layer2, layer3, layer4, layer5]
        for s in range(0, self.stack_size):
            # 10 = layer[dilation=1, dilation=2, 4, 8, 16, 32, 64, 128, 256, 512]
            for l in range(0, self.layer_size):
                dilations.append(2 ** l)

        return dilations

    def stack_res_block(self, res_channels, skip_channels):
        res_blocks = []
        dilations = self.build_dilations()

        for dilation in dilations:
            block = self._residual_block(res_channels, skip_channels, dilation)
            res_blocks.append(block)

        return res_blocks

    def forward(self, x, skip_size):
        output = x
        skip_connections = []

        for res_block in self.res_blocks:
            # output is the next input
            output, skip = res_block(output, skip_size)
            skip_connections.append(skip)

        return torch.stack(skip_connections)


class DensNet(torch.nn.Module):
    def __init__(self, channels):
        super(DensNet, self).__init__()

        self.conv1 = torch.nn.Conv1d(channels, channels, 1)
        self.conv2 = torch.nn.Conv1d(channels, channels, 1)

        self.relu = torch.nn.ReLU()
        self.softmax = torch.nn.Softmax(dim=1)

    def forward(self, x):
        output = self.relu(x)
        output = self.conv1(output)
        output = self.relu(output)
        output = self.conv2(output)

        output = self.softmax(output)

        return output


class WaveNetModule(torch.nn.Module):
    def __init__(self, layer_size, stack_size, in_channels, res_channels):
        super(WaveNetModule, self).__init__()

        self.receptive_fields = self.calc_receptive_fields(layer_size, stack_size)

        self.causal = CausalConv1d(in_channels, res_channels)

        self.res_stack = ResidualStack(layer_size, stack_size, res_channels, in_channels)

        self.densnet = DensNet(in_channels)

    @staticmethod
    def calc_receptive_fields(layer_size, stack_size):
        layers = [2 ** i for i in range(0, layer_size)] * stack_size
        num_receptive_fields = np.sum(layers)

        return int(num_receptive_fields)

    def calc_output_size(self, x):
        output_size = int(x.size(2)) - self.receptive_fields

        self.check_input_size(x, output_size)

        return output_size

    def check_input_size(self, x, output_size):
        if output_size < 1:
            raise InputSizeError(int(x.size(2)), self.receptive_fields, output_size)

    def forward(self, x):
        output = x.transpose(1, 2)

        output_size = self.calc_output_size(output)

        output = self.causal(output)

        skip_connections = self.res_stack(output, output_size)

        output = torch.sum(skip_connections, dim=0)

        output = self.densnet(output)

        return output.transpose(1, 2).contiguous()


def mu_law_encode(audio, quantization_channels=256):
    mu = float(quantization_channels - 1)
    quantize_space = np.linspace(-1, 1, quantization_channels)
    quantized = np.sign(audio) * np.log(1 + mu * np.abs(audio)) / np.log(mu + 1)
    quantized = np.digitize(quantized, quantize_space) - 1
    return quantized


def mu_law_decode(output, quantization_channels=256):
    mu = float(quantization_channels - 1)
    expanded = (output / quantization_channels) * 2. - 1
    waveform = np.sign(expanded) * (np.exp(np.abs(expanded) * np.log(mu + 1)) - 1) / mu
    return waveform


def one_hot_encode(data, channels=256):
    one_hot = np.zeros((data.size, channels), dtype=float)
    one_hot[np.arange(data.size), data.ravel()] = 1
    return one_hot


class WaveNet:
    def __init__(self, layer_size, stack_size, in_channels, res_channels, lr=0.002):
        self.layer_size = layer_size
        self.stack_size = stack_size
        self.in_channels = in_channels
        self.res_channels = res_channels
        self.receptive_fields = WaveNetModule.calc_receptive_fields(layer_size, stack_size)
        self.lr = lr
        self.loss = self._loss()
        self.net = WaveNetModule(layer_size, stack_size, in_channels, res_channels)
        self.optimizer = self._optimizer()

    @staticmethod
    def _loss():
        loss = torch.nn.CrossEntropyLoss()
        return loss

    def _optimizer(self):
        return torch.optim.Adam(self.net.parameters(), lr=self.lr)

    def train(self, inputs, targets):
        outputs = self.net(inputs)
        loss = self.loss(outputs.view(-1, self.in_channels), targets.long().view(-1))
        self.optimizer.zero_grad()
        loss.backward()
        self.optimizer.step()
        return loss.item()

    def generate(self, inputs):
        outputs = self.net(inputs)
        return outputs


def main(argv=None):
    p = argparse.ArgumentParser()
    p.add_argument('--layer_size', type=int, default=4)
    p.add_argument('--stack_size', type=int, default=2)
    p.add_argument('--in_channels', type=int, default=32)
    p.add_argument('--res_channels', type=int, default=16)
    p.add_argument('--sample_size', type=int, default=96)
    p.add_argument('--steps', type=int, default=20)
    p.add_argument('--quiet', action='store_true')
    args = p.parse_args(argv)

    torch.manual_seed(0)
    rng = np.random.RandomState(0)
    t = np.arange(4000) / 800.0
    audio = 0.6 * np.sin(2 * np.pi * 3 * t) * np.cos(2 * np.pi * 0.7 * t) + 0.02 * rng.randn(len(t))
    quantized = mu_law_encode(audio, args.in_channels)
    wavenet = WaveNet(args.layer_size, args.stack_size, args.in_channels, args.res_channels)
    initial_state = {k: v.clone() for k, v in wavenet.net.state_dict().items()}
    step_losses = []
    rf = wavenet.receptive_fields
    for step in range(args.steps):
        starts = rng.randint(0, len(quantized) - args.sample_size - 1, size=4)
        x = np.stack([one_hot_encode(quantized[s:s + args.sample_size], args.in_channels) for s in starts])
        y = np.stack([quantized[s + rf + 1:s + args.sample_size + 1] for s in starts])
        inputs = torch.from_numpy(x).float()
        targets = torch.from_numpy(y)
        step_losses.append(wavenet.train(inputs, targets))
    try:
        wavenet.net(torch.zeros(1, rf, args.in_channels))
        err = None
    except InputSizeError as e:
        err = str(e)
    generated = list(quantized[:rf + 1])
    with torch.no_grad():
        for _ in range(10):
            x = torch.from_numpy(one_hot_encode(np.array(generated[-(rf + 1):]), args.in_channels)).float()[None]
            out = wavenet.generate(x)
            generated.append(int(torch.argmax(out[0, -1]).item()))
    return {"initial_state": initial_state, "step_losses": step_losses, "err": err, "generated": generated,
            "decoded": mu_law_decode(np.array(generated), args.in_channels), "final_state": wavenet.net.state_dict()}


if __name__ == '__main__':
    main()
