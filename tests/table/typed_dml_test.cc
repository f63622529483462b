// Delete and Update with expressions (no text): the same rows as their text, and the
// expression itself evaluated (on every retry too), never printed and parsed again.
#include <gtest/gtest.h>

#include "lancelet/builder.h"
#include "lancelet/dataset.h"
#include "lancelet/error.h"
#include "support/test_env.h"

namespace lancelet::testing {
namespace {

// id, "my col" (a name that needs quoting), "select" (a keyword): six rows.
RecordBatchPtr OddNames() {
  FixedWidthBuilder<int64_t> id(DataType::Int64());
  BinaryBuilder text(DataType::Utf8());
  FixedWidthBuilder<double> number(DataType::Float64());
  const std::vector<std::string> texts = {"it's", "a", "it's", "b'", "", "c"};
  const std::vector<double> numbers = {0.1, 1e-7, 0.30000000000000004, 0.3, 0.1, 2.5};
  for (int64_t i = 0; i < 6; ++i) {
    id.Append(i);
    text.Append(texts[size_t(i)]);
    number.Append(numbers[size_t(i)]);
  }
  auto schema = std::make_shared<Schema>(std::vector<FieldPtr>{
      Field::Make("id", DataType::Int64()), Field::Make("my col", DataType::Utf8()),
      Field::Make("select", DataType::Float64())});
  return RecordBatch::Make(schema, {id.Finish(), text.Finish(), number.Finish()});
}

std::vector<int64_t> Ids(const DatasetPtr& ds) {
  auto batch = ds->NewScan().Columns({"id"}).ToBatch();
  return std::vector<int64_t>(batch->column(0)->values<int64_t>(),
                              batch->column(0)->values<int64_t>() + batch->num_rows());
}

std::vector<std::string> Texts(const DatasetPtr& ds) {
  auto batch = ds->NewScan().Columns({"my col"}).ToBatch();
  std::vector<std::string> out;
  for (int64_t r = 0; r < batch->num_rows(); ++r) out.push_back(GetScalar(*batch->column(0), r).as_string());
  return out;
}

ExprPtr Eq(const std::string& column, Scalar value) {
  return Expr::Binary(BinaryOp::kEq, Expr::Column(column), Expr::Literal(std::move(value)));
}

class TypedDmlTest : public ::testing::Test {
 protected:
  // Two datasets holding the same rows: one changed through expressions, one through text.
  std::pair<DatasetPtr, DatasetPtr> Twins() {
    ++n_;
    return {Dataset::Write(dir_.Uri("typed" + std::to_string(n_) + ".lance"), {OddNames()}),
            Dataset::Write(dir_.Uri("text" + std::to_string(n_) + ".lance"), {OddNames()})};
  }
  TempDir dir_;
  int n_ = 0;
};

TEST_F(TypedDmlTest, DeleteWithAnExpressionRemovesTheRowsItsTextWould) {
  const std::vector<std::pair<ExprPtr, std::vector<int64_t>>> cases = {
      {Eq("my col", Scalar{DataType::Utf8(), std::string("it's")}), {1, 3, 4, 5}},
      {Eq("select", Scalar{DataType::Float64(), 0.1}), {1, 2, 3, 5}},
      {Eq("select", Scalar{DataType::Float64(), 1e-7}), {0, 2, 3, 4, 5}},
      {Eq("select", Scalar{DataType::Float64(), 0.30000000000000004}), {0, 1, 3, 4, 5}},
      {Expr::Binary(BinaryOp::kAnd, Eq("my col", Scalar{DataType::Utf8(), std::string("")}),
                    Eq("select", Scalar{DataType::Float64(), 0.1})),
       {0, 1, 2, 3, 5}},
  };
  for (const auto& [predicate, kept] : cases) {
    SCOPED_TRACE(ToString(*predicate));
    auto [typed, text] = Twins();
    uint64_t typed_rows = 0, text_rows = 0;
    typed = typed->Delete(predicate, &typed_rows);
    text = text->Delete(ToString(*predicate), &text_rows);
    EXPECT_EQ(Ids(typed), kept);
    EXPECT_EQ(Ids(text), kept);
    EXPECT_EQ(typed_rows, 6 - kept.size());
    EXPECT_EQ(text_rows, typed_rows);
    EXPECT_EQ(typed->version(), 2u);
  }
}

TEST_F(TypedDmlTest, ARetryEvaluatesTheSameExpressionOnTheNewerVersion) {
  auto [base, unused] = Twins();
  // A commit after `base` gives row 5 the value the predicate matches: the delete from
  // `base` conflicts on the predicate's column, re-reads and evaluates it again.
  base->Latest()->Update({{"select", "0.1"}}, "id = 5");
  uint64_t rows = 0;
  auto after = base->Delete(Eq("select", Scalar{DataType::Float64(), 0.1}), &rows);
  EXPECT_EQ(rows, 3u);
  EXPECT_EQ(after->version(), 3u);
  EXPECT_EQ(Ids(after), (std::vector<int64_t>{1, 2, 3}));
}

TEST_F(TypedDmlTest, UpdateWithExpressionsChangesTheRowsItsTextWould) {
  auto [typed, text] = Twins();
  const ExprPtr where = Eq("select", Scalar{DataType::Float64(), 0.1});
  const ExprPtr value = Expr::Call("upper", {Expr::Column("my col")});
  uint64_t typed_rows = 0, text_rows = 0;
  typed = typed->Update({{"my col", value}}, where, &typed_rows);
  text = text->Update({{"my col", ToString(*value)}}, ToString(*where), &text_rows);
  EXPECT_EQ(Texts(typed), (std::vector<std::string>{"IT'S", "a", "it's", "b'", "", "c"}));
  EXPECT_EQ(Texts(text), Texts(typed));
  EXPECT_EQ(typed_rows, 2u);
  EXPECT_EQ(text_rows, 2u);

  // A null predicate updates every row.
  typed = typed->Update({{"my col", Expr::Literal(Scalar{DataType::Utf8(), std::string("x")})}}, nullptr, &typed_rows);
  EXPECT_EQ(typed_rows, 6u);
  EXPECT_EQ(Texts(typed), std::vector<std::string>(6, "x"));
}

TEST_F(TypedDmlTest, TheExpressionIsEvaluatedAsGivenAndItsErrorsPointIntoItsOwnSource) {
  auto [typed, text] = Twins();
  // An expression parsed from a longer text (as SQL's WHERE is from its statement) keeps
  // pointing into that text: an error evaluating it names its position there.
  const std::string statement = "id / 0 = 1";
  const ExprPtr parsed = ParseExpression(statement);
  try {
    typed->Delete(parsed);
    FAIL() << "a division by zero was accepted";
  } catch (const ParseError& e) {
    EXPECT_EQ(e.detail(), "division by zero");
    EXPECT_EQ(e.source(), statement);
    EXPECT_EQ(e.position(), 4);
  }
  try {
    typed->Update({{"id", ParseExpression("id / 0")}}, nullptr);
    FAIL() << "a division by zero was accepted";
  } catch (const ParseError& e) {
    EXPECT_EQ(e.source(), "id / 0");
    EXPECT_EQ(e.position(), 4);
  }
  EXPECT_EQ(typed->Latest()->version(), 1u);  // nothing committed
  try {
    typed->Delete(ExprPtr{});
    FAIL() << "a null predicate was accepted";
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()), "delete needs a predicate (use 'true' to delete every row)");
  }
}

}  // namespace
}  // namespace lancelet::testing
