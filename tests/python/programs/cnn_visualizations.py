"""utkuozbulak/pytorch-cnn-visualizations on a small VGG-like net it first trains: vanilla_backprop.py
(first_layer.register_backward_hook(hook_function) keeping grad_in[0], model_output.backward(gradient=
one_hot_output) with one_hot_output = torch.FloatTensor(1, n).zero_(); one_hot_output[0][target_class] = 1),
guided_backprop.py (ReLU modules of model.features._modules.items() with register_backward_hook returning
(corresponding_forward_output * torch.clamp(grad_in[0], min=0.0),) and register_forward_hook recording
ten_out), gradcam.py's CamExtractor (x.register_hook(self.save_gradient) in a loop over the features,
guided_gradients.data.numpy()[0], np.mean(weights), np.maximum(cam, 0), normalisation, np.uint8 and the
resize by F.interpolate instead of PIL), smooth_grad.py (Variable(prep_img.data.new(prep_img.size()).normal_(
mean, sigma ** 2)) noise), integrated_gradients.py (xbar_list of step * input_image) and
misc_functions' convert_to_grayscale (np.sum(np.abs(im_as_arr), axis=0), np.percentile, np.clip). The model is
trained a few steps on synthetic images first (the repo loads a pretrained AlexNet / VGG)."""
import argparse

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.autograd import Variable
from torch.nn import ReLU


class SmallVGG(nn.Module):
    def __init__(self, n_classes=3):
        super(SmallVGG, self).__init__()
        self.features = nn.Sequential(
            nn.Conv2d(3, 8, 3, padding=1), nn.ReLU(inplace=True), nn.MaxPool2d(2),
            nn.Conv2d(8, 16, 3, padding=1), nn.ReLU(inplace=True),
            nn.Conv2d(16, 16, 3, padding=1), nn.ReLU(inplace=True), nn.MaxPool2d(2))
        self.classifier = nn.Sequential(nn.Linear(16 * 4 * 4, 32), nn.ReLU(inplace=True), nn.Dropout(),
                                        nn.Linear(32, n_classes))

    def forward(self, x):
        x = self.features(x)
        return self.classifier(x.view(x.size(0), -1))


def convert_to_grayscale(im_as_arr):
    grayscale_im = np.sum(np.abs(im_as_arr), axis=0)
    im_max = np.percentile(grayscale_im, 99)
    im_min = np.min(grayscale_im)
    grayscale_im = (np.clip((grayscale_im - im_min) / (im_max - im_min), 0, 1))
    grayscale_im = np.expand_dims(grayscale_im, axis=0)
    return grayscale_im


class VanillaBackprop():
    def __init__(self, model):
        self.model = model
        self.gradients = None
        # Put model in evaluation mode
        self.model.eval()
        # Hook the first layer to get the gradient
        self.hook_layers()

    def hook_layers(self):
        def hook_function(module, grad_in, grad_out):
            self.gradients = grad_in[0]

        # Register hook to the first layer
        first_layer = list(self.model.features._modules.items())[0][1]
        first_layer.register_backward_hook(hook_function)

    def generate_gradients(self, input_image, target_class):
        # Forward
        model_output = self.model(input_image)
        # Zero grads
        self.model.zero_grad()
        # Target for backprop
        one_hot_output = torch.FloatTensor(1, model_output.size()[-1]).zero_()
        one_hot_output[0][target_class] = 1
        # Backward pass
        model_output.backward(gradient=one_hot_output)
        gradients_as_arr = self.gradients.data.numpy()[0]
        return gradients_as_arr


class GuidedBackprop():
    def __init__(self, model):
        self.model = model
        self.gradients = None
        self.forward_relu_outputs = []
        # Put model in evaluation mode
        self.model.eval()
        self.update_relus()
        self.hook_layers()

    def hook_layers(self):
        def hook_function(module, grad_in, grad_out):
            self.gradients = grad_in[0]
        # Register hook to the first layer
        first_layer = list(self.model.features._modules.items())[0][1]
        first_layer.register_backward_hook(hook_function)

    def update_relus(self):
        def relu_backward_hook_function(module, grad_in, grad_out):
            # Get last forward output
            corresponding_forward_output = self.forward_relu_outputs[-1]
            corresponding_forward_output[corresponding_forward_output > 0] = 1
            modified_grad_out = corresponding_forward_output * torch.clamp(grad_in[0], min=0.0)
            del self.forward_relu_outputs[-1]  # Remove last forward output
            return (modified_grad_out,)

        def relu_forward_hook_function(module, ten_in, ten_out):
            self.forward_relu_outputs.append(ten_out)

        # Loop through layers, hook up ReLUs
        for pos, module in self.model.features._modules.items():
            if isinstance(module, ReLU):
                module.register_backward_hook(relu_backward_hook_function)
                module.register_forward_hook(relu_forward_hook_function)

    def generate_gradients(self, input_image, target_class):
        # Forward pass
        model_output = self.model(input_image)
        # Zero gradients
        self.model.zero_grad()
        # Target for backprop
        one_hot_output = torch.FloatTensor(1, model_output.size()[-1]).zero_()
        one_hot_output[0][target_class] = 1
        # Backward pass
        model_output.backward(gradient=one_hot_output)
        gradients_as_arr = self.gradients.data.numpy()[0]
        return gradients_as_arr


class CamExtractor():
    def __init__(self, model, target_layer):
        self.model = model
        self.target_layer = target_layer
        self.gradients = None

    def save_gradient(self, grad):
        self.gradients = grad

    def forward_pass_on_convolutions(self, x):
        conv_output = None
        for module_pos, module in self.model.features._modules.items():
            x = module(x)  # Forward
            if int(module_pos) == self.target_layer:
                x.register_hook(self.save_gradient)
                conv_output = x  # Save the convolution output on that layer
        return conv_output, x

    def forward_pass(self, x):
        # Forward pass on the convolutions
        conv_output, x = self.forward_pass_on_convolutions(x)
        x = x.view(x.size(0), -1)  # Flatten
        # Forward pass on the classifier
        x = self.model.classifier(x)
        return conv_output, x


class GradCam():
    def __init__(self, model, target_layer):
        self.model = model
        self.model.eval()
        # Define extractor
        self.extractor = CamExtractor(self.model, target_layer)

    def generate_cam(self, input_image, target_class=None):
        conv_output, model_output = self.extractor.forward_pass(input_image)
        if target_class is None:
            target_class = np.argmax(model_output.data.numpy())
        # Target for backprop
        one_hot_output = torch.FloatTensor(1, model_output.size()[-1]).zero_()
        one_hot_output[0][target_class] = 1
        # Zero grads
        self.model.features.zero_grad()
        self.model.classifier.zero_grad()
        # Backward pass with specified target
        model_output.backward(gradient=one_hot_output, retain_graph=True)
        # Get hooked gradients
        guided_gradients = self.extractor.gradients.data.numpy()[0]
        # Get convolution outputs
        target = conv_output.data.numpy()[0]
        # Get weights from gradients
        weights = np.mean(guided_gradients, axis=(1, 2))  # Take averages for each gradient
        # Create empty numpy array for cam
        cam = np.ones(target.shape[1:], dtype=np.float32)
        # Multiply each weight with its conv output and then, sum
        for i, w in enumerate(weights):
            cam += w * target[i, :, :]
        cam = np.maximum(cam, 0)
        cam = (cam - np.min(cam)) / (np.max(cam) - np.min(cam))  # Normalize between 0-1
        cam = np.uint8(cam * 255)  # Scale between 0-255 to visualize
        cam = F.interpolate(torch.from_numpy(cam.astype(np.float32))[None, None], size=input_image.shape[2:],
                            mode='bilinear', align_corners=False)[0, 0].numpy() / 255
        return cam


def generate_smooth_grad(Backprop, prep_img, target_class, param_n, param_sigma_multiplier):
    # Generate an empty image/matrix
    smooth_grad = np.zeros(prep_img.size()[1:])

    mean = 0
    sigma = param_sigma_multiplier / (torch.max(prep_img) - torch.min(prep_img)).item()
    for x in range(param_n):
        # Generate noise
        noise = Variable(prep_img.data.new(prep_img.size()).normal_(mean, sigma**2))
        # Add noise to the image
        noisy_img = prep_img + noise
        # Calculate gradients
        vanilla_grads = Backprop.generate_gradients(noisy_img, target_class)
        # Add gradients to smooth_grad
        smooth_grad = smooth_grad + vanilla_grads
    # Average it out
    smooth_grad = smooth_grad / param_n
    return smooth_grad


class IntegratedGradients():
    def __init__(self, model):
        self.model = model
        self.gradients = None
        self.model.eval()
        self.hook_layers()

    def hook_layers(self):
        def hook_function(module, grad_in, grad_out):
            self.gradients = grad_in[0]

        first_layer = list(self.model.features._modules.items())[0][1]
        first_layer.register_backward_hook(hook_function)

    def generate_images_on_linear_path(self, input_image, steps):
        step_list = np.arange(steps + 1) / steps
        xbar_list = [input_image * step for step in step_list]
        return xbar_list

    def generate_gradients(self, input_image, target_class):
        model_output = self.model(input_image)
        self.model.zero_grad()
        one_hot_output = torch.FloatTensor(1, model_output.size()[-1]).zero_()
        one_hot_output[0][target_class] = 1
        model_output.backward(gradient=one_hot_output)
        gradients_as_arr = self.gradients.data.numpy()[0]
        return gradients_as_arr

    def generate_integrated_gradients(self, input_image, target_class, steps):
        xbar_list = self.generate_images_on_linear_path(input_image, steps)
        integrated_grads = np.zeros(input_image.size())
        for xbar_image in xbar_list:
            single_integrated_grad = self.generate_gradients(xbar_image, target_class)
            integrated_grads = integrated_grads + single_integrated_grad / steps
        return integrated_grads[0]


def main(argv=None):
    parser = argparse.ArgumentParser()
    parser.add_argument('--train-steps', type=int, default=10)
    parser.add_argument('--quiet', action='store_true')
    args = parser.parse_args(argv)
    log = (lambda *a: None) if args.quiet else print

    torch.manual_seed(0)
    rng = np.random.RandomState(0)
    labels = rng.randint(0, 3, 48)
    images = rng.rand(48, 3, 16, 16).astype(np.float32) * 0.3
    for i, c in enumerate(labels):
        images[i, c, 4 * c:4 * c + 6, 3:11] += 1.0
    x_all, y_all = torch.from_numpy(images), torch.from_numpy(labels)

    pretrained_model = SmallVGG()
    initial_state = {k: v.clone() for k, v in pretrained_model.state_dict().items()}
    optimizer = torch.optim.SGD(pretrained_model.parameters(), lr=0.05, momentum=0.9)
    step_losses = []
    for step in range(args.train_steps):
        pretrained_model.train()
        idx = torch.arange(step * 16, step * 16 + 16) % 48
        optimizer.zero_grad()
        loss = F.cross_entropy(pretrained_model(x_all[idx]), y_all[idx])
        loss.backward()
        optimizer.step()
        step_losses.append(loss.item())
        log(step, loss.item())

    prep_img = Variable(x_all[:1].clone(), requires_grad=True)
    target_class = int(y_all[0])

    VBP = VanillaBackprop(SmallVGG())
    VBP.model.load_state_dict(pretrained_model.state_dict())
    vanilla_grads = VBP.generate_gradients(prep_img, target_class)
    grayscale_vanilla_grads = convert_to_grayscale(vanilla_grads)

    GBP = GuidedBackprop(SmallVGG())
    GBP.model.load_state_dict(pretrained_model.state_dict())
    guided_grads = GBP.generate_gradients(prep_img, target_class)

    grad_cam = GradCam(pretrained_model, target_layer=5)
    cam = grad_cam.generate_cam(prep_img, target_class)
    cam_guided = np.multiply(cam, guided_grads)

    smooth_grad = generate_smooth_grad(VBP, prep_img, target_class, 5, 4)

    IG = IntegratedGradients(SmallVGG())
    IG.model.load_state_dict(pretrained_model.state_dict())
    integrated_grads = IG.generate_integrated_gradients(prep_img, target_class, 10)
    return {"initial_state": initial_state, "step_losses": step_losses, "vanilla": vanilla_grads,
            "gray": grayscale_vanilla_grads, "guided": guided_grads, "cam": cam, "cam_guided": cam_guided,
            "smooth": smooth_grad, "integrated": integrated_grads, "prep_grad": prep_img.grad.clone()}


if __name__ == "__main__":
    main()
