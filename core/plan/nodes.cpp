#include "memfit/plan/nodes.h"

#include <cctype>
#include <cmath>
#include <cstdlib>

#include <fmt/format.h>

#include "trim.h"

namespace memfit::plan {
namespace {

// Items of `s` split at `sep`, trimmed, empty ones dropped (a trailing separator is fine).
std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> out;
  std::size_t start = 0;
  while (start <= s.size()) {
    const std::size_t end = std::min(s.find(sep, start), s.size());
    std::string item = trim(std::string_view(s).substr(start, end - start));
    if (!item.empty()) out.push_back(std::move(item));
    start = end + 1;
  }
  return out;
}

bool valid_name(const std::string& n) {
  if (n.empty() || n.size() > 253) return false;
  for (const char c : n)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '-' && c != '_' && c != '.') return false;
  return true;
}

Error bad_node(const std::string& node, const std::string& why) {
  return Error(ErrorCode::kInvalidArgument, fmt::format("--nodes: node '{}': {}", node, why));
}

NodeSpec parse_node(const std::string& item) {
  const std::size_t eq = item.find('=');
  if (eq == std::string::npos)
    throw Error(ErrorCode::kInvalidArgument,
                fmt::format("--nodes: '{}' is not NAME=BUDGETS (e.g. a=0:24GiB,cpu:64GiB)", item));
  NodeSpec node;
  node.name = trim(std::string_view(item).substr(0, eq));
  if (!valid_name(node.name))
    throw Error(ErrorCode::kInvalidArgument,
                fmt::format("--nodes: '{}' is not a node name (letters, digits, '-', '_', '.')", node.name));
  std::string budgets;
  for (const std::string& entry : split(item.substr(eq + 1), ',')) {
    const std::size_t sep = entry.find_first_of(":=");
    if (sep != std::string::npos && trim(std::string_view(entry).substr(0, sep)) == "gpu") {
      if (node.gpu) throw bad_node(node.name, "its GPU kind is given twice");
      try {
        node.gpu = &find_gpu(trim(std::string_view(entry).substr(sep + 1)));
      } catch (const Error& e) {
        throw bad_node(node.name, e.message());
      }
      continue;
    }
    budgets += budgets.empty() ? entry : "," + entry;
  }
  if (budgets.empty()) throw bad_node(node.name, "no budgets given (e.g. 0:24GiB,cpu:64GiB)");
  Result<MaxMemory> mm = parse_max_memory(budgets);
  if (!mm) throw bad_node(node.name, mm.error().message());
  node.max_memory = std::move(mm).value();
  if (node.gpu && node.gpu_count() == 0)
    throw bad_node(node.name, fmt::format("it names a GPU kind ({}) but budgets no GPU", node.gpu->name));
  return node;
}

// "50us" → 5e-5; the unit is required (a bare number is ambiguous).
double parse_latency(const std::string& text) {
  static const std::pair<const char*, double> kUnits[] = {
      {"ns", 1e-9}, {"us", 1e-6}, {"\xC2\xB5s", 1e-6}, {"ms", 1e-3}, {"s", 1.0}};
  for (const auto& [suffix, factor] : kUnits) {
    const std::string_view sfx(suffix);
    if (text.size() <= sfx.size() || text.compare(text.size() - sfx.size(), sfx.size(), sfx) != 0) continue;
    const std::string num = trim(std::string_view(text).substr(0, text.size() - sfx.size()));
    char* end = nullptr;
    const double v = std::strtod(num.c_str(), &end);
    if (num.empty() || end != num.c_str() + num.size() || !std::isfinite(v) || v < 0) break;
    return v * factor;
  }
  throw Error(ErrorCode::kInvalidArgument,
              fmt::format("--link: latency '{}' is not a duration (e.g. 50us, 0.2ms)", text));
}

double parse_bandwidth(std::string text) {
  // A rate: "10Gbps" / "10Gb/s" are bits per second, "1.25GB/s" bytes — parse_size's units once
  // the "per second" is taken off.
  std::string size = text;
  for (const char* per : {"ps", "/s"}) {
    const std::string_view p(per);
    if (size.size() > p.size() && size.compare(size.size() - p.size(), p.size(), p) == 0) {
      size.resize(size.size() - p.size());
      break;
    }
  }
  Result<std::uint64_t> bytes = parse_size(size);
  if (!bytes || *bytes == 0)
    throw Error(ErrorCode::kInvalidArgument,
                fmt::format("--link: '{}' is not a bandwidth (e.g. 10Gbps, 100Gb/s, 1.25GB/s)", text));
  return static_cast<double>(*bytes);
}

}  // namespace

std::uint64_t NodeSpec::capacity() const {
  std::uint64_t total = 0;
  for (const auto& [d, b] : max_memory)
    if (d != Device::disk()) total += b;
  return total;
}

int NodeSpec::gpu_count() const {
  int n = 0;
  for (const auto& entry : max_memory) n += entry.first.is_gpu() ? 1 : 0;
  return n;
}

Result<std::vector<NodeSpec>> parse_nodes(const std::string& spec) {
  return capture([&] {
    std::vector<NodeSpec> nodes;
    for (const std::string& item : split(spec, ';')) {
      NodeSpec node = parse_node(item);
      for (const NodeSpec& other : nodes)
        if (other.name == node.name)
          throw Error(ErrorCode::kInvalidArgument, fmt::format("--nodes: node '{}' is given twice", node.name));
      nodes.push_back(std::move(node));
    }
    if (nodes.empty())
      throw Error(ErrorCode::kInvalidArgument,
                  "--nodes: no nodes given (e.g. a=0:24GiB,cpu:64GiB;b=0:24GiB,cpu:32GiB)");
    return nodes;
  });
}

Result<LinkSpec> parse_link(const std::string& text) {
  return capture([&] {
    const std::vector<std::string> parts = split(text, ',');
    if (parts.empty() || parts.size() > 2)
      throw Error(ErrorCode::kInvalidArgument,
                  fmt::format("--link: '{}' is not BANDWIDTH[,LATENCY] (e.g. 10Gbps,50us)", text));
    LinkSpec link;
    link.bytes_per_s = parse_bandwidth(parts[0]);
    if (parts.size() == 2) link.latency_s = parse_latency(parts[1]);
    return link;
  });
}

}  // namespace memfit::plan
