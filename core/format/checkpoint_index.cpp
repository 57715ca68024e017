#include "memfit/format/checkpoint_index.h"

#include <map>
#include <set>

#include <fmt/format.h>

#include "memfit/format/strict_json.h"

namespace memfit {
namespace {

[[noreturn]] void fail(ErrorCode code, std::string_view source, const std::string& msg) {
  throw Error(code, fmt::format("{}: {}", source, msg));
}

// Shards live beside the index: a name that is absolute, climbs out, or is empty is refused.
bool safe_shard_name(const std::string& s) {
  if (s.empty() || s.front() == '/' || s.find('\\') != std::string::npos ||
      s.find('\0') != std::string::npos)
    return false;
  std::size_t start = 0;
  while (start <= s.size()) {
    const std::size_t end = std::min(s.find('/', start), s.size());
    const std::string part = s.substr(start, end - start);
    if (part.empty() || part == "." || part == "..") return false;
    start = end + 1;
  }
  return true;
}

}  // namespace

Result<CheckpointIndex> parse_index(std::string_view text, std::string_view source) {
  return capture([&]() -> CheckpointIndex {
    if (auto bad = invalid_utf8_at(text))
      fail(ErrorCode::kIndexInvalid, source, fmt::format("not valid UTF-8 (byte {})", *bad));
    Json j;
    if (auto err = parse_strict_json(text, 16, &j))
      fail(err->kind == StrictJsonError::kDuplicateKey ? ErrorCode::kIndexDuplicateName
                                                        : ErrorCode::kIndexInvalid,
           source, err->detail);
    if (!j.is_object()) fail(ErrorCode::kIndexInvalid, source, "expected a JSON object");
    auto wm = j.find("weight_map");
    if (wm == j.end() || !wm->is_object())
      fail(ErrorCode::kIndexInvalid, source, "missing 'weight_map' (an object tensor → shard file)");
    CheckpointIndex index;
    std::set<std::string> seen_shards;
    for (const auto& [name, file] : wm->items()) {
      if (!file.is_string())
        fail(ErrorCode::kIndexInvalid, source,
             fmt::format("weight_map['{}'] must be a file name, got {}", name, file.dump()));
      const std::string f = file.get<std::string>();
      if (!safe_shard_name(f))
        fail(ErrorCode::kIndexInvalidShardName, source,
             fmt::format("weight_map['{}'] = '{}' is not a file inside the checkpoint folder",
                         name, f));
      index.weight_map.emplace_back(name, f);
      if (seen_shards.insert(f).second) index.shards.push_back(f);
    }
    if (auto md = j.find("metadata"); md != j.end() && !md->is_null()) {
      if (!md->is_object()) fail(ErrorCode::kIndexInvalid, source, "'metadata' must be an object");
      if (auto ts = md->find("total_size"); ts != md->end() && !ts->is_null()) {
        if (ts->is_number_unsigned() || (ts->is_number_integer() && ts->get<std::int64_t>() >= 0))
          index.total_size = ts->get<std::uint64_t>();
        else if (ts->is_number_float() && ts->get<double>() >= 0 && ts->get<double>() < 1.8e19)
          index.total_size = static_cast<std::uint64_t>(ts->get<double>());
        else
          fail(ErrorCode::kIndexInvalid, source,
               fmt::format("metadata.total_size must be a non-negative integer, got {}", ts->dump()));
      }
    }
    return index;
  });
}

Result<bool> check_index_against_shards(const CheckpointIndex& index, const ShardHeaders& shards,
                                        std::string_view source) {
  return capture([&]() -> bool {
    std::map<std::string, std::map<std::string, std::uint64_t>> held;
    std::map<std::string, std::string> home;  // tensor → the shard that holds it
    std::uint64_t total = 0;
    for (const auto& [shard, header] : shards)
      for (const auto& t : header.tensors) {
        auto [it, fresh] = home.emplace(t.name, shard);
        if (!fresh)
          fail(ErrorCode::kIndexDuplicateName, source,
               fmt::format("tensor '{}' is in both '{}' and '{}'", t.name, it->second, shard));
        held[shard][t.name] = t.nbytes();
        total += t.nbytes();
      }
    std::set<std::string> listed;
    for (const auto& [name, shard] : index.weight_map) {
      listed.insert(name);
      auto s = held.find(shard);
      if (s == held.end() || !s->second.count(name))
        fail(ErrorCode::kIndexTensorNotInShard, source,
             fmt::format("weight_map puts tensor '{}' in '{}', which does not hold it", name, shard));
    }
    for (const auto& [shard, header] : shards)
      for (const auto& t : header.tensors)
        if (!listed.count(t.name))
          fail(ErrorCode::kIndexTensorNotListed, source,
               fmt::format("shard '{}' holds tensor '{}', which weight_map does not list", shard,
                           t.name));
    if (index.total_size && *index.total_size != total)
      fail(ErrorCode::kIndexTotalSizeMismatch, source,
           fmt::format("metadata.total_size is {}, the shards' tensors add up to {} bytes",
                       *index.total_size, total));
    return true;
  });
}

}  // namespace memfit
