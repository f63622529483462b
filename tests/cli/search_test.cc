// `lancelet search`: the output shape of --vector and --queries, and its one-line errors.
#include <gtest/gtest.h>

#include "support/test_env.h"

namespace lancelet::testing {
namespace {

class SearchCliTest : public ::testing::Test {
 protected:
  void SetUp() override {
    WriteStringToFile(dir_.Join("in.jsonl"),
                      "{\"id\":1,\"name\":\"a\",\"emb\":[1,0,0]}\n"
                      "{\"id\":2,\"name\":\"b\",\"emb\":[0,1,0]}\n"
                      "{\"id\":3,\"name\":\"c\",\"emb\":[0,0,2]}\n"
                      "{\"id\":4,\"name\":\"d\",\"emb\":null}\n");
    Lancelet({"create", ds_, "--from", dir_.Join("in.jsonl"), "--schema",
              "id:int64,name:utf8,emb:fixed_size_list<float32,3>"});
  }
  void ExpectError(const CommandResult& r, const std::string& line) {
    EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
    EXPECT_EQ(r.err, "lancelet: " + line + "\n");
    EXPECT_EQ(r.out, "");
  }
  TempDir dir_;
  std::string ds_ = dir_.Join("v.lance");
};

TEST_F(SearchCliTest, OneVectorGivesTheOtherColumnsAndDistanceNearestFirst) {
  EXPECT_EQ(Lancelet({"search", ds_, "--column", "emb", "--vector", "[1, 0, 0]", "-k", "2", "--format", "csv"}),
            "id,name,_distance\n1,a,0\n2,b,2\n");
  EXPECT_EQ(Lancelet({"search", ds_, "--vector", "[1,0,0]", "--exact", "--where", "id > 1", "--columns", "name",
                      "--format", "jsonl"}),
            "{\"name\":\"b\",\"_distance\":2}\n{\"name\":\"c\",\"_distance\":5}\n");
  EXPECT_EQ(Lancelet({"search", ds_, "--vector", "[1,0,0]", "-k", "1", "--where", "id > 1", "--postfilter",
                      "--format", "csv"}),
            "id,name,_distance\n");
  EXPECT_EQ(Lancelet({"search", ds_, "--vector", "[0,0,1]", "--distance", "dot", "--format", "csv"}),
            "id,name,_distance\n3,c,-1\n1,a,1\n2,b,1\n");
}

TEST_F(SearchCliTest, QueriesFromAFileLeadEachRowWithTheirLine) {
  WriteStringToFile(dir_.Join("q.txt"), "[1, 0, 0]\n\n[0, 0, 1]\n");
  EXPECT_EQ(Lancelet({"search", ds_, "--queries", dir_.Join("q.txt"), "-k", "2", "--distance", "cosine",
                      "--format", "jsonl"}),
            "{\"_query\":0,\"id\":1,\"name\":\"a\",\"_distance\":0}\n"
            "{\"_query\":0,\"id\":2,\"name\":\"b\",\"_distance\":1}\n"
            "{\"_query\":1,\"id\":3,\"name\":\"c\",\"_distance\":0}\n"
            "{\"_query\":1,\"id\":1,\"name\":\"a\",\"_distance\":1}\n");
}

// More queries than the CLI answers at a time (256, on several threads): rows still
// come out in line order, each query's own.
TEST_F(SearchCliTest, ManyQueriesComeOutInLineOrder) {
  std::string queries, want = "_query,id,_distance\n";
  for (int i = 0; i < 600; ++i) {
    queries += i % 3 == 2 ? "[0, 0, 1]\n" : i % 3 == 1 ? "[0, 1, 0]\n" : "[1, 0, 0]\n";
    want += std::to_string(i) + (i % 3 == 2 ? ",3,1\n" : i % 3 == 1 ? ",2,0\n" : ",1,0\n");
  }
  WriteStringToFile(dir_.Join("many.txt"), queries);
  EXPECT_EQ(Lancelet({"search", ds_, "--queries", dir_.Join("many.txt"), "-k", "1", "--columns", "id", "--format",
                      "csv"}),
            want);
}

// `index create --type ivf_flat|ivf_pq` with its parameters, shown by `index list`; the
// NULL vector is not indexed, and search through the index answers as exact search.
TEST_F(SearchCliTest, VectorIndexesAreCreatedListedAndSearched) {
  EXPECT_EQ(Lancelet({"index", "create", ds_, "emb", "--type", "ivf_flat", "--partitions", "2", "--distance", "cosine",
                      "--name", "flat"}),
            "created index flat on emb of " + ds_ + "; now version 2\n");
  EXPECT_EQ(Lancelet({"index", "list", ds_}),
            "flat\tIVF_FLAT (partitions=2, distance=cosine)\temb\tbuilt from version 1\t1 segments\t"
            "1 fragments indexed, 0 not\t0 stale rows\n");
  EXPECT_NE(Lancelet({"index", "stats", ds_, "flat"}).find(", 3 rows, "), std::string::npos);
  EXPECT_EQ(Lancelet({"search", ds_, "--vector", "[1, 0, 0]", "-k", "2", "--distance", "cosine", "--nprobes", "2",
                      "--format", "csv"}),
            "id,name,_distance\n1,a,0\n2,b,1\n");
  ExpectError(RunLancelet({"index", "create", ds_, "emb", "--type", "ivf_pq", "--partitions", "2", "--sub-vectors",
                           "2"}),
              "index on 'emb': 2 sub-vectors do not divide the dimension 3");
  ExpectError(RunLancelet({"index", "create", ds_, "emb", "--type", "ivf_pq", "--partitions", "2"}),
              "index on 'emb': IVF_PQ trains 256 codes per sub-vector and needs at least 256 vectors, not 3");
  ExpectError(RunLancelet({"index", "create", ds_, "emb", "--type", "ivf_hnsw"}),
              "--type 'ivf_hnsw': expected btree, bitmap, ivf_flat or ivf_pq");
}

TEST_F(SearchCliTest, BadInputIsOneLine) {
  ExpectError(RunLancelet({"search", ds_, "--vector", "[1, x, 0]"}),
              "--vector: 'x' is not a number (expected a JSON array of numbers)");
  ExpectError(RunLancelet({"search", ds_, "--vector", "[1, 0]"}),
              "the query vector has 2 values but column 'emb' (fixed_size_list<float32,3>) holds 3-dimensional vectors");
  ExpectError(RunLancelet({"search", ds_, "--vector", "[1, 0, 0]", "--column", "name"}),
              "column 'name' is not a vector column: its type is utf8 (a vector column is a fixed_size_list of "
              "float16, float32 or float64, or of uint8 for hamming)");
  ExpectError(RunLancelet({"search", ds_, "--vector", "[1, 0, 0]", "--distance", "manhattan"}),
              "unknown distance type 'manhattan' (expected l2, cosine, dot or hamming)");
  ExpectError(RunLancelet({"search", ds_, "--vector", "[1, 0, 0]", "-k", "0"}),
              "-k '0': expected a whole number from 1 to 9223372036854775807");
  ExpectError(RunLancelet({"search", ds_}), "search: give --vector or --queries");
  WriteStringToFile(dir_.Join("q.txt"), "[1, 0, 0]\n[0, 1]\n");
  ExpectError(RunLancelet({"search", ds_, "--queries", dir_.Join("q.txt")}),
              "query on line 2: the query vector has 2 values but column 'emb' (fixed_size_list<float32,3>) holds "
              "3-dimensional vectors");
}

}  // namespace
}  // namespace lancelet::testing
