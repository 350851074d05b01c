"""PyTorch recipe "Automatic Mixed Precision" (recipes/recipes/amp_recipe.py), run on the CPU as the
recipe says to ("device = 'cuda' if torch.cuda.is_available() else 'cpu'") with the CPU's autocast
dtype, torch.bfloat16: make_model's nn.Sequential of Linear/ReLU built from a tuple, data as lists of
torch.randn batches, the default-precision baseline loop, the autocast loop asserting output.dtype is
torch.bfloat16 and loss.dtype is torch.float32, torch.cuda.amp.GradScaler(enabled=use_amp) (which
disables itself without CUDA: scale() returns the loss, step() calls opt.step(), state_dict() is {}),
scaler.unscale_ + clip_grad_norm_ before scaler.step, and the checkpoint of {"model", "optimizer",
"scaler"} state dicts saved and loaded back with a map_location lambda. Sizes are arguments (the recipe
uses 512 x 4096, 3 layers, 50 batches, 3 epochs)."""
import argparse
import gc
import os
import tempfile
import time
import warnings

import torch

# Timing utilities
start_time = None


def start_timer():
    global start_time
    gc.collect()
    start_time = time.time()


def end_timer_and_print(local_msg, log):
    end_time = time.time()
    log("\n" + local_msg)
    log("Total execution time = {:.3f} sec".format(end_time - start_time))


def make_model(in_size, out_size, num_layers, device):
    layers = []
    for _ in range(num_layers - 1):
        layers.append(torch.nn.Linear(in_size, in_size))
        layers.append(torch.nn.ReLU())
    layers.append(torch.nn.Linear(in_size, out_size))
    return torch.nn.Sequential(*tuple(layers)).to(device)


def main(argv=None):
    parser = argparse.ArgumentParser()
    parser.add_argument('--batch_size', type=int, default=512)
    parser.add_argument('--in_size', type=int, default=4096)
    parser.add_argument('--out_size', type=int, default=4096)
    parser.add_argument('--num_layers', type=int, default=3)
    parser.add_argument('--num_batches', type=int, default=50)
    parser.add_argument('--epochs', type=int, default=3)
    parser.add_argument('--quiet', action='store_true')
    args = parser.parse_args(argv)
    log = (lambda *a: None) if args.quiet else print

    torch.manual_seed(0)
    batch_size = args.batch_size  # Try, for example, 128, 256, 513.
    in_size = args.in_size
    out_size = args.out_size
    num_layers = args.num_layers
    num_batches = args.num_batches
    epochs = args.epochs

    device = 'cuda' if torch.cuda.is_available() else 'cpu'
    amp_dtype = torch.float16 if device == 'cuda' else torch.bfloat16

    # Creates data in default precision.
    # The same data is used for both default and mixed precision trials below.
    # You don't need to manually change inputs' ``dtype`` when enabling mixed precision.
    data = [torch.randn(batch_size, in_size, device=device) for _ in range(num_batches)]
    targets = [torch.randn(batch_size, out_size, device=device) for _ in range(num_batches)]

    loss_fn = torch.nn.MSELoss().to(device)
    record = {'default': [], 'autocast': [], 'scaler': [], 'clipped': [], 'grad_norms': []}

    # Default Precision
    net = make_model(in_size, out_size, num_layers, device)
    record['initial_state'] = {k: v.clone() for k, v in net.state_dict().items()}
    opt = torch.optim.SGD(net.parameters(), lr=0.001)

    start_timer()
    for epoch in range(epochs):
        for input, target in zip(data, targets):
            output = net(input)
            loss = loss_fn(output, target)
            loss.backward()
            opt.step()
            opt.zero_grad()  # set_to_none=True here can modestly improve performance
            record['default'].append(loss.item())
    end_timer_and_print("Default precision:", log)

    # Adding ``torch.autocast``
    net = make_model(in_size, out_size, num_layers, device)
    record['amp_initial_state'] = {k: v.clone() for k, v in net.state_dict().items()}
    opt = torch.optim.SGD(net.parameters(), lr=0.001)
    for epoch in range(epochs):
        for input, target in zip(data, targets):
            # Runs the forward pass under ``autocast``.
            with torch.autocast(device_type=device, dtype=amp_dtype):
                output = net(input)
                # output is float16 because linear layers ``autocast`` to float16.
                assert output.dtype is amp_dtype

                loss = loss_fn(output, target)
                # loss is float32 because ``mse_loss`` layers ``autocast`` to float32.
                assert loss.dtype is torch.float32

            # Exits ``autocast`` before backward().
            # Backward passes under ``autocast`` are not recommended.
            # Backward ops run in the same ``dtype`` ``autocast`` chose for corresponding forward ops.
            loss.backward()
            opt.step()
            opt.zero_grad()  # set_to_none=True here can modestly improve performance
            record['autocast'].append(loss.item())

    # All together: "Automatic Mixed Precision"
    use_amp = True

    net = make_model(in_size, out_size, num_layers, device)
    opt = torch.optim.SGD(net.parameters(), lr=0.001)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        scaler = torch.cuda.amp.GradScaler(enabled=use_amp)
    record['scaler_warnings'] = [str(w.message) for w in caught]
    record['scaler_enabled'] = scaler.is_enabled()

    start_timer()
    for epoch in range(epochs):
        for input, target in zip(data, targets):
            with torch.autocast(device_type=device, dtype=amp_dtype, enabled=use_amp):
                output = net(input)
                loss = loss_fn(output, target)
            scaler.scale(loss).backward()
            scaler.step(opt)
            scaler.update()
            opt.zero_grad()  # set_to_none=True here can modestly improve performance
            record['scaler'].append(loss.item())
    end_timer_and_print("Mixed precision:", log)

    # Inspecting/modifying gradients (e.g., clipping)
    for epoch in range(1):
        for input, target in zip(data, targets):
            with torch.autocast(device_type=device, dtype=amp_dtype):
                output = net(input)
                loss = loss_fn(output, target)
            scaler.scale(loss).backward()

            # Unscales the gradients of optimizer's assigned parameters in-place
            scaler.unscale_(opt)

            # Since the gradients of optimizer's assigned parameters are now unscaled, clips as usual.
            # You may use the same value for max_norm here as you would without gradient scaling.
            record['grad_norms'].append(float(torch.nn.utils.clip_grad_norm_(net.parameters(), max_norm=0.1)))

            scaler.step(opt)
            scaler.update()
            opt.zero_grad()  # set_to_none=True here can modestly improve performance
            record['clipped'].append(loss.item())

    # Saving/Resuming
    checkpoint = {"model": net.state_dict(),
                  "optimizer": opt.state_dict(),
                  "scaler": scaler.state_dict()}
    # Write checkpoint as desired, e.g.,
    filename = os.path.join(tempfile.mkdtemp(), "filename")
    torch.save(checkpoint, filename)

    checkpoint = torch.load(filename,
                            map_location=lambda storage, loc: storage)
    net2 = make_model(in_size, out_size, num_layers, device)
    opt2 = torch.optim.SGD(net2.parameters(), lr=0.001)
    net2.load_state_dict(checkpoint["model"])
    opt2.load_state_dict(checkpoint["optimizer"])
    scaler.load_state_dict(checkpoint["scaler"])
    record['scaler_state'] = checkpoint["scaler"]
    with torch.no_grad(), torch.autocast(device_type=device, dtype=amp_dtype):
        out1, out2 = net(data[0]), net2(data[0])
    record['resumed_equal'] = bool(torch.equal(out1, out2))
    record['resumed_out'] = out2.float()
    record['step_losses'] = record['default'] + record['autocast'] + record['scaler'] + record['clipped']
    return record


if __name__ == '__main__':
    main()
