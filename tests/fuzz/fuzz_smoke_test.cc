// Runs every libFuzzer entry point (fuzz/*_fuzz.cc) briefly: over a seed corpus of real
// files (written by lancelet and, when installed, by the reference) and a few thousand
// deterministic mutations of it (bit flips, truncations, length-field corruptions, cut
// ranges). An entry point may only throw lancelet::Error, which it catches itself; any
// other exception fails the test, and a crash or sanitizer report aborts it.
//
// Set LANCELET_FUZZ_CORPUS_DIR to also write the seeds there, one folder per target, as
// the starting corpus for a longer libFuzzer run (see fuzz/CMakeLists.txt).
//
// It also replays the corpus the libFuzzer runs kept under fuzz/corpus/<target>/, and
// checks that a corrupted page raises a Corrupt error naming the file, column and page.
#define LANCELET_FUZZ_NO_MAIN 1
#include "../../fuzz/compression_fuzz.cc"
#include "../../fuzz/deletion_file_fuzz.cc"
#include "../../fuzz/index_fuzz.cc"
#include "../../fuzz/ipc_fuzz.cc"
#include "../../fuzz/lance_file_fuzz.cc"
#include "../../fuzz/manifest_fuzz.cc"
#include "../../fuzz/v20_page_fuzz.cc"
#include "../../fuzz/v21_fullzip_fuzz.cc"
#include "../../fuzz/v21_layout_fuzz.cc"
#include "../../fuzz/v21_miniblock_fuzz.cc"

#include <gtest/gtest.h>
#include <google/protobuf/stubs/logging.h>
#include <zstd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <random>

#include "support/test_env.h"
#include "table/manifest_store.h"

namespace lancelet::fuzz {
namespace {

namespace fs = std::filesystem;
using lancelet::testing::OracleAvailable;
using lancelet::testing::ReadFileToString;
using lancelet::testing::RunLancelet;
using lancelet::testing::RunOracle;
using lancelet::testing::TempDir;
using lancelet::testing::WriteStringToFile;

using EntryPoint = int (*)(const uint8_t*, size_t);

std::vector<std::string> FilesUnder(const std::string& dir, const std::string& extension) {
  std::vector<std::string> out;
  if (!fs::exists(dir)) return out;
  for (const auto& e : fs::recursive_directory_iterator(dir))
    if (e.is_regular_file() && e.path().extension() == extension) out.push_back(e.path().string());
  std::sort(out.begin(), out.end());
  return out;
}

// Real datasets the seeds come from, made once for the whole test program.
struct Corpus {
  std::vector<std::string> v20_files, v21_files;  // data files (.lance) of 2.0 / 2.1 and 2.2
  std::vector<std::string> manifests, deletion_files, arrow_files;
  std::vector<std::string> row_id_sequences;      // inline row ids of a stable-row-id table
  std::vector<std::string> index_inputs;          // index segments as index_fuzz.cc inputs
  std::vector<std::string> ours_v20, ours_v21;    // small lancelet datasets (for targeted corruptions)
  bool with_reference = false;
};

void Check(const lancelet::testing::CommandResult& r, const std::string& what) {
  if (r.exit_code != 0) throw std::runtime_error(what + " failed: " + r.err);
}

// lancelet writes a small table of mixed types at each version (and deletes rows, so
// there are deletion files of both kinds); the reference, when installed, writes the
// census columns at each version and a table with stable row ids.
void WriteSeedDatasets(const TempDir* dir) {
  std::string jsonl;
  for (int i = 0; i < 6000; ++i) {
    jsonl += fmt::format(
        "{{\"id\":{},\"name\":{},\"v\":[{},1.5,-2,0],\"l\":{},\"s\":{},\"f\":{},\"b\":{}}}\n", i,
        i % 10 == 3 ? "null" : fmt::format("\"n{}\"", i % 37), i * 0.5,
        i % 13 == 0 ? "null" : (i % 5 == 0 ? "[]" : fmt::format("[{},{}]", i % 7, -i)),
        i % 17 == 0 ? "{\"a\":null,\"b\":\"x\"}" : fmt::format("{{\"a\":{},\"b\":\"y{}\"}}", i, i % 4), i * 1.25,
        i % 3 == 0 ? "true" : "false");
  }
  const std::string input = dir->Join("in.jsonl"), small_input = dir->Join("small.jsonl");
  WriteStringToFile(input, jsonl);
  WriteStringToFile(small_input, jsonl.substr(0, jsonl.find("{\"id\":300,")));
  const std::string schema = "id:int64,name:utf8,v:fixed_size_list<float32,4>,l:list<int32>,s:struct<a:int32,b:utf8>,"
                             "f:float64,b:bool";
  for (std::string version : {"2.0", "2.1", "2.2"}) {
    const std::string ds = dir->Join("ours_" + version.substr(2) + ".lance");
    Check(RunLancelet({"create", ds, "--from", input, "--schema", schema, "--file-version", version}),
          "lancelet create");
    // Few deletions make an Arrow-array deletion file, 5000 or more a bitmap.
    Check(RunLancelet({"delete", ds, "--where", version == "2.0" ? "id < 10" : "id >= 100 AND id < 5200"}),
          "lancelet delete");
    // Index seeds: a BTree of two pages over numbers, one over strings with nulls, a Bitmap.
    for (std::vector<std::string> spec : {std::vector<std::string>{"id"}, {"name"}, {"name", "--type", "bitmap"}}) {
      std::vector<std::string> args = {"index", "create", ds, spec[0], "--name", spec[0] + std::to_string(spec.size())};
      args.insert(args.end(), spec.begin() + 1, spec.end());
      Check(RunLancelet(args), "lancelet index create");
    }
    const std::string small = dir->Join("small_" + version.substr(2) + ".lance");
    Check(RunLancelet({"create", small, "--from", small_input, "--schema", schema, "--file-version", version}),
          "lancelet create");
    auto arrow = RunLancelet({"scan", small, "--format", "arrow"});
    Check(arrow, "lancelet scan --format arrow");
    WriteStringToFile(dir->Join("small_" + version.substr(2) + ".arrow"), arrow.out);
  }
  if (OracleAvailable()) {
    for (std::string version : {"2.0", "2.1", "2.2"}) {
      const std::string tag = version.substr(2);
      for (auto [name, cases, rows] : {std::tuple{"census", "numeric,edges,strings,vectors,lists,structs,compression", "200"},
                                       std::tuple{"big", "big_strings", "4"}}) {
        const std::string arrow = dir->Join(std::string(name) + tag + ".arrow");
        std::vector<std::string> gen = {"gen-census", arrow, "--case", cases, "--rows", rows};
        if (version == "2.0") gen.push_back("--no-null-structs");
        Check(RunOracle(gen), "oracle gen-census");
        Check(RunOracle({"create", dir->Join(std::string("ref_") + name + tag + ".lance"), "--data", arrow,
                         "--file-version", version}),
              "oracle create");
      }
    }
    // Every type the reference's generator knows, as a small Arrow file (IPC seeds).
    Check(RunOracle({"gen", dir->Join("types.arrow"), "--rows", "100", "--seed", "3"}), "oracle gen");
    const std::string ids = dir->Join("ref_ids.lance");
    Check(RunOracle({"create", ids, "--data", dir->Join("census2.arrow"), "--stable-row-ids"}), "oracle create");
    Check(RunOracle({"delete", ids, "--where", "i64_seq % 3 = 0"}), "oracle delete");
    Check(RunOracle({"create-index", ids, "i64_seq"}), "oracle create-index");
    Check(RunOracle({"create-index", dir->Join("ref_census2.lance"), "i64_seq", "--type", "bitmap"}),
          "oracle create-index");
  }
}

// Writing the seed datasets takes seconds, and ctest runs every test in its own process,
// so they are written once per build of the lancelet binary under the build tree; a
// process that finds them complete reuses them. They appear by an atomic rename, so
// tests running in parallel never see half of them.
std::string SeedDatasetRoot() {
  const auto stamp = fs::last_write_time(lancelet::testing::LanceletBinary()).time_since_epoch().count();
  const std::string prefix = "fuzz-seed-datasets-";
  const std::string root = fmt::format("{}/{}{}{}", LANCELET_BINARY_DIR, prefix, stamp, OracleAvailable() ? "-ref" : "");
  if (fs::exists(root)) return root;
  auto scratch = std::make_unique<TempDir>();
  WriteSeedDatasets(scratch.get());
  std::error_code ec;
  fs::rename(scratch->path(), root, ec);  // fails harmlessly when a concurrent test won
  for (const auto& e : fs::directory_iterator(LANCELET_BINARY_DIR))  // earlier builds' seeds
    if (e.path().filename().string().starts_with(prefix) && e.path().string() != root) fs::remove_all(e.path(), ec);
  return root;
}

const Corpus& GetCorpus() {
  static Corpus* corpus = [] {
    auto* c = new Corpus();
    const std::string root = SeedDatasetRoot();
    c->with_reference = root.ends_with("-ref");
    for (std::string tag : {"0", "1", "2"})
      (tag == "0" ? c->ours_v20 : c->ours_v21).push_back(root + "/small_" + tag + ".lance");
    for (const auto& file : FilesUnder(root, ".lance")) {
      const std::string bytes = ReadFileToString(file);
      if (bytes.size() < 40 || file.find("/data/") == std::string::npos) continue;
      const uint16_t minor = uint16_t(uint8_t(bytes[bytes.size() - 6]));
      (minor == 3 || minor == 0 ? c->v20_files : c->v21_files).push_back(file);
    }
    c->manifests = FilesUnder(root, ".manifest");
    c->deletion_files = FilesUnder(root, ".arrow");
    for (const auto& f : FilesUnder(root, ".bin")) c->deletion_files.push_back(f);
    std::erase_if(c->deletion_files, [](const std::string& f) { return f.find("/_deletions/") == std::string::npos; });
    c->arrow_files = FilesUnder(root, ".arrow");
    std::erase_if(c->arrow_files, [](const std::string& f) { return f.find("/_deletions/") != std::string::npos; });
    for (const auto& lookup : FilesUnder(root, ".lance")) {
      const fs::path file(lookup);
      if (file.filename() == index::kBitmapLookupFile) c->index_inputs.push_back("\1" + ReadFileToString(lookup));
      if (file.filename() != index::kBTreeLookupFile) continue;
      std::string input(1, '\0'), bytes = ReadFileToString(lookup);
      PutLE<uint32_t>(input, uint32_t(bytes.size()));
      c->index_inputs.push_back(input + bytes + ReadFileToString((file.parent_path() / index::kBTreeDataFile).string()));
    }
    auto store = io::MakeLocalStore();
    for (const auto& m : c->manifests) {
      auto manifest = table::ReadManifest(*store, m);
      for (const auto& fragment : manifest.fragments())
        if (fragment.has_inline_row_ids()) c->row_id_sequences.push_back(fragment.inline_row_ids());
    }
    return c;
  }();
  return *corpus;
}

// ------------------------------------------------------------------------- mutations

// Deterministic mutations of one seed: the kinds of damage a reader meets on disk.
std::string Mutate(const std::string& seed, std::mt19937_64& rng) {
  std::string s = seed;
  if (s.empty()) return std::string(1, char(rng()));
  const auto pos = [&] { return size_t(rng() % s.size()); };
  switch (rng() % 6) {
    case 0:  // flip 1-4 bits
      for (int k = int(rng() % 4); k >= 0; --k) s[pos()] ^= char(1u << (rng() % 8));
      break;
    case 1:  // truncate
      s.resize(pos());
      break;
    case 2: {  // overwrite a (possibly unaligned) 1/2/4/8-byte length-like field
      static constexpr uint64_t kInteresting[] = {0, 1, 2, 7, 8, 255, 256, 4095, 4096, 65535, 65536, 0x7fffffff,
                                                  0x80000000, 0xffffffff, uint64_t(1) << 32, uint64_t(1) << 62,
                                                  ~uint64_t(0), ~uint64_t(0) - 1};
      const size_t width = size_t(1) << (rng() % 4);
      uint64_t v = kInteresting[rng() % std::size(kInteresting)];
      if (rng() % 4 == 0) v = s.size() + (rng() % 16) - 8;
      const size_t at = pos();
      for (size_t b = 0; b < width && at + b < s.size(); ++b) s[at + b] = char(v >> (8 * b));
      break;
    }
    case 3: {  // cut a range out
      const size_t at = pos(), n = 1 + rng() % 64;
      s.erase(at, n);
      break;
    }
    case 4: {  // duplicate a range (shifts everything after it)
      const size_t at = pos(), n = 1 + rng() % 32;
      s.insert(at, s.substr(at, n));
      break;
    }
    default:  // small arithmetic on one byte
      s[pos()] += char(int(rng() % 9) - 4);
  }
  return s;
}

struct RunStats {
  size_t runs = 0;
  double seconds = 0;
};

// Runs the entry point on every seed and `mutations` mutants (spread over the seeds).
RunStats Exercise(const std::string& target, EntryPoint entry, const std::vector<std::string>& seeds,
                  size_t mutations) {
  EXPECT_FALSE(seeds.empty()) << target << ": no seeds";
  if (const char* out = std::getenv("LANCELET_FUZZ_CORPUS_DIR")) {
    const std::string folder = std::string(out) + "/" + target;
    fs::create_directories(folder);
    for (size_t i = 0; i < seeds.size(); ++i) WriteStringToFile(folder + "/seed_" + std::to_string(i), seeds[i]);
  }
  const auto start = std::chrono::steady_clock::now();
  RunStats stats;
  std::mt19937_64 rng(std::hash<std::string>{}(target) & 0xffffffff);
  auto run = [&](const std::string& input, const std::string& what) {
    try {
      entry(reinterpret_cast<const uint8_t*>(input.data()), input.size());
    } catch (const std::exception& e) {
      ADD_FAILURE() << target << ": " << what << " (" << input.size() << " bytes) threw a non-lancelet exception: "
                    << e.what();
      // LANCELET_FUZZ_FAILURE_DIR keeps the input, to replay with the libFuzzer binary.
      if (const char* keep = std::getenv("LANCELET_FUZZ_FAILURE_DIR"))
        WriteStringToFile(std::string(keep) + "/" + target + "_" + std::to_string(stats.runs), input);
    }
    ++stats.runs;
  };
  for (size_t i = 0; i < seeds.size(); ++i) run(seeds[i], "seed " + std::to_string(i));
  for (size_t m = 0; m < mutations && !seeds.empty(); ++m) {
    const size_t i = m % seeds.size();
    std::string input = Mutate(seeds[i], rng);
    if (rng() % 3 == 0) input = Mutate(input, rng);  // sometimes two mutations
    run(input, "mutation " + std::to_string(m) + " of seed " + std::to_string(i));
  }
  stats.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::cout << target << ": " << stats.runs << " runs over " << seeds.size() << " seeds in " << stats.seconds
            << " s\n";
  return stats;
}

std::vector<std::string> ReadAll(const std::vector<std::string>& files, size_t max_bytes = 1 << 20) {
  std::vector<std::string> out;
  for (const auto& f : files) {
    std::string bytes = ReadFileToString(f);
    if (bytes.size() <= max_bytes) out.push_back(std::move(bytes));
  }
  return out;
}

// Field-harness seeds of every field of the given data files, at most `max_bytes` each.
std::vector<std::string> HarnessSeeds(const std::vector<std::string>& files, size_t max_bytes) {
  std::vector<std::string> out;
  for (const auto& bytes : ReadAll(files, 8 << 20))
    for (auto& seed : FieldHarnessSeeds(bytes))
      if (seed.size() <= max_bytes) out.push_back(std::move(seed));
  return out;
}

// Only the seeds whose every page has the layout the target accepts.
std::vector<std::string> WithLayout(std::vector<std::string> seeds, bool mini_block) {
  std::erase_if(seeds, [&](const std::string& seed) {
    InputReader in(reinterpret_cast<const uint8_t*>(seed.data()), seed.size());
    in.Get<uint8_t>();
    in.Bytes(in.Get<uint16_t>());
    const uint8_t n = in.Get<uint8_t>();
    for (uint8_t c = 0; c < n; ++c) {
      lance::file::v2::ColumnMetadata meta;
      meta.ParseFromString(std::string(in.Bytes(in.Get<uint32_t>())));
      for (const auto& page : meta.pages()) {
        lance::encodings21::PageLayout layout;
        if (!PageLayoutOf(page, &layout)) return true;
        if (mini_block ? !layout.has_mini_block_layout() : !layout.has_full_zip_layout()) return true;
      }
    }
    return false;
  });
  return seeds;
}

// ------------------------------------------------------------------ compression seeds

std::string CompressionInput(uint8_t op, uint16_t n, const std::string& params, const std::string& data) {
  std::string out;
  PutLE<uint8_t>(out, op);
  PutLE<uint16_t>(out, n);
  PutLE<uint32_t>(out, uint32_t(params.size()));
  return out + params + data;
}

uint64_t LoadLE(const std::string& s, size_t pos, size_t width) {
  if (pos + width > s.size()) throw std::runtime_error("short chunk");
  uint64_t v = 0;
  for (size_t k = 0; k < width; ++k) v |= uint64_t(uint8_t(s[pos + k])) << (8 * k);
  return v;
}

// Seeds for the compression target from the mini-block pages of real files: the first
// chunk's levels and values (split as the census documents the chunk layout), the
// dictionary, the FSST symbol table; plus synthetic inputs for the raw codecs.
std::vector<std::string> CompressionSeeds(const std::vector<std::string>& v21_files) {
  std::vector<std::string> seeds;
  for (const auto& bytes : ReadAll(v21_files, 8 << 20)) {
    MemoryStore store;
    store.Add("f.lance", bytes);
    const size_t footer = bytes.size() - 40;
    const uint64_t offsets = LoadLE(bytes, footer + 8, 8);
    const uint32_t columns = uint32_t(LoadLE(bytes, footer + 28, 4));
    const bool v22 = uint8_t(bytes[bytes.size() - 6]) == 2;
    for (uint32_t c = 0; c < columns; ++c) {
      lance::file::v2::ColumnMetadata meta;
      meta.ParseFromString(bytes.substr(LoadLE(bytes, offsets + c * 16, 8), LoadLE(bytes, offsets + c * 16 + 8, 8)));
      for (const auto& page : meta.pages()) {
        lance::encodings21::PageLayout layout;
        if (!PageLayoutOf(page, &layout) || !layout.has_mini_block_layout() || page.buffer_offsets_size() < 2) continue;
        const auto& mb = layout.mini_block_layout();
        const auto buffer = [&](int b) { return bytes.substr(page.buffer_offsets(b), page.buffer_sizes(b)); };
        try {
          if (mb.has_dictionary() && page.buffer_offsets_size() > 2)
            seeds.push_back(CompressionInput(kDictionary, uint16_t(mb.num_dictionary_items()),
                                             mb.dictionary().SerializeAsString(), buffer(2)));
          if (mb.value_compression().has_fsst())
            seeds.push_back(CompressionInput(kFsst, 0, "", mb.value_compression().fsst().symbol_table()));
          // Chunk 0: header, then rep, def and value buffers, each padded to 8.
          const std::string chunk_meta = buffer(0), chunks = buffer(1);
          const uint64_t word = LoadLE(chunk_meta, 0, mb.has_large_chunk() ? 4 : 2);
          const uint64_t size = ((word >> 4) + 1) * 8;
          uint64_t values = (word & 15) ? uint64_t(1) << (word & 15) : page.length();
          const std::string chunk = chunks.substr(0, size);
          size_t pos = 0;
          const uint64_t levels = LoadLE(chunk, pos, 2);
          pos += 2;
          const uint64_t rep_size = mb.has_rep_compression() ? LoadLE(chunk, pos, 2) : 0;
          pos += mb.has_rep_compression() ? 2 : 0;
          const uint64_t def_size = mb.has_def_compression() ? LoadLE(chunk, pos, 2) : 0;
          pos += mb.has_def_compression() ? 2 : 0;
          const size_t width = v22 ? 4 : 2;
          std::vector<uint64_t> sizes;
          for (uint64_t b = 0; b < format::v21::ChunkBufferCount(mb.value_compression()); ++b, pos += width)
            sizes.push_back(LoadLE(chunk, pos, width));
          pos = (pos + 7) / 8 * 8;
          const auto take = [&](uint64_t n) {
            std::string out = chunk.substr(pos, n);
            pos = (pos + n + 7) / 8 * 8;
            return out;
          };
          if (levels > 0) values = std::min(values, levels);
          if (mb.has_rep_compression())
            seeds.push_back(CompressionInput(kLevels, uint16_t(levels), mb.rep_compression().SerializeAsString(),
                                             take(rep_size)));
          if (mb.has_def_compression())
            seeds.push_back(CompressionInput(kLevels, uint16_t(levels), mb.def_compression().SerializeAsString(),
                                             take(def_size)));
          std::string data;
          for (uint64_t s : sizes) {
            PutLE<uint32_t>(data, uint32_t(s));
            data += take(s);
          }
          seeds.push_back(CompressionInput(kChunk, uint16_t(values), mb.value_compression().SerializeAsString(), data));
        } catch (const std::exception&) {
          // An unusual chunk: no seed from it.
        }
      }
    }
  }
  // The raw codecs, with well-formed data.
  std::mt19937 rng(7);
  std::string packed(4 + 5 * 128, '\0');
  packed[0] = 5;
  for (size_t i = 4; i < packed.size(); ++i) packed[i] = char(rng());
  seeds.push_back(CompressionInput(kBitpacking, 1000, std::string("\0\2\5", 3), packed));   // inline, 32-bit
  seeds.push_back(CompressionInput(kBitpacking, 1024, std::string("\1\1\5", 3), packed.substr(4)));  // out of line
  std::string rle;
  PutLE<uint64_t>(rle, 8);
  PutLE<uint32_t>(rle, 7);
  PutLE<uint32_t>(rle, 9);
  rle += std::string("\x03\x05", 2);
  seeds.push_back(CompressionInput(kRle, 8, std::string("\0\2\0", 3), rle));
  seeds.push_back(CompressionInput(kByteStreamSplit, 16, std::string("\0\2", 2), packed.substr(4, 64)));
  const std::string text = "some text that compresses, some text that compresses, some text";
  std::string frame(ZSTD_compressBound(text.size()), '\0');
  frame.resize(ZSTD_compress(frame.data(), frame.size(), text.data(), text.size(), 1));
  std::string general;
  PutLE<uint64_t>(general, text.size());
  seeds.push_back(CompressionInput(kGeneral, 0, std::string("\0", 1), general + frame));
  seeds.push_back(CompressionInput(kV20Buffer, 0, std::string("\0", 1), general + frame));
  return seeds;
}

// ------------------------------------------------------------------------------ tests

class FuzzSmokeTest : public ::testing::Test {
 protected:
  // Mutated protobufs make libprotobuf log every parse failure; the reader reports them.
  static void SetUpTestSuite() { google::protobuf::SetLogHandler(nullptr); }

  const Corpus& corpus() {
    const Corpus& c = GetCorpus();
    if (!c.with_reference) std::cout << "note: the reference is not installed; seeds come from lancelet only\n";
    return c;
  }
};

TEST_F(FuzzSmokeTest, V20Pages) {
  Exercise("v20_page", FuzzV20Page, HarnessSeeds(corpus().v20_files, 64 << 10), 3000);
}

TEST_F(FuzzSmokeTest, V21MiniBlock) {
  Exercise("v21_miniblock", FuzzV21MiniBlock, WithLayout(HarnessSeeds(corpus().v21_files, 64 << 10), true), 3000);
}

TEST_F(FuzzSmokeTest, V21FullZip) {
  Exercise("v21_fullzip", FuzzV21FullZip, WithLayout(HarnessSeeds(corpus().v21_files, 100 << 10), false), 1000);
}

TEST_F(FuzzSmokeTest, V21AnyLayout) {
  Exercise("v21_layout", FuzzV21Layout, HarnessSeeds(corpus().v21_files, 64 << 10), 2000);
}

TEST_F(FuzzSmokeTest, Compression) {
  Exercise("compression", FuzzCompression, CompressionSeeds(corpus().v21_files), 4000);
}

// Seeds must read cleanly, or their mutations test nothing.
void ExpectReadsCleanly(const std::vector<std::string>& files) {
  for (const auto& bytes : files) {
    MemoryStore store;
    store.Add("seed.lance", bytes);
    auto reader = format::LanceFileReader::Open(store, "seed.lance");
    for (size_t f = 0; f < reader->schema().fields().size(); ++f) reader->ReadField(f, 0, reader->num_rows(f));
  }
}

TEST_F(FuzzSmokeTest, LanceFileContainer) {
  const auto v20 = ReadAll(corpus().v20_files, 256 << 10), v21 = ReadAll(corpus().v21_files, 256 << 10);
  ExpectReadsCleanly(v20);
  ExpectReadsCleanly(v21);
  Exercise("lance_file", FuzzLanceFile, v20, 400);
  Exercise("lance_file_v21", FuzzLanceFile, v21, 400);
}

TEST_F(FuzzSmokeTest, Manifest) { Exercise("manifest", FuzzManifest, ReadAll(corpus().manifests), 3000); }

TEST_F(FuzzSmokeTest, DeletionFilesAndRowIds) {
  std::vector<std::string> seeds;
  for (const auto& f : corpus().deletion_files)
    seeds.push_back(std::string(1, f.ends_with(".bin") ? '\1' : '\0') + ReadFileToString(f));
  for (const auto& ids : corpus().row_id_sequences) seeds.push_back("\2" + ids);
  Exercise("deletion_file", FuzzDeletionFile, seeds, 3000);
}

TEST_F(FuzzSmokeTest, ArrowIpc) { Exercise("ipc", FuzzIpc, ReadAll(corpus().arrow_files, 160 << 10), 1500); }

TEST_F(FuzzSmokeTest, IndexFiles) {
  std::vector<std::string> seeds = corpus().index_inputs;
  std::erase_if(seeds, [](const std::string& s) { return s.size() > (256 << 10); });
  // Seeds must search cleanly, or their mutations test nothing.
  for (const auto& seed : seeds) SearchIndexFiles(reinterpret_cast<const uint8_t*>(seed.data()), seed.size());
  Exercise("index", FuzzIndex, seeds, 1500);
}

// ------------------------------------------------------------------ kept corpus replay

// The corpus the libFuzzer runs grew (fuzz/corpus/<target>/, docs/fuzzing.md): every
// file is fed to its target's entry point once. A missing or empty folder fails.
void ReplayCorpus(const std::string& target, EntryPoint entry) {
  const fs::path dir = fs::path(LANCELET_SOURCE_DIR) / "fuzz" / "corpus" / target;
  ASSERT_TRUE(fs::is_directory(dir)) << dir << " is missing";
  std::vector<std::string> files;
  for (const auto& e : fs::directory_iterator(dir))
    if (e.is_regular_file()) files.push_back(e.path().string());
  ASSERT_FALSE(files.empty()) << dir << " is empty";
  std::sort(files.begin(), files.end());
  const auto start = std::chrono::steady_clock::now();
  for (const auto& file : files) {
    const std::string input = ReadFileToString(file);
    try {
      entry(reinterpret_cast<const uint8_t*>(input.data()), input.size());
    } catch (const std::exception& e) {
      ADD_FAILURE() << file << " threw a non-lancelet exception: " << e.what();
    }
  }
  std::cout << target << ": replayed " << files.size() << " corpus files in "
            << std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() << " s\n";
}

struct Target {
  const char* name;
  EntryPoint entry;
};

class FuzzCorpusReplay : public FuzzSmokeTest, public ::testing::WithParamInterface<Target> {};

TEST_P(FuzzCorpusReplay, EveryInputIsHandled) { ReplayCorpus(GetParam().name, GetParam().entry); }

INSTANTIATE_TEST_SUITE_P(
    Targets, FuzzCorpusReplay,
    ::testing::Values(Target{"compression", FuzzCompression}, Target{"deletion_file", FuzzDeletionFile},
                      Target{"index", FuzzIndex}, Target{"ipc", FuzzIpc}, Target{"lance_file", FuzzLanceFile}, Target{"manifest", FuzzManifest},
                      Target{"v20_page", FuzzV20Page}, Target{"v21_fullzip", FuzzV21FullZip},
                      Target{"v21_layout", FuzzV21Layout}, Target{"v21_miniblock", FuzzV21MiniBlock}),
    [](const ::testing::TestParamInfo<Target>& info) { return std::string(info.param.name); });

// ---------------------------------------------------------------- libFuzzer findings

std::string FromHex(const std::string& hex) {
  std::string out;
  for (size_t i = 0; i + 1 < hex.size(); i += 2) out.push_back(char(std::stoi(hex.substr(i, 2), nullptr, 16)));
  return out;
}

// fuzz_v21_miniblock: a bool mini-block page (definition levels, no repetition) whose
// chunk 0 holds 200 values but decodes only 199 definition levels; the read copied the
// levels of all 200 past the end of the decoded ones (heap-buffer-overflow).
TEST_F(FuzzSmokeTest, MiniBlockChunkWithFewerDefinitionLevelsThanValuesIsCorrupt) {
  const std::string input = FromHex(
      "020400626f6f6c01820000000a2912270a250a1f2f6c616e63652e656e636f64696e67732e436f6c756d6e456e636f64"
      "696e6712020a0012550a020004120304a80118c801224712450a430a1d2f6c616e63652e656e636f64696e677332312e"
      "506167654c61796f757412220a20120e420c0a040a02081012040a0208081a040a020801320103380148c80150014001"
      "0000c7007d00190000004e00000000000000012900000000000000000001000000010000000100000001000000010000"
      "000126000000010000000100000001000000010000200100000001000000010000000100000001000000010000000100"
      "39a43b42f4356cc8cd83edbce3f18e4626399d3b0c931d42fcdee83c67b9e23cb01781c8cf761ac7174815c00a86aec3"
      "0300000001000000a87b3fc373b053c01b4362bfd0988ac8d91113be634f793ad3e945c534ac00190000004e0000fefe"
      "fe14642da0350491c2d1d148211e82c470320402040507000014fefefefefefefe");
  auto error = lancelet::testing::ThrownError([&] {
    DecodeFieldHarness(reinterpret_cast<const uint8_t*>(input.data()), input.size(), /*v20=*/false,
                       LayoutFilter::kMiniBlock);
  });
  ASSERT_TRUE(error);
  EXPECT_EQ(error->kind(), ErrorKind::kCorrupt);
  EXPECT_STREQ(error->what(),
               "file fuzz.lance, field 'f', column 0, page 0, chunk 0: 199 definition levels for 200 values");
}

// --------------------------------------------------------------- targeted corruptions

// Overwrites buffer `buffer` of the first page of file column `column` with 0xff bytes,
// then reads every field; the error must be Corrupt and name the file, column and page.
void ExpectCorruptPageError(const std::string& original, uint32_t column, int buffer, const std::string& dir) {
  std::string bytes = ReadFileToString(original);
  const size_t footer = bytes.size() - 40;
  const uint64_t offsets = LoadLE(bytes, footer + 8, 8);
  lance::file::v2::ColumnMetadata meta;
  meta.ParseFromString(bytes.substr(LoadLE(bytes, offsets + column * 16, 8), LoadLE(bytes, offsets + column * 16 + 8, 8)));
  ASSERT_GT(meta.pages_size(), 0);
  ASSERT_GT(meta.pages(0).buffer_offsets_size(), buffer);
  const uint64_t at = meta.pages(0).buffer_offsets(buffer), size = meta.pages(0).buffer_sizes(buffer);
  ASSERT_GT(size, 0u);
  std::fill(bytes.begin() + at, bytes.begin() + at + std::min<uint64_t>(size, 64), '\xff');
  const std::string path = dir + "/corrupt_" + std::to_string(column) + ".lance";
  WriteStringToFile(path, bytes);

  auto store = io::MakeLocalStore();
  auto reader = format::LanceFileReader::Open(*store, path);
  bool raised = false;
  for (size_t f = 0; f < reader->schema().fields().size(); ++f) {
    try {
      reader->ReadField(f, 0, reader->num_rows(f));
    } catch (const Error& e) {
      raised = true;
      EXPECT_EQ(e.kind(), ErrorKind::kCorrupt) << e.what();
      const std::string message = e.what();
      EXPECT_NE(message.find(path), std::string::npos) << message;
      EXPECT_NE(message.find("column " + std::to_string(column)), std::string::npos) << message;
      EXPECT_NE(message.find("page 0"), std::string::npos) << message;
    }
  }
  EXPECT_TRUE(raised) << "no error reading " << path;
}

// 2.0: the offsets ("indices") buffer of a utf8 column's Binary page.
TEST_F(FuzzSmokeTest, CorruptV20BinaryPageNamesFileColumnAndPage) {
  TempDir dir;
  const auto files = FilesUnder(corpus().ours_v20.at(0) + "/data", ".lance");
  ASSERT_EQ(files.size(), 1u);
  ExpectCorruptPageError(files.front(), /*column `name`=*/1, /*buffer=*/0, dir.path());
}

// 2.1: the chunk metadata of a mini-block page.
TEST_F(FuzzSmokeTest, CorruptMiniBlockChunkMetadataNamesFileColumnAndPage) {
  TempDir dir;
  const auto files = FilesUnder(corpus().ours_v21.at(0) + "/data", ".lance");
  ASSERT_EQ(files.size(), 1u);
  ExpectCorruptPageError(files.front(), /*column `id`=*/0, /*buffer=*/0, dir.path());
}

}  // namespace
}  // namespace lancelet::fuzz
