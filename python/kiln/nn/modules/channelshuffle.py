"""ChannelShuffle (torch.nn.modules.channelshuffle)."""
from .. import functional as F
from .module import Module


class ChannelShuffle(Module):
    """Splits the channels into `groups` and interleaves them (ShuffleNet)."""

    def __init__(self, groups):
        super().__init__()
        self.groups = groups

    def forward(self, input):
        return F.channel_shuffle(input, self.groups)

    def extra_repr(self):
        return f"groups={self.groups}"
