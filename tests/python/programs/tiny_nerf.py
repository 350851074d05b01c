"""krrish94/nerf-pytorch's tiny_nerf.py (the "tiny NeRF" of the NeRF paper's colab, in PyTorch) plus the
hierarchical sampling of its nerf/nerf_helpers.py: meshgrid_xy (torch.meshgrid then transpose(-1, -2)),
cumprod_exclusive (torch.cumprod, torch.roll, cumprod[..., 0] = 1.), get_ray_bundle (torch.stack of the
directions, torch.sum(directions[..., None, :] * tform_cam2world[:3, :3], dim=-1), expand), compute_query_points
(torch.linspace depth values, the stratified noise torch.rand(list(shape)) * (far - near) / num_samples),
positional_encoding (torch.sin / torch.cos of 2.0 ** torch.linspace(0, L-1, L) frequencies, torch.cat),
get_minibatches, render_volume_density (torch.nn.functional.relu sigma, torch.sigmoid rgb, the
torch.tensor([1e10]).expand(...) last distance, cumprod_exclusive transmittance, weights summed), the
VeryTinyNerfModel, and sample_pdf_2 (weights + 1e-5, torch.cumsum, torch.cat of zeros, torch.searchsorted(cdf,
u, right=True), torch.max / torch.min against zeros_like / ones_like, torch.stack, torch.gather of an
expanded cdf, torch.where(denom < 1e-5, torch.ones_like(denom), denom)) for the fine network. The lego scene is
replaced by a procedurally coloured sphere rendered by the same volume renderer."""
import argparse

import numpy as np
import torch


def meshgrid_xy(tensor1, tensor2):
    ii, jj = torch.meshgrid(tensor1, tensor2)
    return ii.transpose(-1, -2), jj.transpose(-1, -2)


def cumprod_exclusive(tensor):
    # Only works for the last dimension (dim=-1)
    dim = -1
    # Compute regular cumprod first (this is equivalent to `tf.math.cumprod(..., exclusive=False)`).
    cumprod = torch.cumprod(tensor, dim)
    # "Roll" the elements along dimension 'dim' by 1 element.
    cumprod = torch.roll(cumprod, 1, dim)
    # Replace the first element by "1" as this is what tf.cumprod(..., exclusive=True) does.
    cumprod[..., 0] = 1.

    return cumprod


def get_ray_bundle(height, width, focal_length, tform_cam2world):
    ii, jj = meshgrid_xy(
        torch.arange(width).to(tform_cam2world),
        torch.arange(height).to(tform_cam2world)
    )
    directions = torch.stack([(ii - width * .5) / focal_length,
                              -(jj - height * .5) / focal_length,
                              -torch.ones_like(ii)
                              ], dim=-1)
    ray_directions = torch.sum(directions[..., None, :] * tform_cam2world[:3, :3], dim=-1)
    ray_origins = tform_cam2world[:3, -1].expand(ray_directions.shape)
    return ray_origins, ray_directions


def compute_query_points_from_rays(ray_origins, ray_directions, near_thresh, far_thresh, num_samples,
                                   randomize=True):
    # shape: (num_samples)
    depth_values = torch.linspace(near_thresh, far_thresh, num_samples).to(ray_origins)
    if randomize is True:
        # ray_origins: (width, height, 3)
        # noise_shape = (width, height, num_samples)
        noise_shape = list(ray_origins.shape[:-1]) + [num_samples]
        # depth_values: (num_samples)
        depth_values = depth_values \
            + torch.rand(noise_shape).to(ray_origins) * (far_thresh
                                                         - near_thresh) / num_samples
    query_points = ray_origins[..., None, :] + ray_directions[..., None, :] * depth_values[..., :, None]
    return query_points, depth_values


def render_volume_density(radiance_field, ray_origins, depth_values):
    sigma_a = torch.nn.functional.relu(radiance_field[..., 3])
    rgb = torch.sigmoid(radiance_field[..., :3])
    one_e_10 = torch.tensor([1e10], dtype=ray_origins.dtype, device=ray_origins.device)
    dists = torch.cat((depth_values[..., 1:] - depth_values[..., :-1],
                       one_e_10.expand(depth_values[..., :1].shape)), dim=-1)
    alpha = 1. - torch.exp(-sigma_a * dists)
    weights = alpha * cumprod_exclusive(1. - alpha + 1e-10)

    rgb_map = (weights[..., None] * rgb).sum(dim=-2)
    depth_map = (weights * depth_values).sum(dim=-1)
    acc_map = weights.sum(-1)

    return rgb_map, depth_map, acc_map, weights


def positional_encoding(tensor, num_encoding_functions=6, include_input=True, log_sampling=True):
    encoding = [tensor] if include_input else []
    # Now, encode the input using a set of high-frequency functions and append the
    # resulting values to the encoding.
    frequency_bands = None
    if log_sampling:
        frequency_bands = 2.0 ** torch.linspace(
            0.0,
            num_encoding_functions - 1,
            num_encoding_functions,
            dtype=tensor.dtype,
            device=tensor.device,
        )
    else:
        frequency_bands = torch.linspace(
            2.0 ** 0.0,
            2.0 ** (num_encoding_functions - 1),
            num_encoding_functions,
            dtype=tensor.dtype,
            device=tensor.device,
        )

    for freq in frequency_bands:
        for func in [torch.sin, torch.cos]:
            encoding.append(func(tensor * freq))

    # Special case, for no positional encoding
    if len(encoding) == 1:
        return encoding[0]
    else:
        return torch.cat(encoding, dim=-1)


def get_minibatches(inputs, chunksize=1024 * 8):
    return [inputs[i:i + chunksize] for i in range(0, inputs.shape[0], chunksize)]


def sample_pdf_2(bins, weights, num_samples, det=False):
    weights = weights + 1e-5  # prevent nans
    pdf = weights / torch.sum(weights, -1, keepdim=True)
    cdf = torch.cumsum(pdf, -1)
    cdf = torch.cat([torch.zeros_like(cdf[..., :1]), cdf], -1)  # (batchsize, len(bins))

    # Take uniform samples
    if det:
        u = torch.linspace(0.0, 1.0, steps=num_samples, dtype=weights.dtype, device=weights.device)
        u = u.expand(list(cdf.shape[:-1]) + [num_samples])
    else:
        u = torch.rand(list(cdf.shape[:-1]) + [num_samples], dtype=weights.dtype, device=weights.device)

    # Invert CDF
    u = u.contiguous()
    cdf = cdf.contiguous()
    inds = torch.searchsorted(cdf, u, right=True)
    below = torch.max(torch.zeros_like(inds - 1), inds - 1)
    above = torch.min((cdf.shape[-1] - 1) * torch.ones_like(inds), inds)
    inds_g = torch.stack((below, above), dim=-1)  # (batchsize, num_samples, 2)

    matched_shape = (inds_g.shape[0], inds_g.shape[1], cdf.shape[-1])
    cdf_g = torch.gather(cdf.unsqueeze(1).expand(matched_shape), 2, inds_g)
    bins_g = torch.gather(bins.unsqueeze(1).expand(matched_shape), 2, inds_g)

    denom = cdf_g[..., 1] - cdf_g[..., 0]
    denom = torch.where(denom < 1e-5, torch.ones_like(denom), denom)
    t = (u - cdf_g[..., 0]) / denom
    samples = bins_g[..., 0] + t * (bins_g[..., 1] - bins_g[..., 0])

    return samples


class VeryTinyNerfModel(torch.nn.Module):
    def __init__(self, filter_size=128, num_encoding_functions=6):
        super(VeryTinyNerfModel, self).__init__()
        # Input layer (default: 39 -> 128)
        self.layer1 = torch.nn.Linear(3 + 3 * 2 * num_encoding_functions, filter_size)
        # Layer 2 (default: 128 -> 128)
        self.layer2 = torch.nn.Linear(filter_size, filter_size)
        # Layer 3 (default: 128 -> 4)
        self.layer3 = torch.nn.Linear(filter_size, 4)
        # Short hand for torch.nn.functional.relu
        self.relu = torch.nn.functional.relu

    def forward(self, x):
        x = self.relu(self.layer1(x))
        x = self.relu(self.layer2(x))
        x = self.layer3(x)
        return x


def pose(theta, radius=4.0):
    c, s = np.cos(theta), np.sin(theta)
    return torch.from_numpy(np.array([[c, 0, s, radius * s], [0, 1, 0, 0.3], [-s, 0, c, radius * c],
                                      [0, 0, 0, 1]], dtype=np.float32))


def sphere_field(points):
    """The scene: a sphere of radius 1 whose colour varies with position (the "ground truth" radiance field)."""
    r = points.norm(dim=-1, keepdim=True)
    sigma = 20.0 * torch.relu(1.0 - r)
    rgb_logit = torch.cat([4 * points[..., :1], 4 * points[..., 1:2] - 1, 2 - 4 * points[..., 2:]], -1)
    return torch.cat([rgb_logit, sigma], -1)


def main(argv=None):
    parser = argparse.ArgumentParser()
    parser.add_argument('--size', type=int, default=10)
    parser.add_argument('--num_encoding_functions', type=int, default=6)
    parser.add_argument('--depth_samples_per_ray', type=int, default=16)
    parser.add_argument('--num_iters', type=int, default=12)
    parser.add_argument('--chunksize', type=int, default=512)
    parser.add_argument('--fine', action='store_true', help='also sample_pdf_2 and a fine network')
    parser.add_argument('--quiet', action='store_true')
    args = parser.parse_args(argv)
    log = (lambda *a: None) if args.quiet else print

    height = width = args.size
    focal_length = torch.tensor(1.2 * args.size)
    near_thresh, far_thresh = 2., 6.
    seed = 9458
    torch.manual_seed(seed)
    np.random.seed(seed)

    thetas = np.linspace(0, 2 * np.pi, 9)[:-1]
    poses = torch.stack([pose(t) for t in thetas])
    images = []
    with torch.no_grad():
        for p in poses:
            ro, rd = get_ray_bundle(height, width, focal_length, p)
            pts, depth = compute_query_points_from_rays(ro, rd, near_thresh, far_thresh, 48, randomize=False)
            images.append(render_volume_density(sphere_field(pts), ro, depth)[0])
    images = torch.stack(images)
    testimg, testpose = images[-1], poses[-1]

    encode = lambda x: positional_encoding(x, num_encoding_functions=args.num_encoding_functions)

    def run_one_iter_of_tinynerf(model, height, width, focal_length, tform_cam2world, near_thresh, far_thresh,
                                 depth_samples_per_ray, encoding_function, get_minibatches_function):
        ray_origins, ray_directions = get_ray_bundle(height, width, focal_length, tform_cam2world)
        query_points, depth_values = compute_query_points_from_rays(
            ray_origins, ray_directions, near_thresh, far_thresh, depth_samples_per_ray)
        flattened_query_points = query_points.reshape((-1, 3))
        encoded_points = encoding_function(flattened_query_points)
        batches = get_minibatches_function(encoded_points, chunksize=args.chunksize)
        predictions = []
        for batch in batches:
            predictions.append(model(batch))
        radiance_field_flattened = torch.cat(predictions, dim=0)
        unflattened_shape = list(query_points.shape[:-1]) + [4]
        radiance_field = torch.reshape(radiance_field_flattened, unflattened_shape)
        rgb_predicted, _, _, weights = render_volume_density(radiance_field, ray_origins, depth_values)
        if not args.fine:
            return rgb_predicted, None
        # hierarchical sampling: a fine pass at depths drawn from the coarse weights
        z_vals = depth_values.reshape(-1, depth_samples_per_ray)
        z_vals_mid = .5 * (z_vals[..., 1:] + z_vals[..., :-1])
        z_samples = sample_pdf_2(z_vals_mid, weights.reshape(-1, depth_samples_per_ray)[..., 1:-1],
                                 depth_samples_per_ray, det=False).detach()
        z_vals, _ = torch.sort(torch.cat((z_vals, z_samples), dim=-1), dim=-1)
        z_vals = z_vals.reshape(height, width, -1)
        pts = ray_origins[..., None, :] + ray_directions[..., None, :] * z_vals[..., :, None]
        fine = fine_model(encoding_function(pts.reshape(-1, 3))).reshape(list(pts.shape[:-1]) + [4])
        rgb_fine = render_volume_density(fine, ray_origins, z_vals)[0]
        return rgb_predicted, rgb_fine

    model = VeryTinyNerfModel(filter_size=32, num_encoding_functions=args.num_encoding_functions)
    fine_model = VeryTinyNerfModel(filter_size=32, num_encoding_functions=args.num_encoding_functions)
    initial_state = {k: v.clone() for k, v in model.state_dict().items()}
    initial_state.update({"fine." + k: v.clone() for k, v in fine_model.state_dict().items()})
    params = list(model.parameters()) + (list(fine_model.parameters()) if args.fine else [])
    optimizer = torch.optim.Adam(params, lr=5e-3)

    step_losses, psnrs = [], []
    for i in range(args.num_iters):
        target_img_idx = np.random.randint(images.shape[0] - 1)
        target_img = images[target_img_idx]
        target_tform_cam2world = poses[target_img_idx]
        rgb_predicted, rgb_fine = run_one_iter_of_tinynerf(
            model, height, width, focal_length, target_tform_cam2world, near_thresh, far_thresh,
            args.depth_samples_per_ray, encode, get_minibatches)
        loss = torch.nn.functional.mse_loss(rgb_predicted, target_img)
        if rgb_fine is not None:
            loss = loss + torch.nn.functional.mse_loss(rgb_fine, target_img)
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()
        step_losses.append(loss.item())
        if i % 4 == 0:
            with torch.no_grad():
                rgb_predicted, _ = run_one_iter_of_tinynerf(
                    model, height, width, focal_length, testpose, near_thresh, far_thresh,
                    args.depth_samples_per_ray, encode, get_minibatches)
                loss = torch.nn.functional.mse_loss(rgb_predicted, testimg)
                psnr = -10. * torch.log10(loss)
                psnrs.append(psnr.item())
            log("Iteration", i, "Loss:", loss.item(), "PSNR:", psnr.item())
    return {"initial_state": initial_state, "step_losses": step_losses, "psnrs": psnrs, "images": images,
            "test_render": rgb_predicted}


if __name__ == "__main__":
    main()
