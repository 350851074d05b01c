"""kiln.amp.GradScaler: torch's loss scaler for float16 training, always disabled in kiln.

Loss scaling keeps small float16 gradients from flushing to zero on a GPU. kiln has no GPU and
computes float16/bfloat16 in float32, so the scaler is the pass-through torch's is when disabled:
scale(x) returns x, unscale_/update do nothing, step(opt) calls opt.step(), get_scale() is 1.0 and
state_dict() is {}. Asking for device='cuda' with enabled=True warns and disables, as torch 1.13
does without CUDA. device='cpu' (which torch 2.x enables) is disabled silently here: no warning,
since the training it drives is the same.
"""
import warnings


class GradScaler:
    def __init__(self, device="cuda", init_scale=2.0 ** 16, growth_factor=2.0, backoff_factor=0.5,
                 growth_interval=2000, enabled=True):
        self._device = device
        if enabled and device == "cuda":
            warnings.warn(f"{self._name()} is enabled, but CUDA is not available.  Disabling.")
        self._enabled = False
        # torch keeps these only when enabled; kept here so the getters answer.
        self._init_scale, self._growth_factor, self._backoff_factor = init_scale, growth_factor, backoff_factor
        self._growth_interval = growth_interval

    def _name(self):
        return "kiln.cuda.amp.GradScaler" if self._device == "cuda" else "kiln.amp.GradScaler"

    def is_enabled(self):
        return self._enabled

    def scale(self, outputs):
        """Multiplies outputs (a tensor or an iterable of them) by the scale: unchanged when disabled."""
        return outputs

    def unscale_(self, optimizer):
        """Divides optimizer's gradients by the scale: nothing to undo when disabled."""

    def step(self, optimizer, *args, **kwargs):
        """optimizer.step(*args, **kwargs), which an enabled scaler would skip on inf/NaN gradients."""
        return optimizer.step(*args, **kwargs)

    def update(self, new_scale=None):
        """Adjusts the scale after a step: nothing to adjust when disabled."""

    def get_scale(self):
        return 1.0

    def get_growth_factor(self):
        return self._growth_factor

    def set_growth_factor(self, new_factor):
        self._growth_factor = new_factor

    def get_backoff_factor(self):
        return self._backoff_factor

    def set_backoff_factor(self, new_factor):
        self._backoff_factor = new_factor

    def get_growth_interval(self):
        return self._growth_interval

    def set_growth_interval(self, new_interval):
        self._growth_interval = new_interval

    def state_dict(self):
        """The scale and growth state to checkpoint: {} when disabled, as torch."""
        return {}

    def load_state_dict(self, state_dict):
        """Ignored when disabled, as torch (so checkpoints from a GPU run load)."""
