#include "python/py_json.h"

#include <Python.h>

#include <cmath>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "base/status_macros.h"

namespace reshard {
namespace {

namespace py = pybind11;
using json = nlohmann::json;

// As deep as formats/batch_line.cc lets a batch line be.
constexpr int kMaxDepth = 16;

std::string Shown(py::handle value) {
  std::string text = py::repr(value).cast<std::string>();
  if (text.size() > 40) text = text.substr(0, 37) + "...";
  return text;
}

absl::StatusOr<json> IntFromPython(py::handle value, const std::string& field) {
  int overflow = 0;
  py::object index = py::reinterpret_steal<py::object>(PyNumber_Index(value.ptr()));
  if (!index) {
    PyErr_Clear();
    return absl::InvalidArgumentError(
        absl::StrCat(field, ": expected an integer, got ", Shown(value)));
  }
  const long long v = PyLong_AsLongLongAndOverflow(index.ptr(), &overflow);
  if (overflow == 0 && !(v == -1 && PyErr_Occurred())) return json(static_cast<int64_t>(v));
  PyErr_Clear();
  return absl::InvalidArgumentError(absl::StrCat(field, ": ", Shown(value), " is out of range"));
}

// A 1-D integer array (numpy's, or any with ndim, dtype.kind and tolist), as
// a shape or mesh is often given; its list is read as a list. Other arrays
// stay refused: their list is not what a request field means.
bool IsIntegerVector(py::handle value) {
  if (!py::hasattr(value, "ndim") || !py::hasattr(value, "dtype") ||
      !py::hasattr(value, "tolist")) {
    return false;
  }
  py::object ndim = value.attr("ndim");
  py::object dtype = value.attr("dtype");
  if (!PyLong_Check(ndim.ptr()) || ndim.cast<long>() != 1 || !py::hasattr(dtype, "kind")) {
    return false;
  }
  py::object kind = dtype.attr("kind");
  return PyUnicode_Check(kind.ptr()) &&
         (kind.cast<std::string>() == "i" || kind.cast<std::string>() == "u");
}

absl::StatusOr<json> Convert(py::handle value, const std::string& field, int depth) {
  if (depth > kMaxDepth) {
    return absl::InvalidArgumentError(absl::StrCat(field, ": nested deeper than ", kMaxDepth));
  }
  if (value.is_none()) return json();
  if (PyBool_Check(value.ptr())) return json(value.ptr() == Py_True);
  if (PyFloat_Check(value.ptr())) {
    // JSON has no NaN or infinity: one would be echoed as null (an id) or
    // read as no value.
    const double v = PyFloat_AsDouble(value.ptr());
    if (!std::isfinite(v)) {
      return absl::InvalidArgumentError(
          absl::StrCat(field, ": ", Shown(value), " is not a finite number"));
    }
    return json(v);
  }
  if (PyUnicode_Check(value.ptr())) {
    Py_ssize_t size = 0;
    const char* text = PyUnicode_AsUTF8AndSize(value.ptr(), &size);
    if (text == nullptr) {  // lone surrogates have no UTF-8
      PyErr_Clear();
      return absl::InvalidArgumentError(absl::StrCat(field, ": not valid Unicode text"));
    }
    return json(std::string(text, size));
  }
  if (PyList_Check(value.ptr()) || PyTuple_Check(value.ptr())) {
    json array = json::array();
    for (py::handle item : py::reinterpret_borrow<py::sequence>(value)) {
      RESHARD_ASSIGN_OR_RETURN(json v, Convert(item, field, depth + 1));
      array.push_back(std::move(v));
    }
    return array;
  }
  if (PyDict_Check(value.ptr())) {
    json object = json::object();
    for (auto [key, item] : py::reinterpret_borrow<py::dict>(value)) {
      if (!PyUnicode_Check(key.ptr())) {
        return absl::InvalidArgumentError(
            absl::StrCat(field, ": keys must be strings, got ", Shown(key)));
      }
      RESHARD_ASSIGN_OR_RETURN(json v, Convert(item, field, depth + 1));
      object[key.cast<std::string>()] = std::move(v);
    }
    return object;
  }
  // Before __index__: numpy arrays have one (for their size-1 kind).
  if (IsIntegerVector(value)) return Convert(value.attr("tolist")(), field, depth);
  if (PyIndex_Check(value.ptr())) return IntFromPython(value, field);
  return absl::InvalidArgumentError(
      absl::StrCat(field, ": unsupported value ", Shown(value), " of type ",
                   py::str(py::type::handle_of(value).attr("__name__")).cast<std::string>()));
}

}  // namespace

absl::StatusOr<json> JsonFromPython(py::handle value, const std::string& field) {
  return Convert(value, field, 0);
}

}  // namespace reshard
