#include "python/py_json.h"

#include <Python.h>

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

absl::StatusOr<json> Convert(py::handle value, const std::string& field, int depth) {
  if (depth > kMaxDepth) {
    return absl::InvalidArgumentError(absl::StrCat(field, ": nested deeper than ", kMaxDepth));
  }
  if (value.is_none()) return json();
  if (PyBool_Check(value.ptr())) return json(value.ptr() == Py_True);
  if (PyFloat_Check(value.ptr())) return json(PyFloat_AsDouble(value.ptr()));
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
