"""ExponentialFamily: the base class of torch.distributions for densities p(x) = h(x) exp(<t(x), theta> - F(theta)).
A subclass gives _natural_params (theta), _log_normalizer(*theta) (F) and _mean_carrier_measure (E[log h(x)]); the
entropy then follows from F by autograd: H = F(theta) - <theta, grad F(theta)> - E[log h(x)]."""
import kiln

from .distribution import Distribution


class ExponentialFamily(Distribution):
    @property
    def _natural_params(self):
        raise NotImplementedError

    def _log_normalizer(self, *natural_params):
        raise NotImplementedError

    @property
    def _mean_carrier_measure(self):
        raise NotImplementedError

    def entropy(self):
        result = -self._mean_carrier_measure
        thetas = [p.detach().requires_grad_() for p in self._natural_params]
        log_norm = self._log_normalizer(*thetas)
        grads = kiln.autograd.grad(log_norm.sum(), thetas, create_graph=True)
        result = result + log_norm
        for theta, g in zip(thetas, grads):
            result = result - (theta * g).reshape(self._batch_shape + (-1,)).sum(-1)
        return result
