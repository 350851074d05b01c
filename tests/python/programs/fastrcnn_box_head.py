"""torchvision's Fast R-CNN box head trained the way torchvision/references/detection trains it, the
parts that need no compiled ops written out as torchvision has them: box_area / box_iou
(torchvision.ops.boxes), BoxCoder.encode_single/decode_single (weights (10., 10., 5., 5.), torch.log of
the size ratios, torch.clamp(dw, max=math.log(1000. / 16)), torch.stack(...).flatten(1)), Matcher
(match_quality_matrix.max(dim=0), BELOW_LOW_THRESHOLD / BETWEEN_THRESHOLDS, allow_low_quality_matches
via torch.where(match_quality_matrix == highest_quality_foreach_gt[:, None])),
BalancedPositiveNegativeSampler (torch.where(matched_idxs_per_image >= 1)[0], torch.randperm,
zeros_like(dtype=torch.uint8) masks), RoIHeads.add_gt_proposals / select_training_samples, TwoMLPHead
(x.flatten(start_dim=1), F.relu(self.fc6(x))), FastRCNNPredictor, fastrcnn_loss (F.cross_entropy, then
F.smooth_l1_loss(box_regression[sampled_pos_inds_subset, labels_pos], ..., beta=1 / 9,
reduction="sum") / labels.numel()), and the RPN's loss (binary_cross_entropy_with_logits on the
sampled anchors, the same smooth-L1 over sampled_inds.numel()). engine.train_one_epoch: utils.collate_fn
(tuple(zip(*batch))), targets as dicts moved with {k: v.to(device) ...}, losses = sum(loss for loss in
loss_dict.values()), math.isfinite, the warmup LinearLR(start_factor=1/1000) in the first epoch, then
SGD(momentum=0.9, weight_decay=1e-4) with MultiStepLR. No backbone and no RoIAlign: the pooled 7x7
features of a proposal are rendered from where the objects lie in it (synthetic scenes)."""
import argparse
import math
import sys

import torch
import torch.nn.functional as F
from torch import nn, Tensor
from torch.utils.data import DataLoader, Dataset


# ---- torchvision/ops/boxes.py -----------------------------------------------------------------------------------
def box_area(boxes: Tensor) -> Tensor:
    return (boxes[:, 2] - boxes[:, 0]) * (boxes[:, 3] - boxes[:, 1])


def _box_inter_union(boxes1: Tensor, boxes2: Tensor):
    area1 = box_area(boxes1)
    area2 = box_area(boxes2)

    lt = torch.max(boxes1[:, None, :2], boxes2[:, :2])  # [N,M,2]
    rb = torch.min(boxes1[:, None, 2:], boxes2[:, 2:])  # [N,M,2]

    wh = (rb - lt).clamp(min=0)  # [N,M,2]
    inter = wh[:, :, 0] * wh[:, :, 1]  # [N,M]

    union = area1[:, None] + area2 - inter

    return inter, union


def box_iou(boxes1: Tensor, boxes2: Tensor) -> Tensor:
    inter, union = _box_inter_union(boxes1, boxes2)
    iou = inter / union
    return iou


def clip_boxes_to_image(boxes: Tensor, size) -> Tensor:
    dim = boxes.dim()
    boxes_x = boxes[..., 0::2]
    boxes_y = boxes[..., 1::2]
    height, width = size
    boxes_x = boxes_x.clamp(min=0, max=width)
    boxes_y = boxes_y.clamp(min=0, max=height)
    clipped_boxes = torch.stack((boxes_x, boxes_y), dim=dim)
    return clipped_boxes.reshape(boxes.shape)


# ---- torchvision/models/detection/_utils.py -----------------------------------------------------------------------
class BalancedPositiveNegativeSampler:
    """
    This class samples batches, ensuring that they contain a fixed proportion of positives
    """

    def __init__(self, batch_size_per_image: int, positive_fraction: float) -> None:
        self.batch_size_per_image = batch_size_per_image
        self.positive_fraction = positive_fraction

    def __call__(self, matched_idxs):
        pos_idx = []
        neg_idx = []
        for matched_idxs_per_image in matched_idxs:
            positive = torch.where(matched_idxs_per_image >= 1)[0]
            negative = torch.where(matched_idxs_per_image == 0)[0]

            num_pos = int(self.batch_size_per_image * self.positive_fraction)
            # protect against not enough positive examples
            num_pos = min(positive.numel(), num_pos)
            num_neg = self.batch_size_per_image - num_pos
            # protect against not enough negative examples
            num_neg = min(negative.numel(), num_neg)

            # randomly select positive and negative examples
            perm1 = torch.randperm(positive.numel(), device=positive.device)[:num_pos]
            perm2 = torch.randperm(negative.numel(), device=negative.device)[:num_neg]

            pos_idx_per_image = positive[perm1]
            neg_idx_per_image = negative[perm2]

            # create binary mask from indices
            pos_idx_per_image_mask = torch.zeros_like(matched_idxs_per_image, dtype=torch.uint8)
            neg_idx_per_image_mask = torch.zeros_like(matched_idxs_per_image, dtype=torch.uint8)

            pos_idx_per_image_mask[pos_idx_per_image] = 1
            neg_idx_per_image_mask[neg_idx_per_image] = 1

            pos_idx.append(pos_idx_per_image_mask)
            neg_idx.append(neg_idx_per_image_mask)

        return pos_idx, neg_idx


def encode_boxes(reference_boxes: Tensor, proposals: Tensor, weights: Tensor) -> Tensor:
    # perform some unpacking to make it JIT-fusion friendly
    wx = weights[0]
    wy = weights[1]
    ww = weights[2]
    wh = weights[3]

    proposals_x1 = proposals[:, 0].unsqueeze(1)
    proposals_y1 = proposals[:, 1].unsqueeze(1)
    proposals_x2 = proposals[:, 2].unsqueeze(1)
    proposals_y2 = proposals[:, 3].unsqueeze(1)

    reference_boxes_x1 = reference_boxes[:, 0].unsqueeze(1)
    reference_boxes_y1 = reference_boxes[:, 1].unsqueeze(1)
    reference_boxes_x2 = reference_boxes[:, 2].unsqueeze(1)
    reference_boxes_y2 = reference_boxes[:, 3].unsqueeze(1)

    # implementation starts here
    ex_widths = proposals_x2 - proposals_x1
    ex_heights = proposals_y2 - proposals_y1
    ex_ctr_x = proposals_x1 + 0.5 * ex_widths
    ex_ctr_y = proposals_y1 + 0.5 * ex_heights

    gt_widths = reference_boxes_x2 - reference_boxes_x1
    gt_heights = reference_boxes_y2 - reference_boxes_y1
    gt_ctr_x = reference_boxes_x1 + 0.5 * gt_widths
    gt_ctr_y = reference_boxes_y1 + 0.5 * gt_heights

    targets_dx = wx * (gt_ctr_x - ex_ctr_x) / ex_widths
    targets_dy = wy * (gt_ctr_y - ex_ctr_y) / ex_heights
    targets_dw = ww * torch.log(gt_widths / ex_widths)
    targets_dh = wh * torch.log(gt_heights / ex_heights)

    targets = torch.cat((targets_dx, targets_dy, targets_dw, targets_dh), dim=1)
    return targets


class BoxCoder:
    """
    This class encodes and decodes a set of bounding boxes into
    the representation used for training the regressors.
    """

    def __init__(self, weights, bbox_xform_clip: float = math.log(1000.0 / 16)) -> None:
        self.weights = weights
        self.bbox_xform_clip = bbox_xform_clip

    def encode(self, reference_boxes, proposals):
        boxes_per_image = [len(b) for b in reference_boxes]
        reference_boxes = torch.cat(reference_boxes, dim=0)
        proposals = torch.cat(proposals, dim=0)
        targets = self.encode_single(reference_boxes, proposals)
        return targets.split(boxes_per_image, 0)

    def encode_single(self, reference_boxes: Tensor, proposals: Tensor) -> Tensor:
        dtype = reference_boxes.dtype
        device = reference_boxes.device
        weights = torch.as_tensor(self.weights, dtype=dtype, device=device)
        targets = encode_boxes(reference_boxes, proposals, weights)

        return targets

    def decode_single(self, rel_codes: Tensor, boxes: Tensor) -> Tensor:
        boxes = boxes.to(rel_codes.dtype)

        widths = boxes[:, 2] - boxes[:, 0]
        heights = boxes[:, 3] - boxes[:, 1]
        ctr_x = boxes[:, 0] + 0.5 * widths
        ctr_y = boxes[:, 1] + 0.5 * heights

        wx, wy, ww, wh = self.weights
        dx = rel_codes[:, 0::4] / wx
        dy = rel_codes[:, 1::4] / wy
        dw = rel_codes[:, 2::4] / ww
        dh = rel_codes[:, 3::4] / wh

        # Prevent sending too large values into torch.exp()
        dw = torch.clamp(dw, max=self.bbox_xform_clip)
        dh = torch.clamp(dh, max=self.bbox_xform_clip)

        pred_ctr_x = dx * widths[:, None] + ctr_x[:, None]
        pred_ctr_y = dy * heights[:, None] + ctr_y[:, None]
        pred_w = torch.exp(dw) * widths[:, None]
        pred_h = torch.exp(dh) * heights[:, None]

        # Distance from center to box's corner.
        c_to_c_h = torch.tensor(0.5, dtype=pred_ctr_y.dtype, device=pred_h.device) * pred_h
        c_to_c_w = torch.tensor(0.5, dtype=pred_ctr_x.dtype, device=pred_w.device) * pred_w

        pred_boxes1 = pred_ctr_x - c_to_c_w
        pred_boxes2 = pred_ctr_y - c_to_c_h
        pred_boxes3 = pred_ctr_x + c_to_c_w
        pred_boxes4 = pred_ctr_y + c_to_c_h
        pred_boxes = torch.stack((pred_boxes1, pred_boxes2, pred_boxes3, pred_boxes4), dim=2).flatten(1)
        return pred_boxes


class Matcher:
    BELOW_LOW_THRESHOLD = -1
    BETWEEN_THRESHOLDS = -2

    def __init__(self, high_threshold: float, low_threshold: float, allow_low_quality_matches: bool = False) -> None:
        self.BELOW_LOW_THRESHOLD = -1
        self.BETWEEN_THRESHOLDS = -2
        torch._assert(low_threshold <= high_threshold, "low_threshold should be <= high_threshold")
        self.high_threshold = high_threshold
        self.low_threshold = low_threshold
        self.allow_low_quality_matches = allow_low_quality_matches

    def __call__(self, match_quality_matrix: Tensor) -> Tensor:
        if match_quality_matrix.numel() == 0:
            # empty targets or proposals not supported during training
            if match_quality_matrix.shape[0] == 0:
                raise ValueError("No ground-truth boxes available for one of the images during training")
            else:
                raise ValueError("No proposal boxes available for one of the images during training")

        # match_quality_matrix is M (gt) x N (predicted)
        # Max over gt elements (dim 0) to find best gt candidate for each prediction
        matched_vals, matches = match_quality_matrix.max(dim=0)
        if self.allow_low_quality_matches:
            all_matches = matches.clone()
        else:
            all_matches = None  # type: ignore[assignment]

        # Assign candidate matches with low quality to negative (unassigned) values
        below_low_threshold = matched_vals < self.low_threshold
        between_thresholds = (matched_vals >= self.low_threshold) & (matched_vals < self.high_threshold)
        matches[below_low_threshold] = self.BELOW_LOW_THRESHOLD
        matches[between_thresholds] = self.BETWEEN_THRESHOLDS

        if self.allow_low_quality_matches:
            if all_matches is None:
                torch._assert(False, "all_matches should not be None")
            else:
                self.set_low_quality_matches_(matches, all_matches, match_quality_matrix)

        return matches

    def set_low_quality_matches_(self, matches: Tensor, all_matches: Tensor, match_quality_matrix: Tensor) -> None:
        # For each gt, find the prediction with which it has the highest quality
        highest_quality_foreach_gt, _ = match_quality_matrix.max(dim=1)
        # Find the highest quality match available, even if it is low, including ties
        gt_pred_pairs_of_highest_quality = torch.where(match_quality_matrix == highest_quality_foreach_gt[:, None])
        # Example gt_pred_pairs_of_highest_quality:
        # (tensor([0, 1, 1, 2, 2, 3, 3, 4, 5, 5]),
        #  tensor([39796, 32055, 32070, 39190, 40255, 40390, 41455, 45470, 45325, 46390]))
        # Each element in the first tensor is a gt index, and each element in second tensor is a prediction index
        # Note how gt items 1, 2, 3, and 5 each have two ties

        pred_inds_to_update = gt_pred_pairs_of_highest_quality[1]
        matches[pred_inds_to_update] = all_matches[pred_inds_to_update]


# ---- torchvision/models/detection/faster_rcnn.py, roi_heads.py, rpn.py --------------------------------------------
class TwoMLPHead(nn.Module):
    """
    Standard heads for FPN-based models
    """

    def __init__(self, in_channels, representation_size):
        super().__init__()

        self.fc6 = nn.Linear(in_channels, representation_size)
        self.fc7 = nn.Linear(representation_size, representation_size)

    def forward(self, x):
        x = x.flatten(start_dim=1)

        x = F.relu(self.fc6(x))
        x = F.relu(self.fc7(x))

        return x


class FastRCNNPredictor(nn.Module):
    """
    Standard classification + bounding box regression layers
    for Fast R-CNN.
    """

    def __init__(self, in_channels, num_classes):
        super().__init__()
        self.cls_score = nn.Linear(in_channels, num_classes)
        self.bbox_pred = nn.Linear(in_channels, num_classes * 4)

    def forward(self, x):
        if x.dim() == 4:
            torch._assert(
                list(x.shape[2:]) == [1, 1],
                f"x has the wrong shape, expecting the last two dimensions to be [1,1] instead of {list(x.shape[2:])}",
            )
        x = x.flatten(start_dim=1)
        scores = self.cls_score(x)
        bbox_deltas = self.bbox_pred(x)

        return scores, bbox_deltas


def fastrcnn_loss(class_logits, box_regression, labels, regression_targets):
    """
    Computes the loss for Faster R-CNN.
    """

    labels = torch.cat(labels, dim=0)
    regression_targets = torch.cat(regression_targets, dim=0)

    classification_loss = F.cross_entropy(class_logits, labels)

    # get indices that correspond to the regression targets for
    # the corresponding ground truth labels, to be used with
    # advanced indexing
    sampled_pos_inds_subset = torch.where(labels > 0)[0]
    labels_pos = labels[sampled_pos_inds_subset]
    N, num_classes = class_logits.shape
    box_regression = box_regression.reshape(N, box_regression.size(-1) // 4, 4)

    box_loss = F.smooth_l1_loss(
        box_regression[sampled_pos_inds_subset, labels_pos],
        regression_targets[sampled_pos_inds_subset],
        beta=1 / 9,
        reduction="sum",
    )
    box_loss = box_loss / labels.numel()

    return classification_loss, box_loss


def render_roi_features(proposals, scene_boxes, scene_labels, num_classes, resolution=7):
    """The stand-in for box_roi_pool(features, proposals, image_shapes): for each proposal, a
    (num_classes, 7, 7) map of which sampling points fall inside an object of each class."""
    steps = (torch.arange(resolution, dtype=torch.float32) + 0.5) / resolution
    gy, gx = torch.meshgrid(steps, steps, indexing="ij")
    x = proposals[:, 0, None, None] + gx * (proposals[:, 2] - proposals[:, 0])[:, None, None]
    y = proposals[:, 1, None, None] + gy * (proposals[:, 3] - proposals[:, 1])[:, None, None]
    inside = ((x[:, None] >= scene_boxes[None, :, 0, None, None]) & (x[:, None] <= scene_boxes[None, :, 2, None, None])
              & (y[:, None] >= scene_boxes[None, :, 1, None, None]) & (y[:, None] <= scene_boxes[None, :, 3, None, None]))
    onehot = F.one_hot(scene_labels, num_classes).float()  # [M, C]
    return torch.einsum("nmhw,mc->nchw", inside.float(), onehot).clamp(max=1.0)


class RoIHeads(nn.Module):
    def __init__(self, box_head, box_predictor, fg_iou_thresh, bg_iou_thresh, batch_size_per_image,
                 positive_fraction, bbox_reg_weights, num_classes):
        super().__init__()
        self.box_similarity = box_iou
        # assign ground-truth boxes for each proposal
        self.proposal_matcher = Matcher(fg_iou_thresh, bg_iou_thresh, allow_low_quality_matches=False)
        self.fg_bg_sampler = BalancedPositiveNegativeSampler(batch_size_per_image, positive_fraction)
        if bbox_reg_weights is None:
            bbox_reg_weights = (10.0, 10.0, 5.0, 5.0)
        self.box_coder = BoxCoder(bbox_reg_weights)
        self.box_head = box_head
        self.box_predictor = box_predictor
        self.num_classes = num_classes

    def assign_targets_to_proposals(self, proposals, gt_boxes, gt_labels):
        matched_idxs = []
        labels = []
        for proposals_in_image, gt_boxes_in_image, gt_labels_in_image in zip(proposals, gt_boxes, gt_labels):
            match_quality_matrix = box_iou(gt_boxes_in_image, proposals_in_image)
            matched_idxs_in_image = self.proposal_matcher(match_quality_matrix)

            clamped_matched_idxs_in_image = matched_idxs_in_image.clamp(min=0)

            labels_in_image = gt_labels_in_image[clamped_matched_idxs_in_image]
            labels_in_image = labels_in_image.to(dtype=torch.int64)

            # Label background (below the low threshold)
            bg_inds = matched_idxs_in_image == self.proposal_matcher.BELOW_LOW_THRESHOLD
            labels_in_image[bg_inds] = 0

            # Label ignore proposals (between low and high thresholds)
            ignore_inds = matched_idxs_in_image == self.proposal_matcher.BETWEEN_THRESHOLDS
            labels_in_image[ignore_inds] = -1  # -1 is ignored by sampler

            matched_idxs.append(clamped_matched_idxs_in_image)
            labels.append(labels_in_image)
        return matched_idxs, labels

    def subsample(self, labels):
        sampled_pos_inds, sampled_neg_inds = self.fg_bg_sampler(labels)
        sampled_inds = []
        for img_idx, (pos_inds_img, neg_inds_img) in enumerate(zip(sampled_pos_inds, sampled_neg_inds)):
            img_sampled_inds = torch.where(pos_inds_img | neg_inds_img)[0]
            sampled_inds.append(img_sampled_inds)
        return sampled_inds

    def add_gt_proposals(self, proposals, gt_boxes):
        proposals = [torch.cat((proposal, gt_box)) for proposal, gt_box in zip(proposals, gt_boxes)]

        return proposals

    def select_training_samples(self, proposals, targets):
        dtype = proposals[0].dtype
        device = proposals[0].device

        gt_boxes = [t["boxes"].to(dtype) for t in targets]
        gt_labels = [t["labels"] for t in targets]

        # append ground-truth bboxes to propos
        proposals = self.add_gt_proposals(proposals, gt_boxes)

        # get matching gt indices for each proposal
        matched_idxs, labels = self.assign_targets_to_proposals(proposals, gt_boxes, gt_labels)
        # sample a fixed proportion of positive-negative proposals
        sampled_inds = self.subsample(labels)
        matched_gt_boxes = []
        num_images = len(proposals)
        for img_id in range(num_images):
            img_sampled_inds = sampled_inds[img_id]
            proposals[img_id] = proposals[img_id][img_sampled_inds]
            labels[img_id] = labels[img_id][img_sampled_inds]
            matched_idxs[img_id] = matched_idxs[img_id][img_sampled_inds]

            gt_boxes_in_image = gt_boxes[img_id]
            if gt_boxes_in_image.numel() == 0:
                gt_boxes_in_image = torch.zeros((1, 4), dtype=dtype, device=device)
            matched_gt_boxes.append(gt_boxes_in_image[matched_idxs[img_id]])

        regression_targets = self.box_coder.encode(matched_gt_boxes, proposals)
        return proposals, matched_idxs, labels, regression_targets

    def forward(self, proposals, image_shapes, targets=None):
        if self.training:
            proposals, matched_idxs, labels, regression_targets = self.select_training_samples(proposals, targets)
        box_features = torch.cat([render_roi_features(p, t["boxes"], t["labels"], self.num_classes)
                                  for p, t in zip(proposals, targets)])
        box_features = self.box_head(box_features)
        class_logits, box_regression = self.box_predictor(box_features)

        result = []
        losses = {}
        if self.training:
            loss_classifier, loss_box_reg = fastrcnn_loss(class_logits, box_regression, labels, regression_targets)
            losses = {"loss_classifier": loss_classifier, "loss_box_reg": loss_box_reg}
        else:
            boxes_per_image = [len(p) for p in proposals]
            pred_boxes = self.box_coder.decode_single(box_regression, torch.cat(proposals, dim=0))
            pred_boxes = pred_boxes.reshape(sum(boxes_per_image), -1, 4)
            pred_scores = F.softmax(class_logits, -1)
            for boxes, scores, image_shape in zip(pred_boxes.split(boxes_per_image, 0),
                                                  pred_scores.split(boxes_per_image, 0), image_shapes):
                boxes = clip_boxes_to_image(boxes, image_shape)
                result.append({"boxes": boxes, "scores": scores})
        return result, losses


class ToyFasterRCNN(nn.Module):
    """The RPN's objectness/regression loss over fixed anchors and the RoI heads on jittered proposals."""
    def __init__(self, num_classes, anchors, representation_size=64):
        super().__init__()
        self.anchors = anchors
        self.rpn_head = nn.Sequential(nn.Flatten(), nn.Linear(2 * 7 * 7, 64), nn.ReLU(), nn.Linear(64, 5))
        for layer in self.rpn_head:
            if isinstance(layer, nn.Linear):
                torch.nn.init.normal_(layer.weight, std=0.01)
                torch.nn.init.constant_(layer.bias, 0)
        self.rpn_matcher = Matcher(0.7, 0.3, allow_low_quality_matches=True)
        self.rpn_sampler = BalancedPositiveNegativeSampler(64, 0.5)
        self.rpn_box_coder = BoxCoder(weights=(1.0, 1.0, 1.0, 1.0))
        self.roi_heads = RoIHeads(TwoMLPHead(num_classes * 7 * 7, representation_size),
                                  FastRCNNPredictor(representation_size, num_classes),
                                  0.5, 0.5, 128, 0.25, None, num_classes)

    def rpn_loss(self, targets):
        objectness, pred_bbox_deltas, labels, regression_targets = [], [], [], []
        for t in targets:
            feats = render_roi_features(self.anchors, t["boxes"], (t["labels"] > 0).long(), 2)
            out = self.rpn_head(feats)
            objectness.append(out[:, 0])
            pred_bbox_deltas.append(out[:, 1:])
            match_quality_matrix = box_iou(t["boxes"], self.anchors)
            matched_idxs = self.rpn_matcher(match_quality_matrix)
            matched_gt_boxes_per_image = t["boxes"][matched_idxs.clamp(min=0)]
            labels_per_image = matched_idxs >= 0
            labels_per_image = labels_per_image.to(dtype=torch.float32)
            # Background (negative examples)
            bg_indices = matched_idxs == self.rpn_matcher.BELOW_LOW_THRESHOLD
            labels_per_image[bg_indices] = 0.0
            # discard indices that are between thresholds
            inds_to_discard = matched_idxs == self.rpn_matcher.BETWEEN_THRESHOLDS
            labels_per_image[inds_to_discard] = -1.0
            labels.append(labels_per_image)
            regression_targets.append(self.rpn_box_coder.encode_single(matched_gt_boxes_per_image, self.anchors))
        objectness = torch.cat(objectness)
        pred_bbox_deltas = torch.cat(pred_bbox_deltas)
        # RegionProposalNetwork.compute_loss
        sampled_pos_inds, sampled_neg_inds = self.rpn_sampler(labels)
        sampled_pos_inds = torch.where(torch.cat(sampled_pos_inds, dim=0))[0]
        sampled_neg_inds = torch.where(torch.cat(sampled_neg_inds, dim=0))[0]

        sampled_inds = torch.cat([sampled_pos_inds, sampled_neg_inds], dim=0)

        objectness = objectness.flatten()

        labels = torch.cat(labels, dim=0)
        regression_targets = torch.cat(regression_targets, dim=0)

        box_loss = F.smooth_l1_loss(
            pred_bbox_deltas[sampled_pos_inds],
            regression_targets[sampled_pos_inds],
            beta=1 / 9,
            reduction="sum",
        ) / (sampled_inds.numel())

        objectness_loss = F.binary_cross_entropy_with_logits(objectness[sampled_inds], labels[sampled_inds])

        return objectness_loss, box_loss

    def forward(self, images, targets=None):
        image_shapes = [tuple(img.shape[-2:]) for img in images]
        proposals = [t["proposals"] for t in targets]
        detections, detector_losses = self.roi_heads(proposals, image_shapes, targets)
        if self.training:
            loss_objectness, loss_rpn_box_reg = self.rpn_loss(targets)
            losses = {"loss_objectness": loss_objectness, "loss_rpn_box_reg": loss_rpn_box_reg}
            losses.update(detector_losses)
            return losses
        return detections


class SceneDataset(Dataset):
    def __init__(self, n, num_classes, size, n_proposals, seed):
        g = torch.Generator().manual_seed(seed)
        self.items = []
        for _ in range(n):
            n_obj = int(torch.randint(1, 4, (1,), generator=g))
            wh = torch.rand(n_obj, 2, generator=g) * (size * 0.4) + size * 0.15
            xy = torch.rand(n_obj, 2, generator=g) * (size - wh)
            boxes = torch.cat([xy, xy + wh], dim=1)
            labels = torch.randint(1, num_classes, (n_obj,), generator=g)
            # proposals: jittered copies of the objects plus random boxes
            k = n_proposals // (2 * n_obj) + 1
            jitter = boxes.repeat(k, 1) + torch.randn(k * n_obj, 4, generator=g) * wh.repeat(k, 2) * 0.15
            rand_xy = torch.rand(n_proposals // 2, 2, generator=g) * size * 0.7
            rand_wh = torch.rand(n_proposals // 2, 2, generator=g) * size * 0.3 + 4
            proposals = torch.cat([jitter, torch.cat([rand_xy, rand_xy + rand_wh], 1)])
            x1y1 = torch.min(proposals[:, :2], proposals[:, 2:] - 2)
            proposals = clip_boxes_to_image(torch.cat([x1y1, proposals[:, 2:]], 1), (size, size))
            image = torch.zeros(3, size, size)
            self.items.append((image, {"boxes": boxes, "labels": labels, "proposals": proposals,
                                       "image_id": len(self.items)}))

    def __len__(self):
        return len(self.items)

    def __getitem__(self, idx):
        return self.items[idx]


def collate_fn(batch):
    return tuple(zip(*batch))


def train_one_epoch(model, optimizer, data_loader, device, epoch, print_freq, record, log, scaler=None):
    model.train()

    lr_scheduler = None
    if epoch == 0:
        warmup_factor = 1.0 / 1000
        warmup_iters = min(1000, len(data_loader) - 1)

        lr_scheduler = torch.optim.lr_scheduler.LinearLR(
            optimizer, start_factor=warmup_factor, total_iters=warmup_iters
        )

    for i, (images, targets) in enumerate(data_loader):
        images = list(image.to(device) for image in images)
        targets = [{k: v.to(device) if isinstance(v, torch.Tensor) else v for k, v in t.items()} for t in targets]
        with torch.cuda.amp.autocast(enabled=scaler is not None):
            loss_dict = model(images, targets)
            losses = sum(loss for loss in loss_dict.values())

        loss_value = losses.item()

        if not math.isfinite(loss_value):
            print(f"Loss is {loss_value}, stopping training")
            print(loss_dict)
            sys.exit(1)

        optimizer.zero_grad()
        losses.backward()
        optimizer.step()

        if lr_scheduler is not None:
            lr_scheduler.step()

        record['step_losses'].append(loss_value)
        record['loss_dicts'].append({k: v.item() for k, v in loss_dict.items()})
        record['lrs'].append(optimizer.param_groups[0]["lr"])
        if i % print_freq == 0:
            log(f"Epoch: [{epoch}] [{i}/{len(data_loader)}] loss: {loss_value:.4f} lr: {optimizer.param_groups[0]['lr']:.6f}")


@torch.inference_mode()
def evaluate(model, data_loader, device):
    model.eval()
    ious = []
    for images, targets in data_loader:
        images = list(img.to(device) for img in images)
        outputs = model(images, targets)
        for out, t in zip(outputs, targets):
            # the best-scoring proposal for each object, its box for the object's class
            iou_prop = box_iou(t["boxes"], t["proposals"])
            best = iou_prop.argmax(dim=1)
            boxes = out["boxes"][best, t["labels"]]
            ious.append(box_iou(boxes, t["boxes"]).diagonal())
    return torch.cat(ious)


def main(argv=None):
    parser = argparse.ArgumentParser()
    parser.add_argument('--epochs', type=int, default=26)
    parser.add_argument('--lr', type=float, default=0.02)
    parser.add_argument('--batch_size', type=int, default=2)
    parser.add_argument('--n_images', type=int, default=32)
    parser.add_argument('--num_classes', type=int, default=4)
    parser.add_argument('--lr_steps', default=[16, 22], nargs="+", type=int)
    parser.add_argument('--print_freq', type=int, default=20)
    parser.add_argument('--quiet', action='store_true')
    args = parser.parse_args(argv)
    log = (lambda *a: None) if args.quiet else print

    torch.manual_seed(0)
    device = torch.device("cpu")
    size = 64
    dataset = SceneDataset(args.n_images, args.num_classes, size, 48, 1)
    dataset_test = SceneDataset(8, args.num_classes, size, 48, 2)
    train_sampler = torch.utils.data.RandomSampler(dataset)
    train_batch_sampler = torch.utils.data.BatchSampler(train_sampler, args.batch_size, drop_last=True)
    data_loader = DataLoader(dataset, batch_sampler=train_batch_sampler, num_workers=0, collate_fn=collate_fn)
    data_loader_test = DataLoader(dataset_test, batch_size=1, sampler=torch.utils.data.SequentialSampler(dataset_test),
                                  num_workers=0, collate_fn=collate_fn)

    xs = torch.arange(0, size, 8, dtype=torch.float32)
    # AnchorGenerator's grid: cell centers with one square anchor per size
    centers = torch.stack(torch.meshgrid(xs, xs, indexing="xy"), -1).reshape(-1, 2) + 4
    anchors = torch.cat([torch.cat([centers - s / 2, centers + s / 2], dim=1) for s in (16, 32)])
    model = ToyFasterRCNN(args.num_classes, anchors)
    model.to(device)
    initial_state = {k: v.clone() for k, v in model.state_dict().items()}

    params = [p for p in model.parameters() if p.requires_grad]
    optimizer = torch.optim.SGD(params, lr=args.lr, momentum=0.9, weight_decay=1e-4)
    lr_scheduler = torch.optim.lr_scheduler.MultiStepLR(optimizer, milestones=args.lr_steps, gamma=0.1)

    record = {'initial_state': initial_state, 'step_losses': [], 'loss_dicts': [], 'lrs': []}
    record['untrained_iou'] = evaluate(model, data_loader_test, device)
    for epoch in range(args.epochs):
        train_one_epoch(model, optimizer, data_loader, device, epoch, args.print_freq, record, log)
        lr_scheduler.step()
    record['iou'] = evaluate(model, data_loader_test, device)
    log(f"mean IoU {record['untrained_iou'].mean():.3f} -> {record['iou'].mean():.3f}")
    return record


if __name__ == '__main__':
    main()
