// Mapping between Arrow schemas and the flat, id-carrying field list Lance stores.
//
// Facts mirrored from the reference (lance-core datatypes, lance-file datatypes):
// - fields are listed in pre-order; top-level fields have parent_id -1;
// - struct children and the single list item are nodes of their own, a fixed_size_list's
//   item is not (its type is spelled inside the logical type string);
// - Field.encoding is PLAIN for fixed-stride types and lists, VAR_BINARY for
//   binary-like types and NONE for structs; Field.type is always 0.
#include "format/lance_schema.h"

#include <algorithm>
#include <charconv>
#include <functional>
#include <unordered_map>
#include <unordered_set>

#include "file.pb.h"
#include "format/dictionary_keys.h"
#include "lancelet/error.h"

namespace lancelet::format {
namespace {

constexpr const char* kExtensionNameKey = "ARROW:extension:name";

const char* UnitName(TimeUnit unit) {
  switch (unit) {
    case TimeUnit::kSecond: return "s";
    case TimeUnit::kMilli: return "ms";
    case TimeUnit::kMicro: return "us";
    case TimeUnit::kNano: return "ns";
  }
  return "?";
}

std::optional<TimeUnit> ParseUnit(std::string_view s) {
  if (s == "s") return TimeUnit::kSecond;
  if (s == "ms") return TimeUnit::kMilli;
  if (s == "us") return TimeUnit::kMicro;
  if (s == "ns") return TimeUnit::kNano;
  return std::nullopt;
}

std::optional<int32_t> ParsePositiveInt(std::string_view s) {
  int32_t v = 0;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || end != s.data() + s.size() || v <= 0) return std::nullopt;
  return v;
}


// Types spelled entirely by the logical type string (no child nodes needed).
TypePtr ParseLeafLogicalType(std::string_view lt) {
  static const std::unordered_map<std::string_view, TypeId> kSimple = {
      {"bool", TypeId::kBool},          {"int8", TypeId::kInt8},
      {"int16", TypeId::kInt16},        {"int32", TypeId::kInt32},
      {"int64", TypeId::kInt64},        {"uint8", TypeId::kUInt8},
      {"uint16", TypeId::kUInt16},      {"uint32", TypeId::kUInt32},
      {"uint64", TypeId::kUInt64},      {"halffloat", TypeId::kFloat16},
      {"float", TypeId::kFloat32},      {"double", TypeId::kFloat64},
      {"string", TypeId::kUtf8},        {"large_string", TypeId::kLargeUtf8},
      {"binary", TypeId::kBinary},      {"large_binary", TypeId::kLargeBinary},
      {"json", TypeId::kLargeBinary},   {"date32:day", TypeId::kDate32},
      {"date64:ms", TypeId::kDate64},   {"null", TypeId::kNull},
  };
  if (auto it = kSimple.find(lt); it != kSimple.end()) return DataType::Primitive(it->second);

  for (auto [prefix, id] : {std::pair{"time32:", TypeId::kTime32}, {"time64:", TypeId::kTime64},
                            {"duration:", TypeId::kDuration}}) {
    if (!lt.starts_with(prefix)) continue;
    auto unit = ParseUnit(lt.substr(std::string_view(prefix).size()));
    if (!unit) return nullptr;
    try {
      return id == TypeId::kTime32 ? DataType::Time32(*unit)
             : id == TypeId::kTime64 ? DataType::Time64(*unit) : DataType::Duration(*unit);
    } catch (const Error&) {
      return nullptr;  // time32:us and the like
    }
  }
  if (lt.starts_with("decimal:")) {
    // decimal:<bits>:<precision>:<scale>; the scale may be negative.
    auto parts = lt.substr(8);
    std::vector<int32_t> v;
    for (size_t start = 0; v.size() < 3;) {
      size_t colon = parts.find(':', start);
      std::string_view part = parts.substr(start, colon == std::string_view::npos ? colon : colon - start);
      int32_t x = 0;
      auto [end, ec] = std::from_chars(part.data(), part.data() + part.size(), x);
      if (ec != std::errc() || end != part.data() + part.size()) return nullptr;
      v.push_back(x);
      if (colon == std::string_view::npos) break;
      start = colon + 1;
    }
    if (v.size() != 3) return nullptr;
    try {
      if (v[0] == 128) return DataType::Decimal128(v[1], v[2]);
      if (v[0] == 256) return DataType::Decimal256(v[1], v[2]);
    } catch (const Error&) {
    }
    return nullptr;
  }

  if (lt.starts_with("fixed_size_binary:")) {
    if (auto n = ParsePositiveInt(lt.substr(18))) return DataType::FixedSizeBinary(*n);
    return nullptr;
  }
  if (lt.starts_with("fixed_size_list:")) {
    // fixed_size_list:<item logical type>:<n>; the item type may itself contain ':'.
    auto rest = lt.substr(16);
    auto colon = rest.rfind(':');
    if (colon == std::string_view::npos) return nullptr;
    auto n = ParsePositiveInt(rest.substr(colon + 1));
    if (!n) return nullptr;
    auto item = ParseLeafLogicalType(rest.substr(0, colon));
    if (!item) return nullptr;
    return DataType::FixedSizeList(Field::Make("item", item, true), *n);
  }
  if (lt.starts_with("timestamp:")) {
    auto rest = lt.substr(10);
    auto colon = rest.find(':');
    if (colon == std::string_view::npos) return nullptr;
    auto unit = ParseUnit(rest.substr(0, colon));
    if (!unit) return nullptr;
    auto tz = rest.substr(colon + 1);
    return DataType::Timestamp(*unit, tz == "-" ? std::string() : std::string(tz));
  }
  return nullptr;
}

int32_t ProtoEncoding(const LanceField& field) {
  const DataType& type = *field.type;
  if (field.dictionary_index) return lance::file::DICTIONARY;
  if (type.is_variable_binary()) return lance::file::VAR_BINARY;
  if (type.id() == TypeId::kStruct) return lance::file::NONE;
  return lance::file::PLAIN;  // fixed stride (incl. fixed_size_list/binary) and lists
}

LanceField FieldFromArrow(const Field& field, int32_t& next_id) {
  LanceField out;
  out.id = next_id++;
  out.name = field.name;
  out.type = field.type;
  out.nullable = field.nullable;
  out.metadata = field.metadata;
  // Dictionary-encoded input is stored so, as the reference stores it, where lancelet can
  // write its dictionaries; otherwise as its values.
  if (field.dictionary_index && CanDictionaryEncode(*field.dictionary_index, *field.type))
    out.dictionary_index = field.dictionary_index;
  LogicalTypeName(*field.type);  // rejects types Lance cannot name, early
  switch (field.type->id()) {
    case TypeId::kStruct:
      CheckUniqueNames(field.type->children(), field.name);
      [[fallthrough]];
    case TypeId::kList:
    case TypeId::kLargeList:
    case TypeId::kMap:
      for (const auto& child : field.type->children()) out.children.push_back(FieldFromArrow(*child, next_id));
      break;
    default:
      break;  // fixed_size_list items are part of the type, not nodes
  }
  return out;
}

void FieldToProto(const LanceField& field, int32_t parent_id,
                  google::protobuf::RepeatedPtrField<lance::file::Field>* out) {
  auto* pb = out->Add();
  pb->set_type(lance::file::Field::PARENT);  // the reference always writes 0
  pb->set_name(field.name);
  pb->set_id(field.id);
  pb->set_parent_id(parent_id);
  pb->set_logical_type(field.dictionary_index ? fmt::format("dict:{}:{}:false", LogicalTypeName(*field.type),
                                                             LogicalTypeName(*field.dictionary_index))
                                             : LogicalTypeName(*field.type));
  pb->set_nullable(field.nullable);
  pb->set_encoding(static_cast<lance::file::Encoding>(ProtoEncoding(field)));
  for (const auto& [k, v] : field.metadata) (*pb->mutable_metadata())[k] = v;
  if (auto it = field.metadata.find(kExtensionNameKey); it != field.metadata.end()) {
    pb->set_extension_name(it->second);
  }
  for (const auto& child : field.children) FieldToProto(child, field.id, out);
}

const LanceField* FindIn(const std::vector<LanceField>& fields, int32_t id) {
  for (const auto& f : fields) {
    if (f.id == id) return &f;
    if (const auto* found = FindIn(f.children, id)) return found;
  }
  return nullptr;
}

}  // namespace

std::string LogicalTypeName(const DataType& type) {
  switch (type.id()) {
    case TypeId::kBool: return "bool";
    case TypeId::kInt8: return "int8";
    case TypeId::kInt16: return "int16";
    case TypeId::kInt32: return "int32";
    case TypeId::kInt64: return "int64";
    case TypeId::kUInt8: return "uint8";
    case TypeId::kUInt16: return "uint16";
    case TypeId::kUInt32: return "uint32";
    case TypeId::kUInt64: return "uint64";
    case TypeId::kFloat16: return "halffloat";
    case TypeId::kFloat32: return "float";
    case TypeId::kFloat64: return "double";
    case TypeId::kUtf8: return "string";
    case TypeId::kLargeUtf8: return "large_string";
    case TypeId::kBinary: return "binary";
    case TypeId::kLargeBinary: return "large_binary";
    case TypeId::kFixedSizeBinary: return fmt::format("fixed_size_binary:{}", type.fixed_size());
    case TypeId::kFixedSizeList: {
      const auto& item = *type.child(0)->type;
      if (item.is_nested() && item.id() != TypeId::kFixedSizeList) {
        ThrowNotSupported("Lance cannot store {}: a fixed_size_list item must be a primitive type",
                          type.ToString());
      }
      return fmt::format("fixed_size_list:{}:{}", LogicalTypeName(item), type.fixed_size());
    }
    case TypeId::kList:
      return type.child(0)->type->id() == TypeId::kStruct ? "list.struct" : "list";
    case TypeId::kLargeList:
      return type.child(0)->type->id() == TypeId::kStruct ? "large_list.struct" : "large_list";
    case TypeId::kStruct: return "struct";
    case TypeId::kDate32: return "date32:day";
    case TypeId::kDate64: return "date64:ms";
    case TypeId::kTimestamp:
      return fmt::format("timestamp:{}:{}", UnitName(type.unit()),
                         type.timezone().empty() ? "-" : type.timezone());
    case TypeId::kTime32: return fmt::format("time32:{}", UnitName(type.unit()));
    case TypeId::kTime64: return fmt::format("time64:{}", UnitName(type.unit()));
    case TypeId::kDuration: return fmt::format("duration:{}", UnitName(type.unit()));
    case TypeId::kDecimal128: return fmt::format("decimal:128:{}:{}", type.precision(), type.scale());
    case TypeId::kDecimal256: return fmt::format("decimal:256:{}:{}", type.precision(), type.scale());
    case TypeId::kNull: return "null";
    case TypeId::kMap:
      // The reference names no sorted-keys map (lance-core refuses keys_sorted = true).
      if (type.keys_sorted()) ThrowNotSupported("Lance cannot store {}: maps with sorted keys", type.ToString());
      return "map";
  }
  ThrowNotSupported("type {} has no Lance logical type", type.ToString());
}

FieldPtr LanceField::ToArrow() const {
  auto field = std::make_shared<Field>(*Field::Make(name, type, nullable, metadata));
  field->dictionary_index = dictionary_index;
  return field;
}

void CheckUniqueNames(const std::vector<FieldPtr>& fields, const std::string& parent) {
  std::unordered_set<std::string_view> seen;
  for (const auto& f : fields) {
    if (seen.insert(f->name).second) continue;
    if (parent.empty()) ThrowInvalid("duplicate column name '{}'", f->name);
    ThrowInvalid("duplicate field name '{}' in struct '{}'", f->name, parent);
  }
}

LanceSchema LanceSchema::FromArrow(const Schema& schema, int32_t first_id) {
  CheckUniqueNames(schema.fields());
  std::vector<LanceField> fields;
  int32_t next_id = first_id;
  for (const auto& f : schema.fields()) fields.push_back(FieldFromArrow(*f, next_id));
  return LanceSchema(std::move(fields), schema.metadata());
}

LanceSchema LanceSchema::FromProto(const google::protobuf::RepeatedPtrField<lance::file::Field>& pbs,
                                   const Metadata& metadata) {
  // First gather the tree as indices (children vectors are filled once, at the end).
  std::unordered_map<int32_t, int> index_of_id;
  std::vector<std::vector<int>> children(pbs.size());
  std::vector<int> roots;
  int last_packed = -1;  // the latest field whose children may lack ids (see below)
  for (int i = 0; i < pbs.size(); ++i) {
    const auto& pb = pbs.Get(i);
    // A data file's own schema stores the children of a blob v2 descriptor (a packed
    // struct) without ids: id -1, parent -1, right after their parent.
    if (pb.id() == -1 && pb.parent_id() == -1 && last_packed >= 0) {
      children[last_packed].push_back(i);
      continue;
    }
    last_packed = pb.logical_type() == "struct" && pb.metadata().count("lance-encoding:packed") ? i : -1;
    if (!index_of_id.emplace(pb.id(), i).second) {
      ThrowCorrupt("schema: field id {} ('{}') appears twice", pb.id(), EscapeForMessage(pb.name()));
    }
    if (pb.parent_id() == -1) {
      roots.push_back(i);
    } else {
      auto parent = index_of_id.find(pb.parent_id());
      if (parent == index_of_id.end()) {
        ThrowCorrupt("schema: field '{}' (id {}) names parent id {}, which does not precede it",
                     EscapeForMessage(pb.name()), pb.id(), pb.parent_id());
      }
      children[parent->second].push_back(i);
    }
  }

  std::function<LanceField(int)> build = [&](int i) -> LanceField {
    const auto& pb = pbs.Get(i);
    LanceField f;
    f.id = pb.id();
    f.name = pb.name();
    f.nullable = pb.nullable();
    for (const auto& [k, v] : pb.metadata()) f.metadata[k] = v;
    if (!pb.extension_name().empty()) f.metadata.emplace(kExtensionNameKey, pb.extension_name());
    for (int c : children[i]) f.children.push_back(build(c));

    const std::string& lt = pb.logical_type();
    std::vector<FieldPtr> child_fields;
    for (const auto& c : f.children) child_fields.push_back(c.ToArrow());
    if (lt == "struct") {
      f.type = DataType::Struct(std::move(child_fields));
    } else if (lt == "list" || lt == "list.struct" || lt == "large_list" || lt == "large_list.struct") {
      if (child_fields.size() != 1) {
        ThrowCorrupt("schema: list field '{}' (id {}) has {} child fields, expected 1", EscapeForMessage(f.name), f.id,
                     child_fields.size());
      }
      f.type = lt.starts_with("large") ? DataType::LargeList(child_fields[0]) : DataType::List(child_fields[0]);
    } else if (lt == "map") {
      if (child_fields.size() != 1)
        ThrowCorrupt("schema: map field '{}' (id {}) has {} child fields, expected 1", EscapeForMessage(f.name), f.id,
                     child_fields.size());
      try {
        f.type = DataType::Map(child_fields[0]);
      } catch (const Error& e) {
        ThrowCorrupt("schema: map field '{}' (id {}): {}", EscapeForMessage(f.name), f.id, e.what());
      }
    } else {
      if (lt.starts_with("dict:")) {
        // dict:<value type>:<index type>:<ordered>, split on ':' as the reference does (so
        // a value type with ':' in its name is not one it names).
        std::vector<std::string_view> parts;
        for (size_t start = 0;;) {
          size_t colon = lt.find(':', start);
          parts.push_back(std::string_view(lt).substr(start, colon == std::string::npos ? colon : colon - start));
          if (colon == std::string::npos) break;
          start = colon + 1;
        }
        if (parts.size() == 4) {
          f.type = ParseLeafLogicalType(parts[1]);
          f.dictionary_index = ParseLeafLogicalType(parts[2]);
        }
        if (!f.type || !f.dictionary_index || !f.dictionary_index->is_integer())
          ThrowCorrupt("schema: field '{}' (id {}) has malformed dictionary type '{}'",
                       EscapeForMessage(f.name), f.id, EscapeForMessage(lt));
        if (!f.children.empty())
          ThrowCorrupt("schema: field '{}' (id {}) of type '{}' has child fields",
                       EscapeForMessage(f.name), f.id, EscapeForMessage(lt));
        return f;
      }
      f.type = ParseLeafLogicalType(lt);
      if (!f.type)
        ThrowCorrupt("schema: field '{}' (id {}) has unknown logical type '{}'", EscapeForMessage(f.name), f.id,
                     EscapeForMessage(lt));
      if (!f.children.empty()) {
        ThrowCorrupt("schema: field '{}' (id {}) of type '{}' has child fields",
                       EscapeForMessage(f.name), f.id, EscapeForMessage(lt));
      }
    }
    return f;
  };

  std::vector<LanceField> fields;
  for (int r : roots) fields.push_back(build(r));
  return LanceSchema(std::move(fields), metadata);
}

void LanceSchema::ToProto(google::protobuf::RepeatedPtrField<lance::file::Field>* out) const {
  for (const auto& f : fields_) FieldToProto(f, -1, out);
}

SchemaPtr LanceSchema::ToArrow() const {
  std::vector<FieldPtr> fields;
  for (const auto& f : fields_) fields.push_back(f.ToArrow());
  return std::make_shared<Schema>(std::move(fields), metadata_);
}

const LanceField* LanceSchema::FindById(int32_t id) const { return FindIn(fields_, id); }

const LanceField* LanceSchema::FindTopLevelById(int32_t id) const {
  for (const auto& f : fields_)
    if (f.id == id) return &f;
  return nullptr;
}

bool StructPath::AffectedBy(int32_t id) const {
  if (std::find(ids.begin(), ids.end(), id) != ids.end()) return true;
  bool below = false;
  field->ForEach([&](const LanceField& n) { below |= n.id == id; });
  return below;
}

std::optional<StructPath> LanceSchema::StructPathOf(int32_t id) const {
  for (size_t t = 0; t < fields_.size(); ++t) {
    StructPath path{t, {}, {fields_[t].id}, fields_[t].name, &fields_[t]};
    // Depth first through struct children only.
    std::function<bool(StructPath&)> find = [&](StructPath& p) {
      if (p.field->id == id) return true;
      if (p.field->type->id() != TypeId::kStruct) return false;
      for (size_t c = 0; c < p.field->children.size(); ++c) {
        StructPath next = p;
        const LanceField& child = p.field->children[c];
        next.children.push_back(int(c));
        next.ids.push_back(child.id);
        next.name += "." + child.name;
        next.field = &child;
        if (find(next)) {
          p = std::move(next);
          return true;
        }
      }
      return false;
    };
    if (find(path)) return path;
  }
  return std::nullopt;
}

std::optional<StructPath> LanceSchema::StructPathNamed(const std::string& dotted) const {
  if (const LanceField* whole = FindByName(dotted)) return StructPathOf(whole->id);
  const size_t dot = dotted.find('.');
  if (dot == std::string::npos) return std::nullopt;
  const LanceField* node = FindByName(dotted.substr(0, dot));
  for (size_t start = dot + 1; node;) {
    const size_t end = std::min(dotted.find('.', start), dotted.size());
    const std::string part = dotted.substr(start, end - start);
    if (node->type->id() != TypeId::kStruct) return std::nullopt;
    const LanceField* next = nullptr;
    for (const auto& c : node->children)
      if (c.name == part) next = &c;
    node = next;
    if (end == dotted.size()) break;
    start = end + 1;
  }
  if (!node) return std::nullopt;
  return StructPathOf(node->id);
}

const LanceField* LanceSchema::FindByName(const std::string& name) const {
  for (const auto& f : fields_) {
    if (f.name == name) return &f;
  }
  return nullptr;
}

int32_t LanceSchema::MaxId() const {
  int32_t max_id = -1;
  for (const auto& f : fields_) f.ForEach([&](const LanceField& n) { max_id = std::max(max_id, n.id); });
  return max_id;
}

LanceSchema LanceSchema::Project(const std::vector<std::string>& names) const {
  std::vector<LanceField> out;
  for (const auto& name : names) {
    const auto* f = FindByName(name);
    if (!f) ThrowNotFound("field '{}' is not in the schema ({} fields)", name, fields_.size());
    out.push_back(*f);
  }
  return LanceSchema(std::move(out), metadata_);
}

bool LanceField::IsBlob() const {
  for (const auto& [k, v] : metadata)
    if (k == "lance-encoding:blob" || (k == "ARROW:extension:name" && v.find("blob") != std::string::npos))
      return true;
  return false;
}

}  // namespace lancelet::format
