// Helpers for the expression tests: small batches and one-line renderings of results.
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "lancelet/builder.h"
#include "lancelet/expr.h"
#include "lancelet/record_batch.h"

namespace lancelet::expr_test {

using Column = std::pair<FieldPtr, ArrayPtr>;

inline Column Col(const std::string& name, const TypePtr& type, const std::vector<Scalar>& values) {
  return {Field::Make(name, type), MakeArray(type, values)};
}

// Scalars of `type` from optional payloads (nullopt = NULL).
template <typename T>
std::vector<Scalar> Values(const TypePtr& type, const std::vector<std::optional<T>>& values) {
  std::vector<Scalar> out;
  for (const auto& v : values) {
    if (!v) out.push_back(Scalar::Null(type));
    else if constexpr (std::is_same_v<T, const char*>) out.push_back(Scalar{type, std::string(*v)});
    else out.push_back(Scalar{type, *v});
  }
  return out;
}

inline RecordBatchPtr MakeBatch(const std::vector<Column>& columns) {
  std::vector<FieldPtr> fields;
  std::vector<ArrayPtr> arrays;
  for (const auto& [f, a] : columns) {
    fields.push_back(f);
    arrays.push_back(a);
  }
  return RecordBatch::Make(std::make_shared<Schema>(fields), arrays);
}

// "1, NULL, 'x', true, 1.5"
inline std::string RenderScalar(const Scalar& v) {
  if (v.is_null()) return "NULL";
  if (auto* b = std::get_if<bool>(&v.value)) return *b ? "true" : "false";
  if (auto* i = std::get_if<int64_t>(&v.value)) return std::to_string(*i);
  if (auto* u = std::get_if<uint64_t>(&v.value)) return std::to_string(*u);
  if (auto* d = std::get_if<double>(&v.value)) return *d != *d ? "NaN" : fmt::format("{}", *d);
  if (auto* s = std::get_if<std::string>(&v.value)) return "'" + *s + "'";
  std::string out = "[";
  const auto& items = v.as_list();
  for (size_t i = 0; i < items.size(); ++i) out += (i ? ", " : "") + RenderScalar(items[i]);
  return out + "]";
}

inline std::string Render(const ArrayData& a) {
  std::string out;
  for (int64_t i = 0; i < a.length; ++i) out += (i ? ", " : "") + RenderScalar(GetScalar(a, i));
  return out;
}

// Parses, binds against the batch's schema and evaluates; returns "type: v1, v2, ...".
inline std::string Eval(const std::string& text, const RecordBatch& batch) {
  BoundExprPtr bound = Bind(*ParseExpression(text), *batch.schema());
  ArrayPtr out = Evaluate(*bound, batch);
  ValidateArray(*out, "expression result");
  return out->type->ToString() + ": " + Render(*out);
}

// The message of the lancelet::Error the callable throws, or "no error".
template <typename F>
std::string ErrorOf(F&& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "no error";
}

}  // namespace lancelet::expr_test
