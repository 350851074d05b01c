"""aladdinpersson/Machine-Learning-Collection's YOLOv1 from scratch (ML/Pytorch/object_detection/YOLO):
model.py (architecture_config of tuples / "M" / lists, CNNBlock with bias-free Conv2d + BatchNorm2d +
LeakyReLU(0.1), _create_conv_layers, _create_fcs with Flatten / Dropout / LeakyReLU, torch.flatten(x,
start_dim=1)), utils.py's intersection_over_union (midpoint boxes, clamp(0), the 1e-6 union), loss.py's
YoloLoss (nn.MSELoss(reduction="sum"), predictions.reshape(-1, S, S, C + B * 5), ious stacked by
torch.cat of unsqueeze(0), torch.max(ious, dim=0), exists_box = target[..., 20].unsqueeze(3),
torch.sign(...) * torch.sqrt(torch.abs(... + 1e-6)), torch.flatten(..., end_dim=-2) / start_dim=1), the
dataset's label_matrix built cell by cell, train.py's loop (Adam with weight_decay, mean_loss), and
cellboxes_to_boxes / non_max_suppression. The config is shrunk (S=4, a 64x64 input) and VOC is
replaced by random rectangles."""
import argparse

import numpy as np
import torch
import torch.nn as nn

architecture_config = [
    (7, 16, 2, 3),
    "M",
    (3, 32, 1, 1),
    "M",
    (1, 16, 1, 0),
    (3, 32, 1, 1),
    [(1, 16, 1, 0), (3, 32, 1, 1), 2],
    (3, 32, 2, 1),
]


class CNNBlock(nn.Module):
    def __init__(self, in_channels, out_channels, **kwargs):
        super(CNNBlock, self).__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, bias=False, **kwargs)
        self.batchnorm = nn.BatchNorm2d(out_channels)
        self.leakyrelu = nn.LeakyReLU(0.1)

    def forward(self, x):
        return self.leakyrelu(self.batchnorm(self.conv(x)))


class Yolov1(nn.Module):
    def __init__(self, in_channels=3, **kwargs):
        super(Yolov1, self).__init__()
        self.architecture = architecture_config
        self.in_channels = in_channels
        self.darknet = self._create_conv_layers(self.architecture)
        self.fcs = self._create_fcs(**kwargs)

    def forward(self, x):
        x = self.darknet(x)
        return self.fcs(torch.flatten(x, start_dim=1))

    def _create_conv_layers(self, architecture):
        layers = []
        in_channels = self.in_channels

        for x in architecture:
            if type(x) == tuple:
                layers += [
                    CNNBlock(
                        in_channels, x[1], kernel_size=x[0], stride=x[2], padding=x[3],
                    )
                ]
                in_channels = x[1]

            elif type(x) == str:
                layers += [nn.MaxPool2d(kernel_size=(2, 2), stride=(2, 2))]

            elif type(x) == list:
                conv1 = x[0]
                conv2 = x[1]
                num_repeats = x[2]

                for _ in range(num_repeats):
                    layers += [
                        CNNBlock(
                            in_channels,
                            conv1[1],
                            kernel_size=conv1[0],
                            stride=conv1[2],
                            padding=conv1[3],
                        )
                    ]
                    layers += [
                        CNNBlock(
                            conv1[1],
                            conv2[1],
                            kernel_size=conv2[0],
                            stride=conv2[2],
                            padding=conv2[3],
                        )
                    ]
                    in_channels = conv2[1]

        return nn.Sequential(*layers)

    def _create_fcs(self, split_size, num_boxes, num_classes):
        S, B, C = split_size, num_boxes, num_classes

        return nn.Sequential(
            nn.Flatten(),
            nn.Linear(32 * S * S, 128),
            nn.Dropout(0.0),
            nn.LeakyReLU(0.1),
            nn.Linear(128, S * S * (C + B * 5)),
        )


def intersection_over_union(boxes_preds, boxes_labels, box_format="midpoint"):
    if box_format == "midpoint":
        box1_x1 = boxes_preds[..., 0:1] - boxes_preds[..., 2:3] / 2
        box1_y1 = boxes_preds[..., 1:2] - boxes_preds[..., 3:4] / 2
        box1_x2 = boxes_preds[..., 0:1] + boxes_preds[..., 2:3] / 2
        box1_y2 = boxes_preds[..., 1:2] + boxes_preds[..., 3:4] / 2
        box2_x1 = boxes_labels[..., 0:1] - boxes_labels[..., 2:3] / 2
        box2_y1 = boxes_labels[..., 1:2] - boxes_labels[..., 3:4] / 2
        box2_x2 = boxes_labels[..., 0:1] + boxes_labels[..., 2:3] / 2
        box2_y2 = boxes_labels[..., 1:2] + boxes_labels[..., 3:4] / 2

    if box_format == "corners":
        box1_x1 = boxes_preds[..., 0:1]
        box1_y1 = boxes_preds[..., 1:2]
        box1_x2 = boxes_preds[..., 2:3]
        box1_y2 = boxes_preds[..., 3:4]  # (N, 1)
        box2_x1 = boxes_labels[..., 0:1]
        box2_y1 = boxes_labels[..., 1:2]
        box2_x2 = boxes_labels[..., 2:3]
        box2_y2 = boxes_labels[..., 3:4]

    x1 = torch.max(box1_x1, box2_x1)
    y1 = torch.max(box1_y1, box2_y1)
    x2 = torch.min(box1_x2, box2_x2)
    y2 = torch.min(box1_y2, box2_y2)

    # .clamp(0) is for the case when they do not intersect
    intersection = (x2 - x1).clamp(0) * (y2 - y1).clamp(0)

    box1_area = abs((box1_x2 - box1_x1) * (box1_y2 - box1_y1))
    box2_area = abs((box2_x2 - box2_x1) * (box2_y2 - box2_y1))

    return intersection / (box1_area + box2_area - intersection + 1e-6)


def non_max_suppression(bboxes, iou_threshold, threshold, box_format="corners"):
    assert type(bboxes) == list

    bboxes = [box for box in bboxes if box[1] > threshold]
    bboxes = sorted(bboxes, key=lambda x: x[1], reverse=True)
    bboxes_after_nms = []

    while bboxes:
        chosen_box = bboxes.pop(0)

        bboxes = [
            box
            for box in bboxes
            if box[0] != chosen_box[0]
            or intersection_over_union(
                torch.tensor(chosen_box[2:]),
                torch.tensor(box[2:]),
                box_format=box_format,
            )
            < iou_threshold
        ]

        bboxes_after_nms.append(chosen_box)

    return bboxes_after_nms


def convert_cellboxes(predictions, S=7, C=20):
    predictions = predictions.to("cpu")
    batch_size = predictions.shape[0]
    predictions = predictions.reshape(batch_size, S, S, C + 10)
    bboxes1 = predictions[..., C + 1:C + 5]
    bboxes2 = predictions[..., C + 6:C + 10]
    scores = torch.cat(
        (predictions[..., C].unsqueeze(0), predictions[..., C + 5].unsqueeze(0)), dim=0
    )
    best_box = scores.argmax(0).unsqueeze(-1)
    best_boxes = bboxes1 * (1 - best_box) + best_box * bboxes2
    cell_indices = torch.arange(S).repeat(batch_size, S, 1).unsqueeze(-1)
    x = 1 / S * (best_boxes[..., :1] + cell_indices)
    y = 1 / S * (best_boxes[..., 1:2] + cell_indices.permute(0, 2, 1, 3))
    w_y = 1 / S * best_boxes[..., 2:4]
    converted_bboxes = torch.cat((x, y, w_y), dim=-1)
    predicted_class = predictions[..., :C].argmax(-1).unsqueeze(-1)
    best_confidence = torch.max(predictions[..., C], predictions[..., C + 5]).unsqueeze(
        -1
    )
    converted_preds = torch.cat(
        (predicted_class, best_confidence, converted_bboxes), dim=-1
    )

    return converted_preds


def cellboxes_to_boxes(out, S=7, C=20):
    converted_pred = convert_cellboxes(out, S, C).reshape(out.shape[0], S * S, -1)
    converted_pred[..., 0] = converted_pred[..., 0].long()
    all_bboxes = []

    for ex_idx in range(out.shape[0]):
        bboxes = []

        for bbox_idx in range(S * S):
            bboxes.append([x.item() for x in converted_pred[ex_idx, bbox_idx, :]])
        all_bboxes.append(bboxes)

    return all_bboxes


class YoloLoss(nn.Module):
    def __init__(self, S=7, B=2, C=20):
        super(YoloLoss, self).__init__()
        self.mse = nn.MSELoss(reduction="sum")

        self.S = S
        self.B = B
        self.C = C

        # These are from Yolo paper, signifying how much we should
        # pay loss for no object (noobj) and the box coordinates (coord)
        self.lambda_noobj = 0.5
        self.lambda_coord = 5

    def forward(self, predictions, target):
        # predictions are shaped (BATCH_SIZE, S*S(C+B*5) when inputted
        predictions = predictions.reshape(-1, self.S, self.S, self.C + self.B * 5)

        # Calculate IoU for the two predicted bounding boxes with target bbox
        C = self.C
        iou_b1 = intersection_over_union(predictions[..., C + 1:C + 5], target[..., C + 1:C + 5])
        iou_b2 = intersection_over_union(predictions[..., C + 6:C + 10], target[..., C + 1:C + 5])
        ious = torch.cat([iou_b1.unsqueeze(0), iou_b2.unsqueeze(0)], dim=0)

        # Take the box with highest IoU out of the two prediction
        # Note that bestbox will be indices of 0, 1 for which bbox was best
        iou_maxes, bestbox = torch.max(ious, dim=0)
        exists_box = target[..., C].unsqueeze(3)  # in paper this is Iobj_i

        # ======================== #
        #   FOR BOX COORDINATES    #
        # ======================== #

        # Set boxes with no object in them to 0. We only take out one of the two
        # predictions, which is the one with highest Iou calculated previously.
        box_predictions = exists_box * (
            (
                bestbox * predictions[..., C + 6:C + 10]
                + (1 - bestbox) * predictions[..., C + 1:C + 5]
            )
        )

        box_targets = exists_box * target[..., C + 1:C + 5]

        # Take sqrt of width, height of boxes to ensure that
        box_predictions[..., 2:4] = torch.sign(box_predictions[..., 2:4]) * torch.sqrt(
            torch.abs(box_predictions[..., 2:4] + 1e-6)
        )
        box_targets[..., 2:4] = torch.sqrt(box_targets[..., 2:4])

        box_loss = self.mse(
            torch.flatten(box_predictions, end_dim=-2),
            torch.flatten(box_targets, end_dim=-2),
        )

        # ==================== #
        #   FOR OBJECT LOSS    #
        # ==================== #

        # pred_box is the confidence score for the bbox with highest IoU
        pred_box = (
            bestbox * predictions[..., C + 5:C + 6] + (1 - bestbox) * predictions[..., C:C + 1]
        )

        object_loss = self.mse(
            torch.flatten(exists_box * pred_box),
            torch.flatten(exists_box * target[..., C:C + 1]),
        )

        # ======================= #
        #   FOR NO OBJECT LOSS    #
        # ======================= #

        no_object_loss = self.mse(
            torch.flatten((1 - exists_box) * predictions[..., C:C + 1], start_dim=1),
            torch.flatten((1 - exists_box) * target[..., C:C + 1], start_dim=1),
        )

        no_object_loss += self.mse(
            torch.flatten((1 - exists_box) * predictions[..., C + 5:C + 6], start_dim=1),
            torch.flatten((1 - exists_box) * target[..., C:C + 1], start_dim=1)
        )

        # ================== #
        #   FOR CLASS LOSS   #
        # ================== #

        class_loss = self.mse(
            torch.flatten(exists_box * predictions[..., :C], end_dim=-2,),
            torch.flatten(exists_box * target[..., :C], end_dim=-2,),
        )

        loss = (
            self.lambda_coord * box_loss  # first two rows in paper
            + object_loss  # third row in paper
            + self.lambda_noobj * no_object_loss  # forth row
            + class_loss  # fifth row
        )

        return loss


class RectDataset(torch.utils.data.Dataset):
    """dataset.py's VOCDataset.__getitem__ (boxes to the S x S x (C + 5B) label matrix) over random rectangles."""

    def __init__(self, n, S=7, B=2, C=20, seed=0):
        self.S, self.B, self.C = S, B, C
        rng = np.random.RandomState(seed)
        self.items = []
        for _ in range(n):
            img = rng.rand(3, 64, 64).astype(np.float32) * 0.2
            boxes = []
            for _ in range(rng.randint(1, 3)):
                c = rng.randint(0, C)
                x, y = rng.uniform(0.2, 0.8, size=2)
                w, h = rng.uniform(0.1, 0.3, size=2)
                img[c % 3, int((y - h / 2) * 64):int((y + h / 2) * 64), int((x - w / 2) * 64):int((x + w / 2) * 64)] = 1
                boxes.append([c, x, y, w, h])
            self.items.append((img, boxes))

    def __len__(self):
        return len(self.items)

    def __getitem__(self, index):
        image, boxes = self.items[index]
        image = torch.tensor(image)
        boxes = torch.tensor(boxes)
        label_matrix = torch.zeros((self.S, self.S, self.C + 5 * self.B))
        for box in boxes:
            class_label, x, y, width, height = box.tolist()
            class_label = int(class_label)
            i, j = int(self.S * y), int(self.S * x)
            x_cell, y_cell = self.S * x - j, self.S * y - i
            width_cell, height_cell = (
                width * self.S,
                height * self.S,
            )
            if label_matrix[i, j, self.C] == 0:
                label_matrix[i, j, self.C] = 1
                box_coordinates = torch.tensor(
                    [x_cell, y_cell, width_cell, height_cell]
                )
                label_matrix[i, j, self.C + 1:self.C + 5] = box_coordinates
                label_matrix[i, j, class_label] = 1
        return image, label_matrix


def train_fn(train_loader, model, optimizer, loss_fn, step_losses):
    mean_loss = []
    for batch_idx, (x, y) in enumerate(train_loader):
        out = model(x)
        loss = loss_fn(out, y)
        mean_loss.append(loss.item())
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        step_losses.append(loss.item())
    return sum(mean_loss) / len(mean_loss)


def main(argv=None):
    p = argparse.ArgumentParser()
    p.add_argument('--epochs', type=int, default=3)
    p.add_argument('--batch_size', type=int, default=8)
    p.add_argument('--n', type=int, default=32)
    p.add_argument('--lr', type=float, default=2e-5)
    p.add_argument('--quiet', action='store_true')
    args = p.parse_args(argv)
    S, B, C = 4, 2, 5

    torch.manual_seed(123)
    model = Yolov1(split_size=S, num_boxes=B, num_classes=C)
    initial_state = {k: v.clone() for k, v in model.state_dict().items()}
    optimizer = torch.optim.Adam(model.parameters(), lr=args.lr, weight_decay=0)
    loss_fn = YoloLoss(S=S, B=B, C=C)
    train_loader = torch.utils.data.DataLoader(RectDataset(args.n, S, B, C), batch_size=args.batch_size, shuffle=True,
                                               drop_last=True)
    step_losses, means = [], []
    for epoch in range(args.epochs):
        model.train()
        means.append(train_fn(train_loader, model, optimizer, loss_fn, step_losses))
    model.eval()
    x, labels = next(iter(train_loader))
    with torch.no_grad():
        out = model(x)
    bboxes = cellboxes_to_boxes(out, S=S, C=C)
    nms = [non_max_suppression(b, iou_threshold=0.5, threshold=0.0, box_format="midpoint") for b in bboxes]
    return {"initial_state": initial_state, "step_losses": step_losses, "means": means, "out": out,
            "n_nms": [len(b) for b in nms]}


if __name__ == '__main__':
    main()
