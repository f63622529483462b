// A schema as Lance stores it: every node (top-level fields, struct children, list items)
// carries an integer field id. Manifests and data files refer to fields by these ids.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "lancelet/array.h"
#include "lancelet/type.h"

namespace lance::file { class Field; }
namespace google::protobuf { template <typename T> class RepeatedPtrField; }

namespace lancelet::format {

struct LanceField {
  int32_t id = -1;
  std::string name;
  TypePtr type;            // the full Arrow type, including children
  bool nullable = true;
  Metadata metadata;       // e.g. "lance-encoding:blob"
  // Struct fields, or the single list item. A fixed_size_list has none: as in Lance, its
  // item is part of the type ("fixed_size_list:float:128") and gets no id.
  std::vector<LanceField> children;
  // Set for a dictionary-encoded column ("dict:string:int32:false"): its index type. Such
  // a column reads as its values (`type` is the value type); 2.x files store a dictionary
  // per page (format/dictionary_keys.h).
  TypePtr dictionary_index;
  // A legacy (0.1) dataset's dictionary values for this field, which it keeps in its
  // manifest file (table/legacy_dictionaries.h); legacy data files hold only the keys.
  ArrayPtr legacy_dictionary;

  FieldPtr ToArrow() const;
  // Pre-order walk over this node and its descendants.
  template <typename F>
  void ForEach(F&& f) const { f(*this); for (const auto& c : children) c.ForEach(f); }
  // A blob column: its values live outside the data file (lance-encoding:blob, or a blob
  // extension type), so it takes no overlay and is not rewritten value by value.
  bool IsBlob() const;
};

// A node reached from a top-level field through struct children only, as a filter's
// `a.b.c` or an index on a nested field names it.
struct StructPath {
  size_t top = 0;                     // index in LanceSchema::fields()
  std::vector<int> children;          // struct child indices below the top-level field
  std::vector<int32_t> ids;           // field ids from the top-level field down to the node
  std::string name;                   // the names joined with '.'
  const LanceField* field = nullptr;  // the node

  // Whether a change to field `id` changes this node's values: `id` is the node, one of
  // its ancestors or one of its descendants.
  bool AffectedBy(int32_t id) const;
};

class LanceSchema {
 public:
  LanceSchema() = default;
  LanceSchema(std::vector<LanceField> fields, Metadata metadata)
      : fields_(std::move(fields)), metadata_(std::move(metadata)) {}

  // Gives every node an id in pre-order, starting at `first_id`. Throws Invalid for a
  // name used twice among the columns or among the fields of one struct.
  static LanceSchema FromArrow(const Schema& schema, int32_t first_id = 0);
  // From the flat pre-order list of lance.file.Field (parent_id -1 = top level).
  // Throws Corrupt on unknown logical types or dangling parents.
  static LanceSchema FromProto(const google::protobuf::RepeatedPtrField<lance::file::Field>& fields,
                               const Metadata& metadata);
  void ToProto(google::protobuf::RepeatedPtrField<lance::file::Field>* out) const;

  const std::vector<LanceField>& fields() const { return fields_; }
  std::vector<LanceField>& mutable_fields() { return fields_; }
  const Metadata& metadata() const { return metadata_; }
  SchemaPtr ToArrow() const;
  // The node with this id anywhere in the tree, or null.
  const LanceField* FindById(int32_t id) const;
  // The top-level field with this id, or null (a nested node's id gives null).
  const LanceField* FindTopLevelById(int32_t id) const;
  // The top-level field with this name, or null.
  const LanceField* FindByName(const std::string& name) const;
  // The path to the node with this id, or nullopt when there is none or a list lies on
  // the way (a list item is not one value per row).
  std::optional<StructPath> StructPathOf(int32_t id) const;
  // The path `dotted` names: a top-level field of that exact name, else a top-level field
  // and struct children ("a.b.c"); nullopt when nothing matches.
  std::optional<StructPath> StructPathNamed(const std::string& dotted) const;
  int32_t MaxId() const;  // -1 when empty
  // Only the named top-level fields, in the given order; throws NotFound naming a missing one.
  LanceSchema Project(const std::vector<std::string>& names) const;

 private:
  std::vector<LanceField> fields_;
  Metadata metadata_;
};

// Throws Invalid, "duplicate column name 'x'" (top level, `parent` empty) or "duplicate
// field name 'x' in struct 'p'", when two of `fields` share a name.
void CheckUniqueNames(const std::vector<FieldPtr>& fields, const std::string& parent = "");

// Lance logical type strings ("int32", "string", "fixed_size_list:float:128", "list",
// "struct", "timestamp:us:-", "date32:day", ...). The Arrow type of a nested field also
// depends on its children, which FromProto supplies.
std::string LogicalTypeName(const DataType& type);

}  // namespace lancelet::format
