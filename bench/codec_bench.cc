// Throughput of the 2.1/2.2 writer's and reader's value codecs on 1M values, in bytes of
// plain input per second: FastLanes bit-packing and unpacking (32-bit words at widths 7 and
// 20), RLE, dictionary keying of low-cardinality strings, and FSST training plus
// compression of short strings. Google Benchmark; compare with a memcpy of the same bytes.
//   build/release/bench/codec_bench [--benchmark_filter=...]
#include <benchmark/benchmark.h>

#include <cstring>
#include <random>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "array/dictionary_array.h"
#include "format/v21_compression.h"
#include "format/v21_value_codecs.h"

using namespace lancelet;
using namespace lancelet::format::v21;

namespace {

constexpr uint64_t kValues = 1 << 20;

std::vector<uint32_t> Uniform(uint32_t width) {
  std::mt19937 rng(7);
  std::vector<uint32_t> out(kValues);
  for (auto& v : out) v = rng() & ((1u << width) - 1);
  return out;
}

void Memcpy(benchmark::State& state) {
  std::vector<uint32_t> in = Uniform(20), out(kValues);
  for (auto _ : state) {
    std::memcpy(out.data(), in.data(), kValues * 4);
    benchmark::DoNotOptimize(out.data());
  }
  state.SetBytesProcessed(int64_t(state.iterations() * kValues * 4));
}
BENCHMARK(Memcpy);

void BitpackEncode(benchmark::State& state) {
  std::vector<uint32_t> in = Uniform(uint32_t(state.range(0)));
  for (auto _ : state)
    benchmark::DoNotOptimize(EncodeInlineBitpacking(32, reinterpret_cast<const uint8_t*>(in.data()), kValues));
  state.SetBytesProcessed(int64_t(state.iterations() * kValues * 4));
}
BENCHMARK(BitpackEncode)->Arg(7)->Arg(20);

void BitpackDecode(benchmark::State& state) {
  std::vector<uint32_t> in = Uniform(uint32_t(state.range(0)));
  const std::string packed = EncodeInlineBitpacking(32, reinterpret_cast<const uint8_t*>(in.data()), kValues);
  for (auto _ : state) benchmark::DoNotOptimize(DecodeInlineBitpacking(32, packed, kValues, "bench"));
  state.SetBytesProcessed(int64_t(state.iterations() * kValues * 4));
}
BENCHMARK(BitpackDecode)->Arg(7)->Arg(20);

void RleEncode(benchmark::State& state) {
  std::vector<uint32_t> in(kValues);
  for (uint64_t k = 0; k < kValues; ++k) in[k] = uint32_t(k / 50);  // runs of 50
  for (auto _ : state) benchmark::DoNotOptimize(EncodeRle(32, reinterpret_cast<const uint8_t*>(in.data()), kValues));
  state.SetBytesProcessed(int64_t(state.iterations() * kValues * 4));
}
BENCHMARK(RleEncode);

std::vector<std::string> Strings(uint32_t distinct) {
  std::mt19937 rng(11);
  std::vector<std::string> out(kValues);
  for (auto& s : out) s = fmt::format("category-{}", rng() % distinct);
  return out;
}

void DictionaryKeying(benchmark::State& state) {
  const std::vector<std::string> values = Strings(100);
  uint64_t bytes = 0;
  for (const auto& s : values) bytes += s.size();
  for (auto _ : state) {
    DictionaryKeyer keyer(*DataType::Int32(), "bench");
    uint64_t sum = 0;
    for (uint64_t k = 0; k < kValues; ++k) sum += keyer.KeyOf(values[k], int64_t(k));
    benchmark::DoNotOptimize(sum);
  }
  state.SetBytesProcessed(int64_t(state.iterations() * bytes));
}
BENCHMARK(DictionaryKeying);

void FsstTrainAndCompress(benchmark::State& state) {
  std::mt19937 rng(5);
  static const char* kWords[] = {"lance", "overlay", "fragment", "column", "vector", "index", "page", "chunk"};
  ValueBlock block;
  block.variable = true;
  for (uint64_t k = 0; k < kValues / 8; ++k) {  // ~128k strings of ~30 bytes
    for (int w = 0; w < 4; ++w) block.data += std::string(kWords[rng() % 8]) + (w < 3 ? " " : "");
    block.offsets.push_back(block.data.size());
    ++block.count;
  }
  for (auto _ : state) {
    FsstEncoder encoder = FsstEncoder::Train(block);
    benchmark::DoNotOptimize(encoder.CompressBlock(block));
  }
  state.SetBytesProcessed(int64_t(state.iterations() * block.data.size()));
}
BENCHMARK(FsstTrainAndCompress);

}  // namespace

BENCHMARK_MAIN();
