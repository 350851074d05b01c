// The samplers torch.distributions draws from that are not a plain uniform/normal fill:
// _standard_gamma (Marsaglia and Tsang's squeeze-and-reject method, with Stuart's boost for
// shape < 1), poisson (multiplication of uniforms below rate 10, Hoermann's transformed
// rejection PTRS above), binomial (geometric-waiting-time inversion below mean 10, Hoermann's
// BTRS above), and the reparameterized gradients of Gamma and Dirichlet/Beta samples
// (_standard_gamma_grad, _dirichlet_grad: the approximations of Jankowiak and Obermeyer,
// "Pathwise derivatives beyond the reparameterization trick", 2018).
//
// The samplers draw as torch 1.13's CPU kernels do: one element after another in row-major
// order, uniforms as torch's uniform_real_distribution<double> (one 64-bit draw each) and
// normals as its normal_distribution<double> (Box-Muller, the second value cached in the
// generator), with the same arithmetic in the same types, so that after kiln.manual_seed(s)
// the samples are torch's after torch.manual_seed(s).
#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "generated/kernels/_dirichlet_grad.h"
#include "generated/kernels/_standard_gamma.h"
#include "generated/kernels/_standard_gamma_grad.h"
#include "generated/kernels/binomial.h"
#include "generated/kernels/poisson.h"
#include "runtime/kernels/cpu/random_utils.h"

namespace kiln {
namespace cpu {
namespace {

// ---------------------------------------------------------------------------- gamma samples
// One standard Gamma(shape) sample. S is the element type (shape arithmetic before the loop is
// done in S, as torch's), everything else in double.
template <typename S>
double gamma_draw(S shape, RandomEngine& e) {
  double boost = 1.0f;
  if (shape < 1.0f) {
    if (shape == 0.f) return 0.0;
    // Gamma(a) = Gamma(a + 1) * U^(1/a)
    const double u = uniform_double(e);
    boost *= std::pow(1 - u, 1.0f / shape);
    shape += 1.0f;
  }
  const double d = shape - 1.0f / 3.0f;
  const double c = 1.0f / std::sqrt(9.0f * d);
  while (true) {
    double z, t;
    do {
      z = standard_normal_double(e);
      t = 1.0f + c * z;
    } while (t <= 0);
    const double cube = t * t * t;
    const double u = 1 - uniform_double(e);
    const double z2 = z * z;
    const bool squeeze = u < 1.0f - 0.0331f * z2 * z2;
    if (squeeze || std::log(u) < 0.5f * z2 + d * (1.0f - cube + std::log(cube))) return boost * d * cube;
  }
}

// ---------------------------------------------------------------------------- poisson samples
// double -> int64 as x86's conversion gives it (torch's result for an infinite or NaN rate): the
// "integer indefinite" INT64_MIN where the value does not fit, without C++'s undefined behaviour.
int64_t to_int64_as_x86(double x) {
  constexpr double kTwo63 = 9223372036854775808.0;
  if (!(x >= -kTwo63 && x < kTwo63)) return std::numeric_limits<int64_t>::min();
  return static_cast<int64_t>(x);
}

int64_t poisson_draw(double rate, RandomEngine& e) {
  if (rate >= 10) {
    // PTRS (Hoermann 1993): a transformed-rejection sampler with a squeeze box.
    const double sq = std::sqrt(rate);
    const double lr = std::log(rate);
    const double b = 0.931 + 2.53 * sq;
    const double a = -0.059 + 0.02483 * b;
    const double inv_alpha = 1.1239 + 1.1328 / (b - 3.4);
    const double v_r = 0.9277 - 3.6224 / (b - 2);
    while (true) {
      const double u = uniform_double(e) - 0.5;
      const double v = uniform_double(e);
      const double us = 0.5 - std::fabs(u);
      const int64_t k = to_int64_as_x86(std::floor((2 * a / us + b) * u + rate + 0.43));
      if (us >= 0.07 && v <= v_r) return k;
      if (k < 0 || (us < 0.013 && v > us)) continue;
      if (std::log(v) + std::log(inv_alpha) - std::log(a / (us * us) + b) <=
          -rate + k * lr - std::lgamma(static_cast<double>(k) + 1))
        return k;
    }
  }
  if (rate == 0) return 0;
  // Count uniforms until their product falls to exp(-rate) or below.
  const double limit = std::exp(-rate);
  int64_t k = 0;
  double product = 1.0;
  while (true) {
    product *= uniform_double(e);
    if (!(product > limit)) return k;
    k += 1;
  }
}

// ---------------------------------------------------------------------------- binomial samples
// log(k!) - (Stirling's approximation of it), tabulated below 10.
double stirling_tail(double k) {
  static const double table[10] = {0.0810614667953272,  0.0413406959554092,  0.0276779256849983,
                                   0.02079067210376509, 0.0166446911898211,  0.0138761288230707,
                                   0.0118967099458917,  0.0104112652619720,  0.00925546218271273,
                                   0.00833056343336287};
  if (k < 10) return table[static_cast<size_t>(k)];
  const double k1sq = (k + 1) * (k + 1);
  return (1.0 / 12 - (1.0 / 360 - 1.0 / 1260 / k1sq) / k1sq) / (k + 1);
}

// Successes before the geometric waiting times add past n.
template <typename S>
S binomial_by_waiting_times(S n, S p, RandomEngine& e) {
  const double log_q = std::log1p(-p);
  double waited = 0;
  S successes = 0;
  while (true) {
    waited += std::ceil(std::log(uniform_double(e)) / log_q);
    if (waited > n) return successes;
    successes = successes + 1;
  }
}

// BTRS (Hoermann 1993), p <= 0.5 and n p >= 10.
template <typename S>
S binomial_btrs(S n, S p, RandomEngine& e) {
  const double spq = std::sqrt(n * p * (1 - p));
  const double b = 1.15 + 2.53 * spq;
  const double a = -0.0873 + 0.0248 * b + 0.01 * p;
  const double c = n * p + 0.5;
  const double v_r = 0.92 - 4.2 / b;
  const double r = p / (1 - p);
  const double alpha = (2.83 + 5.1 / b) * spq;
  const double m = std::floor((n + 1) * p);
  while (true) {
    const double u = uniform_double(e) - 0.5;
    double v = uniform_double(e);
    const double us = 0.5 - std::abs(u);
    const S k = static_cast<S>(std::floor((2 * a / us + b) * u + c));
    if (k < 0 || k > n) continue;
    if (us >= 0.07 && v <= v_r) return k;
    v = std::log(v * alpha / (a / (us * us) + b));
    const double bound = (m + 0.5) * std::log((m + 1) / (r * (n - m + 1))) +
                         (n + 1) * std::log((n - m + 1) / (n - k + 1)) +
                         (k + 0.5) * std::log(r * (n - k + 1) / (k + 1)) + stirling_tail(m) +
                         stirling_tail(n - m) - stirling_tail(k) - stirling_tail(n - k);
    if (v <= bound) return k;
  }
}

template <typename S>
S binomial_draw(S n, S p, RandomEngine& e) {
  if (n <= 0.0 || p <= 0.0) return 0;
  if (p >= 1.0) return n;
  if (p <= 0.5) return n * p >= 10.0 ? binomial_btrs<S>(n, p, e) : binomial_by_waiting_times<S>(n, p, e);
  if (p > 0.5) {
    const S q = 1.0 - p;
    return n - (n * q >= 10.0 ? binomial_btrs<S>(n, q, e) : binomial_by_waiting_times<S>(n, q, e));
  }
  return static_cast<S>(NAN);  // p is NaN
}

// ---------------------------------------------------------------------------- digamma
// Cephes' psi: reflection below 0, recurrence up to 10, then the asymptotic series. S is the
// argument's type, A the accumulator's (torch evaluates the Beta gradients' digammas in float
// for float32).
template <typename S, typename A>
S digamma_scalar(S x) {
  if (x == 0) return std::numeric_limits<S>::infinity();
  A reflection = 0;
  const bool integer = x == std::floor(x);
  if (x < 0) {
    if (integer) return std::numeric_limits<S>::infinity();
    reflection = -static_cast<S>(M_PI) / std::tan(static_cast<S>(M_PI) * x);
    x = 1 - x;
  }
  A acc = 0;
  while (x < 10) {
    acc -= 1 / x;
    x += 1;
  }
  if (x == 10) return acc + static_cast<A>(2.25175258906672110764) + reflection;
  static const A coef[] = {8.33333333333333333333E-2, -2.10927960927960927961E-2, 7.57575757575757575758E-3,
                           -4.16666666666666666667E-3, 3.96825396825396825397E-3, -8.33333333333333333333E-3,
                           8.33333333333333333333E-2};
  A tail = 0;
  if (x < 1.0e17f) {
    const A z = 1.0 / (x * x);
    A poly = 0;
    for (A c : coef) poly = poly * z + c;
    tail = z * poly;
  }
  return static_cast<S>(acc + std::log(x) - (0.5f / x) - tail + reflection);
}

// ---------------------------------------------------------------------------- gamma gradient
// d sample / d shape for a standard Gamma(shape) sample x: -(d cdf / d shape) / pdf.
template <typename S>
S gamma_sample_grad(S shape_in, S x_in) {
  const double x = x_in, a = shape_in;
  if (x < 0.8f) {
    // Series for small x.
    double term = 1, den = a;
    double s1 = term / den, s2 = term / (den * den);
    for (int i = 1; i <= 5; ++i) {
      term *= -x / static_cast<double>(i);
      den += 1;
      s1 += term / den;
      s2 += term / (den * den);
    }
    const double xa = std::pow(x, a);
    const double pdf = std::pow(x, a - 1) * std::exp(-x);
    const double cdf = xa * s1;
    const double dcdf = (std::log(x) - digamma_scalar<double, double>(a)) * cdf - xa * s2;
    const double g = -dcdf / pdf;
    return std::isnan(g) ? static_cast<S>(0.f) : static_cast<S>(g);
  }
  if (a > 8.0f) {
    // Rice's saddle-point expansion for large shape.
    if (0.9f * a <= x && x <= 1.1f * a) {
      const double n1 = 1 + 24 * a * (1 + 12 * a);
      const double n2 = 1440 * (a * a) + 6 * x * (53 - 120 * x) - 65 * x * x / a + a * (107 + 3600 * x);
      const double den = 1244160 * (a * a) * (a * a);
      return static_cast<S>(n1 * n2 / den);
    }
    const double den = std::sqrt(8 * a);
    const double t2 = den / (a - x);
    const double t3 = std::pow(x - a - a * std::log(x / a), static_cast<double>(-1.5));
    const double t23 = x < a ? t2 - t3 : t2 + t3;
    const double t1 = std::log(x / a) * t23 - std::sqrt(2 / a) * (a + x) / ((a - x) * (a - x));
    const double stirling = 1 + 1 / (12 * a) * (1 + 1 / (24 * a));
    return static_cast<S>(-stirling * (x * t1) / den);
  }
  // A rational function of log(x / shape) and log(shape) elsewhere.
  const double lu = std::log(x / a);
  const double lv = std::log(a);
  static const double c[3][8] = {
      {0.16009398, -0.094634809, 0.025146376, -0.0030648343, 1, 0.32668115, 0.10406089, 0.0014179084},
      {0.53487893, 0.1298071, 0.065735949, -0.0015649758, 0.16639465, 0.020070113, -0.0035938915,
       -0.00058392623},
      {0.040121004, -0.0065914022, -0.0026286047, -0.0013441777, 0.017050642, -0.0021309326, 0.00085092367,
       -1.5247877e-07},
  };
  double cv[8];
  for (int i = 0; i < 8; ++i) cv[i] = c[0][i] + lu * (c[1][i] + lu * c[2][i]);
  const double num = cv[0] + lv * (cv[1] + lv * (cv[2] + lv * cv[3]));
  const double den = cv[4] + lv * (cv[5] + lv * (cv[6] + lv * cv[7]));
  return static_cast<S>(std::exp(num / den));
}

// ---------------------------------------------------------------------------- beta gradient
// d x / d alpha for x ~ Beta(alpha, beta), x near 0 (series in x), in S arithmetic.
template <typename S>
S beta_grad_alpha_near0(S x, S alpha, S beta) {
  const S f = digamma_scalar<S, double>(alpha) - digamma_scalar<S, double>(alpha + beta) - std::log(x);
  S term = 1;
  S sum = term / alpha * (f + 1 / alpha);
  for (int i = 1; i <= 10; ++i) {
    const S si = static_cast<S>(i);
    term *= (si - beta) * x / si;
    const S den = alpha + si;
    sum += term / den * (f + 1 / den);
  }
  const S g = x * std::pow(1 - x, -beta) * sum;
  return std::isnan(g) ? static_cast<S>(0.f) : g;
}

// d x / d beta for x ~ Beta(alpha, beta), x near 0.
template <typename S>
S beta_grad_beta_near0(S x, S alpha, S beta) {
  const S f = digamma_scalar<S, double>(alpha + beta) - digamma_scalar<S, double>(beta);
  S term = 1, prod = 1, dprod = 0, sum = f / alpha;
  for (int i = 1; i <= 8; ++i) {
    const S si = static_cast<S>(i);
    term *= -x / si;
    dprod = dprod * (beta - si) + prod;
    prod = prod * (beta - si);
    sum += term / (alpha + si) * (dprod + f * prod);
  }
  const S g = -std::pow(1 - x, 1 - beta) * sum;
  return std::isnan(g) ? static_cast<S>(0.f) : g;
}

// d x / d alpha for large alpha and beta (saddle point), in double.
template <typename S>
S beta_grad_alpha_large(double x, double alpha, double beta) {
  const double total = alpha + beta;
  const double mean = alpha / total;
  const double sd = std::sqrt(alpha * beta / (total + 1)) / total;
  if (mean - 0.1 * sd <= x && x <= mean + 0.1 * sd) {
    // Near the mean, where the expansion below is singular.
    const double b2 = beta * beta;
    const double poly =
        47 * x * b2 * b2 +
        alpha * ((43 + 20 * (16 + 27 * beta) * x) * b2 * beta +
                 alpha * (3 * (59 + 180 * beta - 90 * x) * b2 +
                          alpha * ((453 + 1620 * beta * (1 - x) - 455 * x) * beta +
                                   alpha * (8 * (1 - x) * (135 * beta - 11)))));
    const double pre_num = (1 + 12 * alpha) * (1 + 12 * beta) / (total * total);
    const double pre_den = 12960 * alpha * alpha * alpha * beta * beta * (1 + 12 * total);
    return pre_num / (1 - x) * poly / pre_den;
  }
  const double pre = -x / std::sqrt(2 * alpha * beta / total);
  const double stirling = (1 + 1 / (12 * alpha) + 1 / (288 * alpha * alpha)) *
                          (1 + 1 / (12 * beta) + 1 / (288 * beta * beta)) /
                          (1 + 1 / (12 * total) + 1 / (288 * total * total));
  const double t1_num = 2 * (alpha * alpha) * (x - 1) + alpha * beta * (x - 1) - x * (beta * beta);
  const double axbx = alpha * (x - 1) + beta * x;
  const double t1_den = std::sqrt(2 * alpha / beta) * std::pow(total, static_cast<double>(1.5f)) * axbx * axbx;
  const double t1 = t1_num / t1_den;
  const double t2 = 0.5f * std::log(alpha / (total * x));
  const double t3 = std::sqrt(8 * alpha * beta / total) / (beta * x + alpha * (x - 1));
  const double t4_base = beta * std::log(beta / (total * (1 - x))) + alpha * std::log(alpha / (total * x));
  const double t4 = std::pow(t4_base, static_cast<double>(-1.5f));
  const double t = t1 + t2 * (t3 + (x < mean ? t4 : -t4));
  return static_cast<S>(stirling * pre * t);
}

// d x / d alpha_i for x ~ Dirichlet, from its Beta(alpha_i, total - alpha_i) marginal, divided by
// (1 - x) (the form torch's Dirichlet backward takes).
template <typename S>
S dirichlet_sample_grad(S x, S alpha, S total) {
  const double xd = x, ad = alpha, td = total;
  const S beta = total - alpha;
  const double bd = td - ad;
  const S boundary = total * x * (1 - x);
  if (x <= 0.5f && boundary < 2.5f) return beta_grad_alpha_near0<S>(x, alpha, beta);
  if (x >= 0.5f && boundary < 0.75f) return -beta_grad_beta_near0<S>(1 - x, beta, alpha);
  if (alpha > 6 && beta > 6) return beta_grad_alpha_large<S>(xd, ad, bd);
  // A rational correction to an analytic approximation, in log x, log(alpha / x), log total.
  static const double c[2][3][3][4] = {
      {{{1.003668233, -0.01061107488, -0.0657888334, 0.01201642863},
        {0.6336835991, -0.3557432599, 0.05486251648, -0.001465281033},
        {-0.03276231906, 0.004474107445, 0.002429354597, -0.0001557569013}},
       {{0.221950385, -0.3187676331, 0.01799915743, 0.01074823814},
        {-0.2951249643, 0.06219954479, 0.01535556598, 0.001550077057},
        {0.02155310298, 0.004170831599, 0.001292462449, 6.976601077e-05}},
       {{-0.05980841433, 0.008441916499, 0.01085618172, 0.002319392565},
        {0.02911413504, 0.01400243777, -0.002721828457, 0.000751041181},
        {0.005900514878, -0.001936558688, -9.495446725e-06, 5.385558597e-05}}},
      {{{1, -0.02924021934, -0.04438342661, 0.007285809825},
        {0.6357567472, -0.3473456711, 0.05454656494, -0.002407477521},
        {-0.03301322327, 0.004845219414, 0.00231480583, -0.0002307248149}},
       {{0.5925320577, -0.1757678135, 0.01505928619, 0.000564515273},
        {0.1014815858, -0.06589186703, 0.01272886114, -0.0007316646956},
        {-0.007258481865, 0.001096195486, 0.0003934994223, -4.12701925e-05}},
       {{0.06469649321, -0.0236701437, 0.002902096474, -5.896963079e-05},
        {0.001925008108, -0.002869809258, 0.0008000589141, -6.063713228e-05},
        {-0.0003477407336, 6.959756487e-05, 1.097287507e-05, -1.650964693e-06}}},
  };
  const double lu = std::log(xd);
  const double la = std::log(ad) - lu;
  const double lb = std::log(td) - la;
  const double pu[3] = {1, lu, lu * lu};
  const double pa[3] = {1, la, la * la};
  double num = 0.0, den = 0.0;
  for (int i = 0; i < 3; ++i) {
    for (int j = 0; j < 3; ++j) {
      const double w = pu[i] * pa[j];
      const double* cn = c[0][i][j];
      const double* cd = c[1][i][j];
      num += w * (cn[0] + lb * (cn[1] + lb * (cn[2] + lb * cn[3])));
      den += w * (cd[0] + lb * (cd[1] + lb * (cd[2] + lb * cd[3])));
    }
  }
  const double base = xd * (digamma_scalar<S, double>(td) - digamma_scalar<S, double>(ad)) / bd;
  return static_cast<S>(num / den * base);
}

// The inputs of an elementwise op (one shape, one dtype), made contiguous.
std::vector<TensorBase> contiguous_operands(std::vector<TensorBase> ts, const char* op, DimVector* shape) {
  // The inputs broadcast together, as torch's TensorIterator has them, then read row-major.
  shape->assign(ts[0].sizes().begin(), ts[0].sizes().end());
  for (const auto& t : ts) {
    KILN_CHECK(t.dtype() == ts[0].dtype(), op, ": expected all inputs to have the same dtype, got ",
               scalar_type_name(ts[0].dtype()), " and ", scalar_type_name(t.dtype()));
    *shape = broadcast_shapes(*shape, t.sizes(), op);
  }
  for (auto& t : ts) t = contiguous_cpu(broadcast_for_read(t, *shape, op));
  return ts;
}

}  // namespace

TensorBase standard_gamma(const TensorBase& self, Generator* generator) {
  DimVector shape;
  const TensorBase a = contiguous_operands({self}, "_standard_gamma", &shape)[0];
  TensorBase out = empty_cpu(shape, self.dtype());
  const int64_t n = out.numel();
  KILN_DISPATCH_FLOATING_TYPES(self.dtype(), "_standard_gamma", [&] {
    const scalar_t* in = static_cast<const scalar_t*>(a.data_ptr());
    scalar_t* o = static_cast<scalar_t*>(out.data_ptr());
    generator_or_default(generator).draw([&](RandomEngine& e) {
      for (int64_t i = 0; i < n; ++i) {
        const scalar_t v = static_cast<scalar_t>(gamma_draw<scalar_t>(in[i], e));
        o[i] = std::max(std::numeric_limits<scalar_t>::min(), v);
      }
    });
  });
  return out;
}

TensorBase standard_gamma_grad(const TensorBase& self, const TensorBase& output) {
  DimVector shape;
  const auto ops = contiguous_operands({self, output}, "_standard_gamma_grad", &shape);
  TensorBase out = empty_cpu(shape, self.dtype());
  const int64_t n = out.numel();
  KILN_DISPATCH_FLOATING_TYPES(self.dtype(), "_standard_gamma_grad", [&] {
    const scalar_t* a = static_cast<const scalar_t*>(ops[0].data_ptr());
    const scalar_t* x = static_cast<const scalar_t*>(ops[1].data_ptr());
    scalar_t* o = static_cast<scalar_t*>(out.data_ptr());
    for (int64_t i = 0; i < n; ++i) o[i] = gamma_sample_grad<scalar_t>(a[i], x[i]);
  });
  return out;
}

TensorBase dirichlet_grad(const TensorBase& x, const TensorBase& alpha, const TensorBase& total) {
  DimVector shape;
  const auto ops = contiguous_operands({x, alpha, total}, "_dirichlet_grad", &shape);
  TensorBase out = empty_cpu(shape, x.dtype());
  const int64_t n = out.numel();
  KILN_DISPATCH_FLOATING_TYPES(x.dtype(), "_dirichlet_grad", [&] {
    const scalar_t* xs = static_cast<const scalar_t*>(ops[0].data_ptr());
    const scalar_t* as = static_cast<const scalar_t*>(ops[1].data_ptr());
    const scalar_t* ts = static_cast<const scalar_t*>(ops[2].data_ptr());
    scalar_t* o = static_cast<scalar_t*>(out.data_ptr());
    for (int64_t i = 0; i < n; ++i) o[i] = dirichlet_sample_grad<scalar_t>(xs[i], as[i], ts[i]);
  });
  return out;
}

TensorBase poisson(const TensorBase& self, Generator* generator) {
  DimVector shape;
  const TensorBase rates = contiguous_operands({self}, "poisson", &shape)[0];
  TensorBase out = empty_cpu(shape, self.dtype());
  const int64_t n = out.numel();
  KILN_DISPATCH_FLOATING_TYPES_AND_REDUCED(self.dtype(), "poisson", [&] {
    const scalar_t* r = static_cast<const scalar_t*>(rates.data_ptr());
    scalar_t* o = static_cast<scalar_t*>(out.data_ptr());
    for (int64_t i = 0; i < n; ++i)
      KILN_CHECK(static_cast<double>(r[i]) >= 0, "invalid Poisson rate, expected rate to be non-negative");
    generator_or_default(generator).draw([&](RandomEngine& e) {
      for (int64_t i = 0; i < n; ++i)
        o[i] = static_cast<scalar_t>(static_cast<double>(poisson_draw(static_cast<double>(r[i]), e)));
    });
  });
  return out;
}

TensorBase binomial(const TensorBase& count, const TensorBase& prob, Generator* generator) {
  DimVector shape;
  const auto ops = contiguous_operands({count, prob}, "binomial", &shape);
  TensorBase out = empty_cpu(shape, count.dtype());
  const int64_t n = out.numel();
  KILN_DISPATCH_FLOATING_TYPES(count.dtype(), "binomial", [&] {
    const scalar_t* c = static_cast<const scalar_t*>(ops[0].data_ptr());
    const scalar_t* p = static_cast<const scalar_t*>(ops[1].data_ptr());
    scalar_t* o = static_cast<scalar_t*>(out.data_ptr());
    generator_or_default(generator).draw([&](RandomEngine& e) {
      for (int64_t i = 0; i < n; ++i) o[i] = binomial_draw<scalar_t>(c[i], p[i], e);
    });
  });
  return out;
}

}  // namespace cpu
}  // namespace kiln
