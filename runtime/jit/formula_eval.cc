#include "runtime/jit/formula_eval.h"

#include <type_traits>

#include "runtime/core/convert.h"
#include "runtime/core/error.h"
#include "runtime/jit/formula_interpreter.h"
#include "runtime/kernels/cpu/parallel_loop.h"

namespace kiln {
namespace jit {
namespace {

IteratorConfig config_of(const PointwiseFormula& f, const std::vector<TensorBase>& in) {
  if (f.returns_bool && f.nargs == 1) return IteratorConfig::predicate(f.op, in[0], TensorBase());
  if (f.returns_bool) return IteratorConfig::comparison(f.op, in[0], in[1], TensorBase());
  if (f.nargs == 1)
    return f.int_to_float ? IteratorConfig::unary_float(f.op, in[0], TensorBase())
                          : IteratorConfig::unary(f.op, in[0], TensorBase());
  if (f.nargs == 3) {
    // All three promoted together: a bool condition (where's) never changes the result dtype,
    // and is read as 1 or 0 in it.
    IteratorConfig c = IteratorConfig::ternary_float(f.op, in[0], in[1], in[2], TensorBase());
    c.int_to_float = f.int_to_float;
    return c;
  }
  return f.int_to_float ? IteratorConfig::binary_float(f.op, in[0], in[1], TensorBase())
                        : IteratorConfig::binary(f.op, in[0], in[1], TensorBase());
}

template <typename T>
void run(const PointwiseFormula& f, const TensorIterator& it, const std::vector<Scalar>& scalar_args) {
  T scalars[4] = {};
  for (int k = 0; k < f.nscalars; ++k) scalars[k] = scalar_args[k].to<T>();
  cpu::for_each(it, [&f, &scalars](char** data, const int64_t* strides, int64_t n) {
    T args[5];
    for (int64_t i = 0; i < n; ++i) {
      for (int k = 0; k < f.nargs; ++k) args[k] = *reinterpret_cast<const T*>(data[k + 1] + i * strides[k + 1]);
      const T r = evaluate(f, args, scalars);
      if (f.returns_bool) {
        *reinterpret_cast<bool*>(data[0] + i * strides[0]) = r != T(0);
      } else {
        *reinterpret_cast<T*>(data[0] + i * strides[0]) = r;
      }
    }
  });
}

// A cast formula: its argument evaluated in the input's dtype From (float16 and bfloat16 widened
// exactly to float32, as they compute), converted to To.
template <typename From, typename To>
void run_cast(const PointwiseFormula& f, const TensorIterator& it) {
  using Compute = std::conditional_t<is_reduced_float_v<From>, float, From>;
  cpu::for_each(it, [&f](char** data, const int64_t* strides, int64_t n) {
    for (int64_t i = 0; i < n; ++i) {
      const Compute x = static_cast<Compute>(*reinterpret_cast<const From*>(data[1] + i * strides[1]));
      *reinterpret_cast<To*>(data[0] + i * strides[0]) = convert<To>(evaluate<Compute>(f, &x, nullptr));
    }
  });
}

TensorBase evaluate_cast(const PointwiseFormula& f, const TensorBase& input, std::optional<ScalarType> dtype) {
  IteratorConfig c = IteratorConfig::unary(f.op, input, TensorBase());
  c.promote_inputs = false;
  c.out_same_dtype = false;
  c.compute_dtype = input.dtype();
  c.out_dtype = dtype.value_or(input.dtype());
  c.reduced_float_as_float32 = false;
  TensorIterator it(std::move(c));
  KILN_DISPATCH_ALL_TYPES_AND_REDUCED(it.loop_dtype(0), f.op, [&] {
    using To = scalar_t;
    KILN_DISPATCH_ALL_TYPES_AND_REDUCED(it.compute_dtype(), f.op, [&] {
      run_cast<scalar_t, To>(f, it);
    });
  });
  return it.output();
}

void check_arity(const PointwiseFormula& f, const std::vector<TensorBase>& inputs, const std::vector<Scalar>& scalars) {
  KILN_CHECK(static_cast<int>(inputs.size()) == f.nargs, f.op, "(): the formula takes ", f.nargs,
             " tensors, got ", inputs.size());
  KILN_CHECK(static_cast<int>(scalars.size()) == f.nscalars, f.op, "(): the formula takes ", f.nscalars,
             " Scalars, got ", scalars.size());
  KILN_CHECK(f.nargs <= 5 && f.nscalars <= 4, f.op, "(): formulas of up to five tensors and four Scalars");
  KILN_CHECK(f.nnodes >= 1 && f.nnodes <= kMaxFormulaNodes, f.op, "(): formulas of 1 to ", kMaxFormulaNodes, " nodes");
}

}  // namespace

TensorBase evaluate_derivative(const PointwiseFormula& d, const std::vector<TensorBase>& inputs,
                               const std::vector<Scalar>& scalars) {
  check_arity(d, inputs, scalars);
  IteratorConfig c;
  c.op_name = d.op;
  c.inputs = inputs;
  c.promote_inputs = false;
  c.compute_dtype = inputs[0].dtype();  // grad's
  TensorIterator it(std::move(c));
  KILN_DISPATCH_FLOATING_TYPES(it.compute_dtype(), d.op, [&] { run<scalar_t>(d, it, scalars); });
  return it.output();
}

TensorBase evaluate_formula(const PointwiseFormula& f, const std::vector<TensorBase>& inputs,
                            const std::vector<Scalar>& scalars, std::optional<ScalarType> dtype) {
  check_arity(f, inputs, scalars);
  KILN_CHECK(f.cast_to || !dtype, f.op, "(): only a cast formula takes a dtype");
  if (f.cast_to) return evaluate_cast(f, inputs[0], dtype);
  KILN_CHECK(f.nargs <= 3, f.op, "(): formulas of up to three tensors");
  IteratorConfig config = config_of(f, inputs);
  if (f.scalars_promote) {
    std::vector<TensorBase> operands = inputs;
    for (const Scalar& s : scalars) operands.push_back(wrap_scalar(s));
    config.compute_dtype = result_type(operands);
    if (f.int_to_float && !is_floating_type(config.compute_dtype)) config.compute_dtype = default_dtype();
  }
  TensorIterator it(std::move(config));
  const ScalarType dt = it.compute_dtype();
  switch (f.dtypes) {
    case FormulaDtypes::floating: KILN_DISPATCH_FLOATING_TYPES(dt, f.op, [&] { run<scalar_t>(f, it, scalars); }); break;
    case FormulaDtypes::numeric: KILN_DISPATCH_NUMERIC_TYPES(dt, f.op, [&] { run<scalar_t>(f, it, scalars); }); break;
    case FormulaDtypes::all: KILN_DISPATCH_ALL_TYPES(dt, f.op, [&] { run<scalar_t>(f, it, scalars); }); break;
    case FormulaDtypes::integral:
      KILN_DISPATCH_INTEGRAL_TYPES(dt, f.op, [&] { run<scalar_t>(f, it, scalars); });
      break;
  }
  return it.output();
}

}  // namespace jit
}  // namespace kiln
