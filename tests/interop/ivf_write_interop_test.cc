// IVF_FLAT and IVF_PQ indexes built by lancelet (lancelet index create), read by the
// reference at file versions 2.0 and 2.2 (IVF_PQ with 8- and 4-bit codes; l2, cosine and
// dot): it lists them
// with their type and every row
// indexed, its plan for a nearest-neighbour query shows its ANN node over our index, and
// its recall@10 through our index is at least its recall through its own index built
// with the same parameters on the same data, less 0.02. Bad requests (a non-vector
// column, more partitions than rows, sub-vectors not dividing the dimension) are one
// line each and leave the dataset as it was. lancelet's optimize adds a delta segment to
// the reference's index that the reference reads.
#include <cmath>
#include <filesystem>
#include <map>
#include <set>

#include <gtest/gtest.h>

#include "interop/ivf_data.h"

namespace lancelet::testing {
namespace {

constexpr int kDim = 32;
constexpr int64_t kRows = 3000;
constexpr int kQueries = 400;

// Query -> ids, from {"_query":Q,"id":I,...} lines.
std::map<int64_t, std::vector<int64_t>> ParseIds(const std::string& jsonl) {
  std::map<int64_t, std::vector<int64_t>> out;
  for (const auto& line : SplitLines(jsonl)) {
    int64_t q = 0, id = 0;
    EXPECT_EQ(std::sscanf(line.c_str(), "{\"_query\":%ld,\"id\":%ld", &q, &id), 2) << line;
    out[q].push_back(id);
  }
  return out;
}

double Recall(const std::map<int64_t, std::vector<int64_t>>& found,
              const std::map<int64_t, std::vector<int64_t>>& exact) {
  size_t hits = 0, total = 0;
  for (const auto& [q, want] : exact) {
    const std::set<int64_t> ids(want.begin(), want.end());
    total += want.size();
    if (auto it = found.find(q); it != found.end())
      for (int64_t id : it->second) hits += ids.count(id);
  }
  return total ? double(hits) / double(total) : 0;
}

class IvfWriteInterop : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    if (!OracleAvailable()) return;
    tmp_ = new TempDir(TempDir::Use::kLocalScratch);
    data_ = new std::vector<float>(ClusteredVectors(kRows, kDim, 16, 7));
    WriteVectorsIpc(tmp_->Join("in.arrow"), *data_, kDim);
    std::string queries;
    uint64_t state = 3;
    for (int q = 0; q < kQueries; ++q) {
      std::vector<float> v(data_->data() + q * 7 * kDim, data_->data() + (q * 7 + 1) * kDim);
      for (float& x : v) x += 0.5f * IvfNoise(state);
      queries += VectorText(v.data(), kDim) + "\n";
    }
    WriteStringToFile(tmp_->Join("queries.txt"), queries);
    for (const char* version : {"2.0", "2.2"})
      Oracle({"create", Base(version), "--data", tmp_->Join("in.arrow"), "--file-version", version});
  }
  static void TearDownTestSuite() {
    delete tmp_;
    delete data_;
  }
  static std::string Base(const std::string& version) { return tmp_->Join("base" + version + ".lance"); }
  static std::string Copy(const std::string& name, const std::string& version) {
    const std::string ds = tmp_->Join(name + ".lance");
    std::filesystem::copy(Base(version), ds, std::filesystem::copy_options::recursive);
    return ds;
  }
  // The reference's answers to the queries, through its vector index unless exact.
  static std::map<int64_t, std::vector<int64_t>> Theirs(const std::string& ds, const std::vector<std::string>& extra) {
    std::vector<std::string> args{"search", ds, "--column", "emb", "--queries", tmp_->Join("queries.txt"), "--k",
                                  "10", "--columns", "id"};
    args.insert(args.end(), extra.begin(), extra.end());
    return ParseIds(Oracle(args));
  }

  static inline TempDir* tmp_ = nullptr;
  static inline std::vector<float>* data_ = nullptr;
};

TEST_F(IvfWriteInterop, TheReferenceSearchesOurIndexes) {
  REQUIRE_ORACLE();
  struct Case {
    const char* version;
    const char* type;
    const char* metric;
    std::vector<std::string> knobs;  // search: --nprobes, --refine
    const char* bits = "8";          // ivf_pq: 8 bits over 8 sub-vectors, or 4 over 16
    const char* partitions = "8";
  };
  const Case cases[] = {
      {"2.2", "ivf_flat", "l2", {"--nprobes", "2"}},
      {"2.0", "ivf_flat", "cosine", {"--nprobes", "2"}},
      {"2.2", "ivf_pq", "l2", {"--nprobes", "2"}},
      {"2.0", "ivf_pq", "l2", {"--nprobes", "2", "--refine", "5"}},
      {"2.2", "ivf_pq", "cosine", {"--nprobes", "2", "--refine", "5"}},
      {"2.2", "ivf_pq", "l2", {"--nprobes", "2"}, "4"},
      {"2.0", "ivf_pq", "cosine", {"--nprobes", "2", "--refine", "5"}, "4"},
      // Dot PQ codes are the L2-nearest codes of the raw rows (pq_train.h); picked by
      // largest inner product they gave 0.38 here against the reference's own 0.98.
      {"2.2", "ivf_pq", "dot", {"--nprobes", "2", "--refine", "5"}},
      // The reference scores 4-bit codes past a partition's first 200 rows with u8
      // tables, which for dot (entries of either sign) lose most of the order: at 8
      // partitions its recall through any 4-bit dot index is about 0.5 and varies by 0.1
      // from build to build. At 32 partitions (about 94 rows each) it scores them all in
      // float and its recall through ours and its own is about 0.94.
      {"2.0", "ivf_pq", "dot", {"--nprobes", "8", "--refine", "10"}, "4", "32"},
  };
  for (const Case& c : cases) {
    const std::string label = fmt::format("{}{}_{}_{}", c.type, std::string(c.bits) == "4" ? "4" : "", c.metric,
                                          c.version);
    SCOPED_TRACE(label);
    std::vector<std::string> params{"--type", c.type, "--partitions", c.partitions, "--distance", c.metric};
    if (std::string(c.type) == "ivf_pq")
      params.insert(params.end(), {"--sub-vectors", std::string(c.bits) == "4" ? "16" : "8", "--bits", c.bits});
    // Recall varies from build to build with k-means' start (the reference's is unseeded):
    // over 100 queries, IVF_PQ without refine gave 0.61 to 0.65 for six seeds of ours.
    // Over 400 queries, PQ indexes are compared as the mean of three builds on each side.
    const int builds = std::string(c.type) == "ivf_pq" ? 3 : 1;
    std::vector<std::string> ours;
    for (int build = 0; build < builds; ++build) {
      ours.push_back(Copy(fmt::format("ours{}_{}", build, label), c.version));
      std::vector<std::string> create{"index", "create", ours.back(), "emb", "--name", "vec", "--seed",
                                      std::to_string(42 + build)};
      create.insert(create.end(), params.begin(), params.end());
      Lancelet(create);
    }
    std::vector<std::string> theirs;
    for (int build = 0; build < builds; ++build) {
      theirs.push_back(Copy(fmt::format("theirs{}_{}", build, label), c.version));
      std::vector<std::string> oracle_create{"create-index", theirs.back(), "emb", "--name", "vec"};
      oracle_create.insert(oracle_create.end(), params.begin(), params.end());
      Oracle(oracle_create);
    }

    const std::string type = std::string(c.type) == "ivf_pq" ? "IvfPq" : "IvfFlat";
    EXPECT_EQ(Oracle({"indices", ours[0]}),
              fmt::format("{{\"name\":\"vec\",\"type\":\"{}\",\"columns\":[\"emb\"],\"indexed\":{},\"unindexed\":0}}\n",
                          type, kRows));
    const std::string plan = Oracle({"explain-search", ours[0], "--column", "emb", "--vector",
                                     VectorText(data_->data(), kDim), "--distance", c.metric, "--nprobes", "2"});
    EXPECT_NE(plan.find("ANNSubIndex: name=vec"), std::string::npos) << plan;
    EXPECT_NE(plan.find("ANNIvfPartition"), std::string::npos) << plan;

    const auto exact = Theirs(ours[0], {"--distance", c.metric});
    std::vector<std::string> indexed{"--indexed", "--distance", c.metric};
    indexed.insert(indexed.end(), c.knobs.begin(), c.knobs.end());
    double on_ours = 0, on_theirs = 0;
    for (int build = 0; build < builds; ++build) {
      on_ours += Recall(Theirs(ours[build], indexed), exact) / builds;
      on_theirs += Recall(Theirs(theirs[build], indexed), exact) / builds;
    }
    std::printf("[figures] %s %s: the reference's recall@10 through lancelet's index %.3f, through its own %.3f "
                "(mean of %d builds each)\n",
                label.c_str(), fmt::format("{}", fmt::join(c.knobs, " ")).c_str(), on_ours, on_theirs, builds);
    EXPECT_GE(on_ours, on_theirs - 0.02);
    EXPECT_GT(on_ours, 0.3);
  }
}

// The reference's IVF_PQ index, rows appended by the reference, then `lancelet index
// optimize`: a delta segment with the reference's centroids and codebook, which the
// reference counts and searches.
TEST_F(IvfWriteInterop, LanceletOptimizesTheReferencesIndex) {
  REQUIRE_ORACLE();
  const std::string ds = Copy("delta", "2.2");
  Oracle({"create-index", ds, "emb", "--name", "vec", "--type", "ivf_pq", "--partitions", "8", "--sub-vectors", "8"});
  std::vector<float> more(data_->begin(), data_->begin() + 300 * kDim);
  for (float& v : more) v += 0.25f;
  WriteVectorsIpc(tmp_->Join("more.arrow"), more, kDim, kRows);
  Oracle({"append", ds, "--data", tmp_->Join("more.arrow")});
  EXPECT_NE(Lancelet({"index", "optimize", ds}).find("indexed the new fragments"), std::string::npos);
  EXPECT_EQ(Oracle({"indices", ds}),
            fmt::format("{{\"name\":\"vec\",\"type\":\"IvfPq\",\"columns\":[\"emb\"],\"indexed\":{},"
                        "\"unindexed\":0}}\n",
                        kRows + 300));
  for (int64_t i : {7, 123, 299}) {
    const std::string found = Oracle({"search", ds, "--column", "emb", "--vector", VectorText(more.data() + i * kDim, kDim),
                                      "--k", "1", "--columns", "id", "--indexed", "--nprobes", "8", "--refine", "10"});
    EXPECT_EQ(found, fmt::format("{{\"id\":{},\"_distance\":0}}\n", kRows + i));
  }
}

TEST_F(IvfWriteInterop, BadRequestsAreOneLineAndChangeNothing) {
  REQUIRE_ORACLE();
  const std::string ds = Copy("bad", "2.2");
  const std::string before = Oracle({"versions", ds});
  struct Case {
    std::vector<std::string> args;
    std::string message;
  };
  const Case cases[] = {
      {{"id", "--type", "ivf_flat"}, "column 'id' is int64: an IVF index holds vectors, a fixed_size_list<float32, dim>"},
      {{"emb", "--type", "ivf_pq", "--partitions", "4000"},
       "index on 'emb': 4000 partitions but only 3000 vectors to index (use at most 3000 partitions)"},
      {{"emb", "--type", "ivf_pq", "--partitions", "4", "--sub-vectors", "5"},
       "index on 'emb': 5 sub-vectors do not divide the dimension 32"},
  };
  for (const Case& c : cases) {
    std::vector<std::string> args{"index", "create", ds};
    args.insert(args.end(), c.args.begin(), c.args.end());
    const CommandResult r = RunLancelet(args);
    EXPECT_NE(r.exit_code, 0);
    const auto lines = SplitLines(r.err);
    ASSERT_EQ(lines.size(), 1u) << r.err;
    EXPECT_NE(lines[0].find(c.message), std::string::npos) << lines[0];
  }
  EXPECT_EQ(Oracle({"versions", ds}), before);
  EXPECT_EQ(Oracle({"indices", ds}), "");
  EXPECT_FALSE(std::filesystem::exists(ds + "/_indices") && !std::filesystem::is_empty(ds + "/_indices"));
}

}  // namespace
}  // namespace lancelet::testing
