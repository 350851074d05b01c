#include "runtime/python/arg_parser.h"

#include <cstring>
#include <set>
#include <sstream>

#include "runtime/dispatch/dispatcher.h"
#include "runtime/kernels/type_promotion.h"
#include "runtime/python/dtype_object.h"
#include "runtime/python/generator_object.h"
#include "runtime/python/numpy_interop.h"
#include "runtime/python/tensor_object.h"

namespace kiln {
namespace python {
namespace {

[[noreturn]] void throw_python() { throw PythonError(); }

std::string trim(const std::string& s) {
  size_t b = s.find_first_not_of(' '), e = s.find_last_not_of(' ');
  return b == std::string::npos ? "" : s.substr(b, e - b + 1);
}

Param parse_param(const std::string& text, bool kwarg_only) {
  Param p;
  p.kwarg_only = kwarg_only;
  std::string decl = text;
  auto eq = text.find('=');
  if (eq != std::string::npos) {
    decl = trim(text.substr(0, eq));
    p.has_default = true;
    p.default_text = trim(text.substr(eq + 1));
    p.default_none = p.default_text == "None";
  }
  auto space = decl.rfind(' ');
  std::string type = decl.substr(0, space);
  p.name = decl.substr(space + 1);
  if (!type.empty() && type.back() == '?') {
    p.optional = true;
    type.pop_back();
  }
  if (type == "Tensor") p.type = ParamType::Tensor;
  else if (type == "Tensor[]") p.type = ParamType::TensorList;
  else if (type == "Tensor?[]") {
    p.type = ParamType::TensorList;
    p.elem_optional = true;
  }
  else if (type == "Scalar") p.type = ParamType::Scalar;
  else if (type == "int") p.type = ParamType::Int;
  else if (type.rfind("int[", 0) == 0) {
    p.type = ParamType::IntList;
    std::string n = type.substr(4, type.size() - 5);
    p.list_size = n.empty() ? 0 : std::stoi(n);
  } else if (type == "float") p.type = ParamType::Float;
  else if (type == "bool") p.type = ParamType::Bool;
  else if (type == "str") p.type = ParamType::String;
  else if (type == "ScalarType") p.type = ParamType::ScalarType;
  else if (type == "Device") p.type = ParamType::Device;
  else if (type == "Generator") p.type = ParamType::Generator;
  else throw Error("arg parser: unknown type " + type);
  static const char* shown[] = {"Tensor", "tuple of Tensors", "Number", "int", "tuple of ints", "float", "bool",
                                "str", "dtype", "Device", "Generator"};
  p.type_name = shown[static_cast<int>(p.type)];
  p.py_name = PyUnicode_InternFromString(p.name.c_str());
  return p;
}

Signature parse_signature(const std::string& text, bool is_method) {
  Signature sig;
  auto open = text.find('(');
  sig.name = text.substr(0, open);
  std::string body = text.substr(open + 1, text.rfind(')') - open - 1);
  bool kwarg_only = false;
  std::stringstream shown;
  shown << "(";
  int depth = 0;
  std::string cur;
  std::vector<std::string> pieces;
  for (char c : body) {
    if (c == '[' || c == '(') ++depth;
    if (c == ']' || c == ')') --depth;
    if (c == ',' && depth == 0) {
      pieces.push_back(trim(cur));
      cur.clear();
    } else {
      cur += c;
    }
  }
  if (!trim(cur).empty()) pieces.push_back(trim(cur));
  bool first = true;
  for (const std::string& piece : pieces) {
    shown << (first ? "" : ", ");
    first = false;
    if (piece == "*") {
      kwarg_only = true;
      shown << "*";
      continue;
    }
    Param p = parse_param(piece, kwarg_only);
    shown << p.type_name << (p.optional && p.type != ParamType::Tensor ? "?" : "") << " " << p.name;
    if (!kwarg_only) ++sig.num_positional;
    sig.params.push_back(std::move(p));
  }
  shown << ")";
  KILN_CHECK(sig.params.size() <= 16, "arg parser: ", sig.name, " has more than 16 parameters");
  sig.text = shown.str();
  (void)is_method;
  return sig;
}

// An int beyond int64 is no element of an int list to torch's parser (zeros(2**63), view(2**63):
// TypeError "must be tuple of ints"), where a lone int parameter overflows (RuntimeError).
bool fits_int64(PyObject* obj) {
  if (!PyLong_Check(obj)) return true;
  int overflow = 0;
  PyLong_AsLongLongAndOverflow(obj, &overflow);
  return overflow == 0;
}

bool is_sequence_of_ints(PyObject* obj) {
  if (!PyTuple_Check(obj) && !PyList_Check(obj)) return false;
  Py_ssize_t n = PySequence_Fast_GET_SIZE(obj);
  PyObject** items = PySequence_Fast_ITEMS(obj);
  for (Py_ssize_t i = 0; i < n; ++i)
    if (!is_int_like(items[i]) || !fits_int64(items[i])) return false;
  return true;
}

// A Python number may stand for a Tensor parameter only where torch takes one: its arg parser's
// allowlist (add, mul, div, ...) plus the ops torch gives Scalar overloads (eq.Scalar,
// remainder.Scalar_Tensor, where.ScalarOther, ...). Elsewhere (maximum(t, 2), clamp(min=t, max=2.0))
// torch raises TypeError, and so does kiln.
bool allows_numbers_as_tensors(std::string op) {
  static const std::set<std::string> allowed = {
      "add", "sub", "subtract", "rsub", "mul", "multiply", "div", "divide", "true_divide", "floor_divide",
      "to", "_to_copy", "copy", "eq", "ne", "lt", "le", "gt", "ge", "greater", "greater_equal", "less",
      "less_equal", "not_equal", "remainder", "fmod", "bitwise_and", "bitwise_or", "bitwise_xor",
      "bitwise_left_shift", "bitwise_right_shift", "__and__", "__or__", "__xor__", "__lshift__", "__rshift__",
      "__iand__", "__ior__", "__ixor__", "__ilshift__", "__irshift__", "pow", "float_power", "xlogy",
      "copysign", "where"};
  if (op.size() > 1 && op.back() == '_' && op.compare(0, 2, "__") != 0) op.pop_back();  // in-place twin
  return allowed.count(op) != 0;
}

// Of those, the ops whose number comes only from a Scalar overload of a later parameter (eq.Scalar,
// fmod.Scalar, copysign.Scalar, where.ScalarSelf): their first parameter (self, where's condition)
// stays a Tensor, so torch.eq(2, t) and torch.where(True, a, b) raise TypeError as in torch.
// (add, mul, div, ... are in torch's own allowlist: a number may stand for any of their Tensors.)
bool first_param_stays_tensor(std::string op, const std::string& param) {
  static const std::set<std::string> ops = {
      "eq", "ne", "lt", "le", "gt", "ge", "greater", "greater_equal", "less", "less_equal", "not_equal",
      "fmod", "copysign"};
  if (op.size() > 1 && op.back() == '_' && op.compare(0, 2, "__") != 0) op.pop_back();
  if (op == "where") return param == "condition";
  return (param == "input" || param == "self") && ops.count(op) != 0;
}

// torch's parser takes None for a sized int list whose default is [] (amax(x, None), roll(x, 1, None),
// max_pool2d(x, 2, None)): the default.
bool none_is_default_list(const Param& p) {
  return p.type == ParamType::IntList && p.list_size > 0 && p.has_default && p.default_text == "[]";
}

// `lenient`: the last pass, where 0-dim tensors may stand for Scalars and ints, and Python numbers
// for Tensors where the op allows it (`numbers_as_tensors`).
bool matches(const Param& p, PyObject* obj, bool lenient, bool numbers_as_tensors) {
  if (obj == Py_None) return p.optional || p.default_none || none_is_default_list(p);
  switch (p.type) {
    // Not an ndarray, as torch's parser (torch.add(t, array) is a TypeError); t + array is NumPy's
    // (Tensor's operators give NotImplemented for one: python/kiln/_tensor.py).
    case ParamType::Tensor:
      return is_tensor(obj) || (lenient && numbers_as_tensors && is_scalar_like(obj));
    case ParamType::TensorList: {
      if (!PyTuple_Check(obj) && !PyList_Check(obj)) return false;
      Py_ssize_t n = PySequence_Fast_GET_SIZE(obj);
      for (Py_ssize_t i = 0; i < n; ++i) {
        PyObject* item = PySequence_Fast_ITEMS(obj)[i];
        if (!is_tensor(item) && !(p.elem_optional && item == Py_None)) return false;
      }
      return true;
    }
    case ParamType::Scalar:  // the lenient pass also takes 0-dim tensors (x.fill_(t), arange(t)), as torch
      return is_scalar_like(obj) || (lenient && is_tensor(obj) && unpack_tensor(obj).dim() == 0);
    // A 0-dim int tensor is an int only in the lenient pass: max(x, t) is maximum, not max(dim).
    case ParamType::Int: return is_int_like(obj) && (lenient || !is_tensor(obj));
    case ParamType::IntList: return is_sequence_of_ints(obj) || (p.list_size > 0 && is_int_like(obj));
    case ParamType::Float: return PyFloat_Check(obj) || PyBool_Check(obj) || is_int_like(obj);  // torch: a bool is a float too
    case ParamType::Bool: return PyBool_Check(obj);
    case ParamType::String: return PyUnicode_Check(obj);
    case ParamType::ScalarType: return as_scalar_type(obj).has_value();
    case ParamType::Device: return is_device_like(obj);
    case ParamType::Generator: return is_generator(obj);
  }
  return false;
}

int64_t to_int64(PyObject* obj) {
  int64_t v;
  if (is_tensor(obj)) {
    v = unpack_tensor(obj).item().to_long();
  } else {
    v = PyLong_AsLongLong(obj);
    if (v == -1 && PyErr_Occurred()) {
      PyErr_Clear();
      PyObject* idx = PyNumber_Index(obj);
      if (!idx) throw_python();
      v = PyLong_AsLongLong(idx);
      Py_DECREF(idx);
      if (v == -1 && PyErr_Occurred()) {
        PyErr_Clear();
        throw Error("Overflow when unpacking long");  // as torch (RuntimeError)
      }
    }
  }
  return v;
}

}  // namespace

bool is_int_like(PyObject* obj) {
  if (PyBool_Check(obj)) return false;
  if (PyLong_Check(obj)) return true;
  if (is_tensor(obj)) {
    const Tensor& t = unpack_tensor(obj);
    return t.dim() == 0 && is_integral_type(t.dtype(), false);
  }
  // NumPy integers and other objects with __index__.
  return !PyFloat_Check(obj) && Py_TYPE(obj)->tp_as_number && Py_TYPE(obj)->tp_as_number->nb_index;
}

bool is_ndarray(PyObject* obj) { return std::strcmp(Py_TYPE(obj)->tp_name, "numpy.ndarray") == 0; }

bool is_scalar_like(PyObject* obj) {
  if (PyLong_Check(obj) || PyFloat_Check(obj) || PyBool_Check(obj)) return true;
  if (is_tensor(obj) || PyUnicode_Check(obj) || PySequence_Check(obj)) return false;
  // A complex number (Python's, or NumPy's complex64 whose __float__ drops the imaginary part) is no
  // Scalar kiln can hold: the parser's TypeError rather than a silently real result.
  if (PyComplex_Check(obj) || std::strncmp(Py_TYPE(obj)->tp_name, "numpy.complex", 13) == 0 ||
      std::strcmp(Py_TYPE(obj)->tp_name, "numpy.clongdouble") == 0)
    return false;
  PyNumberMethods* nm = Py_TYPE(obj)->tp_as_number;
  return nm && (nm->nb_index || nm->nb_float);
}

Scalar to_scalar(PyObject* obj) {
  if (PyBool_Check(obj)) return Scalar(obj == Py_True);
  if (PyLong_Check(obj)) {
    int overflow = 0;
    long long v = PyLong_AsLongLongAndOverflow(obj, &overflow);
    KILN_CHECK(overflow == 0, "Overflow when unpacking long");  // as torch: ints beyond int64 are refused
    return Scalar(static_cast<int64_t>(v));
  }
  if (PyFloat_Check(obj)) return Scalar(PyFloat_AS_DOUBLE(obj));
  if (is_tensor(obj)) return unpack_tensor(obj).item();
  // A NumPy bool is a bool, as torch 2.x's is_numpy_bool (1.13 read it as a double: bool + np.True_
  // was float32); its deprecated __index__ would make it an int.
  const char* tp = Py_TYPE(obj)->tp_name;
  if (std::strcmp(tp, "numpy.bool_") == 0 || std::strcmp(tp, "numpy.bool") == 0) {
    const int truth = PyObject_IsTrue(obj);
    if (truth < 0) throw_python();
    return Scalar(truth == 1);
  }
  PyNumberMethods* nm = Py_TYPE(obj)->tp_as_number;
  if (nm && nm->nb_index) {
    PyObject* idx = PyNumber_Index(obj);
    if (idx) {
      Scalar s = to_scalar(idx);
      Py_DECREF(idx);
      return s;
    }
    PyErr_Clear();
  }
  double d = PyFloat_AsDouble(obj);
  if (d == -1.0 && PyErr_Occurred()) throw_python();
  return Scalar(d);
}

std::optional<ScalarType> as_scalar_type(PyObject* obj) {
  if (is_dtype(obj)) return dtype_value(obj);
  if (obj == reinterpret_cast<PyObject*>(&PyFloat_Type)) return ScalarType::Float64;
  if (obj == reinterpret_cast<PyObject*>(&PyLong_Type)) return ScalarType::Int64;
  if (obj == reinterpret_cast<PyObject*>(&PyBool_Type)) return ScalarType::Bool;
  return std::nullopt;
}

// A device argument: a string, a kiln.device, or an int (a CUDA ordinal, as torch's device=0).
bool is_device_like(PyObject* obj) {
  return PyUnicode_Check(obj) || (PyLong_Check(obj) && !PyBool_Check(obj)) ||
         PyObject_HasAttrString(obj, "_kiln_device");
}

Device to_device(PyObject* obj) {
  if (PyUnicode_Check(obj)) return Device(std::string(PyUnicode_AsUTF8(obj)));
  if (PyLong_Check(obj)) {
    const long long ordinal = PyLong_AsLongLong(obj);
    if (ordinal == -1 && PyErr_Occurred()) throw_python();
    KILN_CHECK(ordinal >= 0, "Device index must not be negative");
    KILN_CHECK(ordinal <= 127, "Device index ", ordinal, " is out of range (device indices go up to 127)");
    return Device(DeviceType::CUDA, static_cast<int8_t>(ordinal));
  }
  PyObject* s = PyObject_Str(obj);
  if (!s) throw_python();
  Device d(std::string(PyUnicode_AsUTF8(s)));
  Py_DECREF(s);
  return d;
}

// ---- ParsedArgs getters (a missing optional argument reads as its default) ----

Tensor ParsedArgs::tensor(int i) const {
  if (is_none(i)) return Tensor();
  if (is_ndarray(values[i])) return tensor_from_numpy(values[i]);  // t + np.array(...), as torch
  if (!is_tensor(values[i])) return Tensor(wrap_scalar(to_scalar(values[i])));  // a number for a Tensor
  return unpack_tensor(values[i]);
}

std::vector<Tensor> ParsedArgs::tensorlist(int i) const {
  std::vector<Tensor> out;
  if (is_none(i)) return out;
  PyObject* seq = values[i];
  Py_ssize_t n = PySequence_Fast_GET_SIZE(seq);
  for (Py_ssize_t k = 0; k < n; ++k) {
    PyObject* item = PySequence_Fast_ITEMS(seq)[k];
    out.push_back(item == Py_None ? Tensor() : unpack_tensor(item));  // None: Tensor?[] only (checked)
  }
  return out;
}

namespace {
Scalar parse_default_scalar(const std::string& text) {
  if (text == "True") return Scalar(true);
  if (text == "False") return Scalar(false);
  if (text.find_first_of(".eE") != std::string::npos || text == "inf" || text == "-inf" || text == "nan")
    return Scalar(std::stod(text));
  return Scalar(static_cast<int64_t>(std::stoll(text)));
}
std::vector<int64_t> parse_default_list(const std::string& text, int list_size) {
  std::vector<int64_t> out;
  if (text.empty()) return out;
  if (text[0] != '[') return std::vector<int64_t>(std::max(list_size, 1), std::stoll(text));
  std::string inner = text.substr(1, text.size() - 2);
  std::stringstream ss(inner);
  std::string item;
  while (std::getline(ss, item, ','))
    if (!trim(item).empty()) out.push_back(std::stoll(trim(item)));
  return out;
}
}  // namespace

Scalar ParsedArgs::scalar(int i) const {
  if (values[i] == nullptr) return parse_default_scalar(param(i).default_text);
  return to_scalar(values[i]);
}
std::optional<Scalar> ParsedArgs::optional_scalar(int i) const {
  if (is_none(i)) return std::nullopt;
  return scalar(i);
}

int64_t ParsedArgs::int64(int i) const {
  if (values[i] == nullptr) return std::stoll(param(i).default_text);
  return to_int64(values[i]);
}
std::optional<int64_t> ParsedArgs::optional_int64(int i) const {
  if (is_none(i)) return std::nullopt;
  return int64(i);
}

std::vector<int64_t> ParsedArgs::intlist(int i) const {
  const Param& p = param(i);
  if (values[i] == nullptr || (values[i] == Py_None && !p.optional && none_is_default_list(p)))
    return parse_default_list(p.default_text, p.list_size);
  PyObject* obj = values[i];
  if (is_int_like(obj)) return std::vector<int64_t>(std::max(p.list_size, 1), to_int64(obj));
  std::vector<int64_t> out;
  Py_ssize_t n = PySequence_Fast_GET_SIZE(obj);
  out.reserve(n);
  for (Py_ssize_t k = 0; k < n; ++k) out.push_back(to_int64(PySequence_Fast_ITEMS(obj)[k]));
  return out;
}
std::optional<std::vector<int64_t>> ParsedArgs::optional_intlist(int i) const {
  if (is_none(i)) return std::nullopt;
  return intlist(i);
}

double ParsedArgs::to_double(int i) const {
  if (values[i] == nullptr) return std::stod(param(i).default_text);
  double d = PyFloat_AsDouble(values[i]);
  if (d == -1.0 && PyErr_Occurred()) throw_python();
  return d;
}
std::optional<double> ParsedArgs::optional_to_double(int i) const {
  if (is_none(i)) return std::nullopt;
  return to_double(i);
}

bool ParsedArgs::to_bool(int i) const {
  if (values[i] == nullptr) return param(i).default_text == "True";
  return values[i] == Py_True;
}
std::optional<bool> ParsedArgs::optional_to_bool(int i) const {
  if (is_none(i)) return std::nullopt;
  return to_bool(i);
}

std::string ParsedArgs::string(int i) const {
  if (values[i] == nullptr) {
    const std::string& d = param(i).default_text;
    return d.size() >= 2 ? d.substr(1, d.size() - 2) : d;
  }
  return PyUnicode_AsUTF8(values[i]);
}

ScalarType ParsedArgs::scalartype(int i) const { return *as_scalar_type(values[i]); }
std::optional<std::string> ParsedArgs::optional_string(int i) const {
  if (is_none(i)) return std::nullopt;
  return string(i);
}
std::optional<ScalarType> ParsedArgs::optional_scalartype(int i) const {
  if (is_none(i)) return std::nullopt;
  return scalartype(i);
}
Device ParsedArgs::device(int i) const { return to_device(values[i]); }
std::optional<Device> ParsedArgs::optional_device(int i) const {
  if (is_none(i)) return std::nullopt;
  return to_device(values[i]);
}
// Borrowed: the call's arguments keep the Python Generator, and so the C++ one, alive.
Generator* ParsedArgs::generator(int i) const { return is_none(i) ? nullptr : unpack_generator(values[i]); }

// ---- PythonArgParser ----

PythonArgParser::PythonArgParser(std::vector<std::string> signatures, bool is_method) : is_method_(is_method) {
  for (const std::string& s : signatures) signatures_.push_back(parse_signature(s, is_method));
  numbers_as_tensors_ = !signatures_.empty() && allows_numbers_as_tensors(signatures_[0].name);
}

// Keywords torch's parser takes for every factory and out= function and a kiln signature may not name,
// given their "nothing" values: out=None, layout=None or strided, pin_memory=False or None (code that
// forwards its arguments writes them out: torch.add(a, b, out=out) with out None).
static Py_ssize_t ignorable_kwargs(const Signature& sig, PyObject* kwargs) {
  Py_ssize_t n = 0;
  auto named = [&](const char* key) {
    for (const Param& p : sig.params)
      if (p.name == key) return true;
    return false;
  };
  PyObject* v = PyDict_GetItemString(kwargs, "out");
  if (v == Py_None && !named("out")) ++n;
  v = PyDict_GetItemString(kwargs, "pin_memory");
  if ((v == Py_None || v == Py_False) && !named("pin_memory")) ++n;
  v = PyDict_GetItemString(kwargs, "layout");
  if (v != nullptr && !named("layout")) {
    bool strided = v == Py_None;
    if (!strided) {
      PyObject* r = PyObject_Repr(v);
      if (r == nullptr) {
        PyErr_Clear();
      } else {
        const char* text = PyUnicode_AsUTF8(r);
        strided = text != nullptr && std::strcmp(text, "kiln.strided") == 0;
        if (text == nullptr) PyErr_Clear();
        Py_DECREF(r);
      }
    }
    if (strided) ++n;
  }
  return n;
}

bool PythonArgParser::try_match(const Signature& sig, PyObject* args, PyObject* kwargs, bool varargs,
                                bool lenient, ParsedArgs* out) const {
  const Py_ssize_t nargs = args ? PyTuple_GET_SIZE(args) : 0;
  const int np = static_cast<int>(sig.params.size());
  for (int i = 0; i < np; ++i) out->values[i] = nullptr;
  int first_kw = 0;
  if (varargs) {
    // zeros(2, 3), x.view(2, 3): a leading int[] given as separate ints, only where it is the one
    // positional parameter and not optional (as torch: x.sum(0, 1), x.amax(0, 1) and x.std(0, 1), whose
    // dim is int[1]?, are TypeErrors; x.flip(0, 1) and x.count_nonzero(0, 1) take them).
    if (np == 0 || sig.params[0].type != ParamType::IntList || sig.params[0].kwarg_only || nargs == 0 ||
        sig.num_positional != 1 || sig.params[0].optional)
      return false;
    for (Py_ssize_t k = 0; k < nargs; ++k)
      if (!is_int_like(PyTuple_GET_ITEM(args, k)) || !fits_int64(PyTuple_GET_ITEM(args, k))) return false;
    out->values[0] = args;
    first_kw = 1;
  } else {
    if (nargs > sig.num_positional) return false;
    for (Py_ssize_t k = 0; k < nargs; ++k) {
      PyObject* obj = PyTuple_GET_ITEM(args, k);
      const bool stays = numbers_as_tensors_ && lenient && first_param_stays_tensor(sig.name, sig.params[k].name);
      if (!matches(sig.params[k], obj, lenient, numbers_as_tensors_ && !stays)) return false;
      out->values[k] = obj;
    }
    first_kw = static_cast<int>(nargs);
  }
  Py_ssize_t used_kwargs = 0;
  for (int i = 0; i < np; ++i) {
    const Param& p = sig.params[i];
    PyObject* obj = nullptr;
    if (kwargs) obj = PyDict_GetItem(kwargs, p.py_name);
    // NumPy's names, as torch's parser takes them (numpy_compatibility_arg_names): axis, keepdims.
    if (obj == nullptr && kwargs && p.name == "dim") obj = PyDict_GetItemString(kwargs, "axis");
    if (obj == nullptr && kwargs && p.name == "keepdim") obj = PyDict_GetItemString(kwargs, "keepdims");
    if (obj != nullptr) {
      if (i < first_kw) return false;  // given twice
      const bool number_ok = numbers_as_tensors_ && !(lenient && first_param_stays_tensor(sig.name, p.name));
      if (!matches(p, obj, lenient, number_ok)) return false;
      out->values[i] = obj;
      ++used_kwargs;
    } else if (out->values[i] == nullptr && !p.has_default) {  // T? without a default is required, as in torch
      return false;
    }
  }
  if (kwargs && used_kwargs + ignorable_kwargs(sig, kwargs) != PyDict_Size(kwargs)) return false;
  out->signature = &sig;
  return true;
}

ParsedArgs PythonArgParser::parse(PyObject* args, PyObject* kwargs) const {
  ParsedArgs out;
  // Every signature as written first, then int[] varargs forms, then leniently (0-dim tensors
  // as Scalars, Python numbers for Tensors where torch allows it: torch.add(t, 2, out=o)).
  const bool passes[3][2] = {{false, false}, {true, false}, {false, true}};
  for (const auto& pass : passes) {
    for (size_t i = 0; i < signatures_.size(); ++i) {
      if (try_match(signatures_[i], args, kwargs, pass[0], pass[1], &out)) {
        out.index = static_cast<int>(i);
        if (explain_enabled()) explain_log("binding", (signatures_[i].name + signatures_[i].text).c_str(), "");
        return out;
      }
    }
  }
  raise_no_match(args, kwargs);
}

namespace {

// A kiln sparse COO tensor is a Python type (python/kiln/sparse/_coo.py, docs/ARCHITECTURE.md "Sparse
// COO tensors") with an `is_sparse` attribute that is true; operators only take strided tensors. A list
// or tuple argument (cat's tensors) counts when one of its elements is one.
bool is_sparse_tensor(PyObject* o) {
  if (is_tensor(o) || PyUnicode_Check(o)) return false;
  if (PyList_Check(o) || PyTuple_Check(o)) {
    for (Py_ssize_t i = 0; i < PySequence_Fast_GET_SIZE(o); ++i)
      if (is_sparse_tensor(PySequence_Fast_GET_ITEM(o, i))) return true;
    return false;
  }
  PyObject* flag = PyObject_GetAttrString(o, "is_sparse");
  if (!flag) {
    PyErr_Clear();
    return false;
  }
  const bool sparse = flag == Py_True;
  Py_DECREF(flag);
  return sparse;
}

// An operator given a sparse tensor raises torch's NotImplementedError naming the layout, rather than
// a TypeError about the argument's type.
void check_no_sparse_argument(const std::string& name, PyObject* args, PyObject* kwargs) {
  const Py_ssize_t nargs = args ? PyTuple_GET_SIZE(args) : 0;
  bool sparse = false;
  for (Py_ssize_t k = 0; k < nargs && !sparse; ++k) sparse = is_sparse_tensor(PyTuple_GET_ITEM(args, k));
  PyObject *key, *value;
  Py_ssize_t pos = 0;
  while (kwargs && !sparse && PyDict_Next(kwargs, &pos, &key, &value)) sparse = is_sparse_tensor(value);
  KILN_CHECK_NOT_IMPLEMENTED(!sparse, "Could not run '", name, "' with arguments from the 'SparseCPU' backend: ",
                             "kiln's sparse_coo layout supports only the operations of kiln.sparse ",
                             "(docs/ARCHITECTURE.md, \"Sparse COO tensors\"); call .to_dense() first");
}

// torch's ops with a Dimname overload (sum(x, 'a'), x.softmax('a'), x.transpose('a', 'b')) take a name
// where a dim goes and fail at run time on an unnamed tensor: RuntimeError "Name 'a' not found", and
// "Please look up dimensions by name" for None. kiln has no named tensors; where no signature matched
// and such an argument is there, it raises torch's class rather than the parser's TypeError.
bool dimname_like(PyObject* o, bool none_ok, bool list_ok, std::string* name) {
  if (PyUnicode_Check(o)) {
    const char* text = PyUnicode_AsUTF8(o);
    *name = text ? text : "";
    if (!text) PyErr_Clear();
    return true;
  }
  if (o == Py_None && none_ok) {
    *name = "None";
    return true;
  }
  if (list_ok && (PyList_Check(o) || PyTuple_Check(o)) && PySequence_Fast_GET_SIZE(o) > 0) {
    for (Py_ssize_t i = 0; i < PySequence_Fast_GET_SIZE(o); ++i)
      if (!PyUnicode_Check(PySequence_Fast_GET_ITEM(o, i))) return false;
    return dimname_like(PySequence_Fast_GET_ITEM(o, 0), false, false, name);
  }
  return false;
}

void check_no_dimname_argument(std::string op, PyObject* args, PyObject* kwargs) {
  static const std::set<std::string> ops = {
      "align_to", "all", "any", "argsort", "cat", "concat", "concatenate", "cummax", "cummin", "cumprod", "cumsum",
      "diagonal", "gather", "index_add", "index_copy", "index_fill", "index_select", "kthvalue", "log_softmax",
      "logcumsumexp", "logsumexp", "max", "mean", "median", "min", "mode", "nanmedian", "prod", "scatter",
      "scatter_add", "select", "size", "softmax", "sort", "squeeze", "std", "std_mean", "stride", "sum", "transpose",
      "unbind", "unflatten", "var", "var_mean"};
  if (op.size() > 1 && op.back() == '_') op.pop_back();
  if (ops.count(op) == 0) return;
  // Only the reductions take a list of names (sum(x, ['a', 'b'])); unflatten's sizes are no names.
  static const std::set<std::string> name_lists = {"sum", "mean", "std", "var", "std_mean", "var_mean",
                                                   "logsumexp", "align_to"};
  const bool list_ok = name_lists.count(op) != 0;
  std::string name;
  bool found = false;
  const Py_ssize_t nargs = args ? PyTuple_GET_SIZE(args) : 0;
  // A tensor first (torch.sum(x, 'a')) or not (x.sum('a')): None stands for a name only after it.
  for (Py_ssize_t k = 0; k < nargs && !found; ++k)
    found = dimname_like(PyTuple_GET_ITEM(args, k), k > 0 || !is_tensor(PyTuple_GET_ITEM(args, 0)), list_ok, &name);
  PyObject *key, *value;
  Py_ssize_t pos = 0;
  while (kwargs && !found && PyDict_Next(kwargs, &pos, &key, &value)) {
    const char* k = PyUnicode_AsUTF8(key);
    if (k && std::string(k).find("dim") != std::string::npos) found = dimname_like(value, true, list_ok, &name);
  }
  if (!found) return;
  KILN_CHECK(name != "None", op, "(): Please look up dimensions by name, got: name = None.");
  KILN_CHECK(false, op, "(): Name '", name, "' not found in the tensor: kiln has no named tensors, pass a dimension index");
}

}  // namespace

void PythonArgParser::raise_no_match(PyObject* args, PyObject* kwargs) const {
  check_no_sparse_argument(signatures_[0].name, args, kwargs);
  check_no_dimname_argument(signatures_[0].name, args, kwargs);
  auto type_name = [](PyObject* o) -> std::string {
    if (is_tensor(o)) return "Tensor";
    return Py_TYPE(o)->tp_name;
  };
  std::stringstream ss;
  ss << signatures_[0].name << "() received an invalid combination of arguments - got (";
  bool first = true;
  const Py_ssize_t nargs = args ? PyTuple_GET_SIZE(args) : 0;
  for (Py_ssize_t k = 0; k < nargs; ++k) {
    ss << (first ? "" : ", ") << type_name(PyTuple_GET_ITEM(args, k));
    first = false;
  }
  if (kwargs) {
    PyObject *key, *value;
    Py_ssize_t pos = 0;
    while (PyDict_Next(kwargs, &pos, &key, &value)) {
      ss << (first ? "" : ", ") << PyUnicode_AsUTF8(key) << "=" << type_name(value);
      first = false;
    }
  }
  ss << "), but expected one of:";
  for (const Signature& s : signatures_) ss << "\n * " << s.text;
  throw TypeError(ss.str());
}

}  // namespace python
}  // namespace kiln
