"""torch.distributions keeps one module per distribution (torch.distributions.beta, .studentT, ...), and programs
import from them (`from torch.distributions.one_hot_categorical import OneHotCategorical`). kiln groups its
classes in fewer files; these modules give torch's names, each holding the classes torch's module exports."""
import sys
import types

# torch's module name -> the names it exports (modules kiln already has under torch's name are not listed)
TORCH_MODULES = {
    "beta": ["Beta"], "binomial": ["Binomial"], "cauchy": ["Cauchy"], "chi2": ["Chi2"],
    "continuous_bernoulli": ["ContinuousBernoulli"], "dirichlet": ["Dirichlet"], "exponential": ["Exponential"],
    "fishersnedecor": ["FisherSnedecor"], "geometric": ["Geometric"], "gumbel": ["Gumbel"],
    "half_cauchy": ["HalfCauchy"], "half_normal": ["HalfNormal"], "independent": ["Independent"],
    "kumaraswamy": ["Kumaraswamy"], "laplace": ["Laplace"], "lkj_cholesky": ["LKJCholesky"],
    "log_normal": ["LogNormal"], "logistic_normal": ["LogisticNormal"],
    "lowrank_multivariate_normal": ["LowRankMultivariateNormal"], "mixture_same_family": ["MixtureSameFamily"],
    "multinomial": ["Multinomial"], "negative_binomial": ["NegativeBinomial"],
    "one_hot_categorical": ["OneHotCategorical", "OneHotCategoricalStraightThrough"], "pareto": ["Pareto"],
    "poisson": ["Poisson"], "relaxed_bernoulli": ["LogitRelaxedBernoulli", "RelaxedBernoulli"],
    "relaxed_categorical": ["ExpRelaxedCategorical", "RelaxedOneHotCategorical"], "studentT": ["StudentT"],
    "transformed_distribution": ["TransformedDistribution"], "weibull": ["Weibull"],
}


def install(package):
    for name, exported in TORCH_MODULES.items():
        full = package.__name__ + "." + name
        module = types.ModuleType(full, f"torch.distributions.{name}: {', '.join(exported)}")
        for cls in exported:
            setattr(module, cls, getattr(package, cls))
        module.__all__ = list(exported)
        sys.modules[full] = module
        setattr(package, name, module)
