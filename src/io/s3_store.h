// An ObjectStore on S3 or an S3-compatible server (s3://BUCKET/KEY URIs), through libcurl:
// ranged GETs for reads, whole-object PUTs for writes (If-None-Match: * where the
// object must not exist, which is how a commit publishes its manifest atomically),
// ListObjectsV2 for listings, HEAD and DELETE. Requests are signed with AWS Signature
// V4 by libcurl itself (CURLOPT_AWS_SIGV4); idempotent ones are retried with
// exponential backoff and jitter on 5xx, 429 and dropped connections.
//
// libcurl is loaded when the first s3:// URI is opened, not at start-up: the loader
// would otherwise map it and its dozen dependencies into every command.
//
// Paths handed to the store are whole URIs (s3://BUCKET/KEY), so that every error and
// listing names the object as the user does; the store strips its bucket's prefix.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "io/object_store.h"

namespace lancelet::io {

// Where and how to reach the server, from storage options (the reference's keys) over
// the AWS_* environment variables.
struct S3Config {
  std::string endpoint;  // scheme://host[:port]; empty: https://s3.REGION.amazonaws.com
  std::string region = "us-east-1";
  std::string access_key_id, secret_access_key, session_token;  // empty key: unsigned requests
  bool allow_http = false;
  bool virtual_hosted_style = false;  // bucket in the host name rather than the path
  long timeout_ms = 30000, connect_timeout_ms = 5000;
  int max_retries = 6;
  // Whether the server honours If-None-Match: * (checked once per store, at its first
  // put-if-absent). The reference's conditional_put=disabled says it does not and that
  // one writer at a time is guaranteed: a put-if-absent is then a HEAD and a PUT.
  bool conditional_put = true;
  // A file written past this many bytes goes out as a multipart upload, one part of this
  // size at a time (lancelet_upload_part_size; S3 wants at least 5 MiB).
  uint64_t upload_part_bytes = 8 << 20;
  // A read smaller than a block fetches the whole block around it and keeps it in the
  // store's cache of read_cache_bytes, so that the small reads after it cost no request
  // (lancelet's own options lancelet_read_block_size and lancelet_read_cache_size).
  uint64_t read_block_bytes = 64 << 10;
  uint64_t read_cache_bytes = 64 << 20;
  // Ranges read together (ReadableFile::ReadRanges) that lie less than this apart are
  // one request; at most this many requests of one batch are in flight
  // (lancelet_coalesce_gap, lancelet_max_concurrent_reads).
  uint64_t read_coalesce_gap_bytes = 256 << 10;
  int max_concurrent_reads = 16;

  static S3Config From(const StorageOptions& options);
  // Equal configurations reach the same store (and share the session's caches).
  std::string Fingerprint() const;
};

// The store of BUCKET under `config`: one per bucket and configuration per process.
std::shared_ptr<ObjectStore> S3StoreFor(const std::string& bucket, const S3Config& config);

}  // namespace lancelet::io
