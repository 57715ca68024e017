// native/checkpoint/gguf_files.h — GGUF models on disk and on the Hub: headers read by pread or
// HTTP Range (never the weights), split files gathered into one model.
//
// A split model is PREFIX-00001-of-0000N.gguf … PREFIX-0000N-of-0000N.gguf (llama.cpp's
// gguf-split); naming any one of them names the model. On the Hub the header is read in ranges
// that start at 64 KiB and double (core's gguf::parse asks; HubClient::fetch_range answers), so a
// header of a few MiB (a large vocabulary) costs a handful of requests.
//
// Errors throw Failure: the Hub's kinds (gated, not found, network) or the format's.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "hub_client.h"
#include "memfit/format/gguf.h"
#include "memfit/model/gguf_model.h"

namespace memfit::checkpoint {

bool is_gguf_name(std::string_view name);  // ends with ".gguf"

// One local file's header.
gguf::File read_gguf_file(const std::string& path);
// The model a local file belongs to: the file, or all the splits beside it.
GgufModel open_gguf_model(const std::string& path);

// "ORG/NAME:FILE.gguf" → {"ORG/NAME", "FILE.gguf"}; nullopt when the target has no ':FILE'.
std::optional<std::pair<std::string, std::string>> split_hub_target(const std::string& target);

gguf::File read_hub_gguf(hub::HubClient& client, const std::string& repo, const std::string& file);
// The model a Hub file belongs to: the file, or all its splits.
GgufModel open_hub_gguf_model(hub::HubClient& client, const std::string& repo, const std::string& file);

// A file's leading bytes through its header's end (metadata and tensor infos), as core's repo
// kinds take them (RepoFiles::binaries), and the file's size: read as read_gguf_file /
// read_hub_gguf read (the parser's chunks, growing from 64 KiB), so the reads stop where the
// header does.
struct GgufHeaderBytes {
  std::string bytes;
  std::uint64_t file_size = 0;
};
GgufHeaderBytes read_gguf_header_bytes(const std::string& path);
GgufHeaderBytes read_hub_gguf_header_bytes(hub::HubClient& client, const std::string& repo, const std::string& file);

}  // namespace memfit::checkpoint
