#include "timm_effnet_common.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <string_view>
#include <utility>

#include <fmt/format.h>

namespace memfit::arch::timm {
namespace {

struct BlockArgs {
  std::string type;  // ds, dsa, ir, cn
  std::int64_t kernel = 3;
  std::int64_t exp_kernel = 1;  // 'a'
  std::int64_t pw_kernel = 1;   // 'p'
  std::int64_t stride = 1;
  double exp_ratio = 1.0;
  bool has_exp_ratio = false;
  std::int64_t out_chs = 0;
  double se_ratio = 0.0;
  std::string_view act;  // n<act> op: overrides the model's act_layer (empty: the model's)
};

[[noreturn]] void bad_block(const Config& c, const std::string& s, const char* why) {
  throw Error(ErrorCode::kInternal,
              fmt::format("{}: block definition '{}' is not supported ({})", c.where(), s, why));
}

// _decode_block_str: "<type>_<op>_<op>…"; ops are noskip/skip, n<act>, or <key><number>.
std::pair<BlockArgs, std::int64_t> decode_block(const Config& c, const std::string& s) {
  std::vector<std::string> ops;
  std::size_t start = 0;
  while (true) {
    const auto us = s.find('_', start);
    ops.push_back(s.substr(start, us == std::string::npos ? std::string::npos : us - start));
    if (us == std::string::npos) break;
    start = us + 1;
  }
  BlockArgs a;
  a.type = ops[0];
  if (a.type != "ds" && a.type != "dsa" && a.type != "ir" && a.type != "cn")
    bad_block(c, s, "block type");
  std::map<std::string, std::string> options;
  for (std::size_t i = 1; i < ops.size(); ++i) {
    const std::string& op = ops[i];
    if (op == "noskip" || op == "skip" || op.empty()) continue;  // no tensors
    if (op[0] == 'n') {  // activation: re, r6, hs, sw, mi (anything else is ignored)
      static constexpr std::pair<std::string_view, std::string_view> kActs[] = {
          {"nre", "ReLU"}, {"nr6", "ReLU6"}, {"nhs", "Hardswish"}, {"nsw", "SiLU"},
          {"nmi", "Mish"}};
      for (const auto& [key, cls] : kActs)
        if (op == key) a.act = cls;
      continue;
    }
    const auto digit = op.find_first_of("0123456789");
    if (digit == std::string::npos) continue;
    options[op.substr(0, digit)] = op.substr(digit);
  }
  auto integer = [&](const char* key, std::int64_t fallback) -> std::int64_t {
    auto it = options.find(key);
    if (it == options.end()) return fallback;
    if (it->second.find_first_not_of("0123456789") != std::string::npos)
      bad_block(c, s, "mixed kernel sizes");
    return std::stoll(it->second);
  };
  auto real = [&](const char* key, double fallback) -> double {
    auto it = options.find(key);
    return it == options.end() ? fallback : std::stod(it->second);
  };
  const std::int64_t repeat = integer("r", -1);
  a.out_chs = integer("c", -1);
  a.stride = integer("s", -1);
  if (repeat < 0 || a.out_chs < 0 || a.stride < 0) bad_block(c, s, "missing r/c/s");
  a.kernel = integer("k", 1);
  a.pw_kernel = integer("p", 1);
  if (a.type == "ir") {
    a.exp_kernel = integer("a", 1);
    a.exp_ratio = real("e", 1.0);
    a.has_exp_ratio = true;
  }
  if (a.type != "cn") a.se_ratio = real("se", 0.0);
  return {a, repeat};
}

// _scale_stage_depth: scale the stage's total repeats, spread back over its block strings.
std::vector<BlockArgs> scale_stage(const std::vector<std::pair<BlockArgs, std::int64_t>>& defs,
                                   double multiplier, bool depth_round) {
  std::int64_t num_repeat = 0;
  for (const auto& d : defs) num_repeat += d.second;
  std::int64_t scaled =
      depth_round
          ? std::max<std::int64_t>(1, py_round(static_cast<double>(num_repeat) * multiplier))
          : static_cast<std::int64_t>(std::ceil(static_cast<double>(num_repeat) * multiplier));
  std::vector<std::int64_t> reps(defs.size());
  for (std::size_t i = defs.size(); i-- > 0;) {
    const std::int64_t r = defs[i].second;
    const std::int64_t rs = std::max<std::int64_t>(
        1, py_round(static_cast<double>(r) / static_cast<double>(num_repeat) *
                    static_cast<double>(scaled)));
    reps[i] = rs;
    num_repeat -= r;
    scaled -= rs;
  }
  std::vector<BlockArgs> out;
  for (std::size_t i = 0; i < defs.size(); ++i)
    for (std::int64_t k = 0; k < reps[i]; ++k) out.push_back(defs[i].first);
  return out;
}

// SqueezeExcite: conv_reduce, act1 (force_act_layer or the block's act), conv_expand, gate; or
// the nn.Identity `se` placeholder when the block has no SE.
void squeeze_excite(TreeBuilder& b, const EffNetDef& d, std::int64_t chs, double rd_ratio,
                    std::string_view block_act) {
  if (rd_ratio <= 0) {
    identity(b, "se");
    return;
  }
  const double v = static_cast<double>(chs) * rd_ratio;
  const std::int64_t rd = d.se_round_channels ? make_divisible(v) : py_round(v);
  auto s = b.module("se", "SqueezeExcite");
  nn::conv2d(b, "conv_reduce", chs, rd, 1, 1, true);
  act(b, "act1", d.se_act.empty() ? block_act : d.se_act);
  nn::conv2d(b, "conv_expand", rd, chs, 1, 1, true);
  act(b, "gate", d.se_gate);
}

// "a | b c" → {{"a"}, {"b", "c"}} (EffNetDef::arch_def).
std::vector<std::vector<std::string>> split_arch_def(std::string_view def) {
  std::vector<std::vector<std::string>> stages(1);
  std::size_t start = 0;
  while (start <= def.size()) {
    std::size_t end = def.find(' ', start);
    if (end == std::string_view::npos) end = def.size();
    const std::string_view word = def.substr(start, end - start);
    if (word == "|") stages.emplace_back();
    else if (!word.empty()) stages.back().emplace_back(word);
    start = end + 1;
  }
  return stages;
}

}  // namespace

std::int64_t EffNetDef::round_chs(std::int64_t c) const {
  if (channel_multiplier == 0.0) return c;
  return make_divisible(static_cast<double>(c) * channel_multiplier);
}

void bn_act(TreeBuilder& b, std::string_view name, std::int64_t channels, std::string_view act) {
  // nn::batch_norm2d's tensors, then BatchNormAct2d's own children.
  auto s = b.module(name, "BatchNormAct2d");
  b.param("weight", {channels});
  b.param("bias", {channels});
  b.buffer("running_mean", {channels}, DType::kF32, true);
  b.buffer("running_var", {channels}, DType::kF32, true);
  b.buffer("num_batches_tracked", {}, DType::kI64, true);
  identity(b, "drop");  // drop_layer None
  timm::act(b, "act", act);
}

std::int64_t effnet_stem(TreeBuilder& b, const EffNetDef& d) {
  const std::int64_t stem = d.fix_stem ? d.stem_size : d.round_chs(d.stem_size);
  conv2d(b, "conv_stem", 3, stem, 3, 2, 1, false, d.pad_same);
  bn_act(b, "bn1", stem, d.act);
  return stem;
}

std::int64_t effnet_blocks(TreeBuilder& b, const Config& c, const EffNetDef& d,
                           std::int64_t in_chs) {
  auto blocks = b.module("blocks", "Sequential");
  const std::vector<std::vector<std::string>> arch_def = split_arch_def(d.arch_def);
  const std::size_t stages = arch_def.size();
  for (std::size_t si = 0; si < stages; ++si) {
    std::vector<std::pair<BlockArgs, std::int64_t>> defs;
    for (const auto& s : arch_def[si]) defs.push_back(decode_block(c, s));
    const bool fixed = d.fix_first_last && (si == 0 || si + 1 == stages);
    const auto stage = scale_stage(defs, fixed ? 1.0 : d.depth_multiplier, d.depth_round);
    auto st = b.item(si, "Sequential");
    for (std::size_t bi = 0; bi < stage.size(); ++bi) {
      const BlockArgs& a = stage[bi];
      const std::int64_t stride = bi == 0 ? a.stride : 1;  // only a stage's first block strides
      const std::int64_t out = d.round_chs(a.out_chs);
      double se = a.se_ratio;
      if (se > 0 && !d.se_from_exp) se /= a.has_exp_ratio ? a.exp_ratio : 1.0;
      const std::string idx = std::to_string(bi);
      const std::string_view act = a.act.empty() ? d.act : a.act;
      // Each block ends with drop_path (nn.Identity: drop_path_rate 0), its own se is an
      // nn.Identity without SE, and bn2 of ds / bn3 of ir have apply_act=False.
      if (a.type == "ds" || a.type == "dsa") {
        auto blk = b.module(idx, "DepthwiseSeparableConv");
        conv2d(b, "conv_dw", in_chs, in_chs, a.kernel, stride, in_chs, false, d.pad_same);
        bn_act(b, "bn1", in_chs, act);
        squeeze_excite(b, d, in_chs, se, act);
        conv2d(b, "conv_pw", in_chs, out, a.pw_kernel, 1, 1, false, d.pad_same);
        bn_act(b, "bn2", out, a.type == "dsa" ? act : std::string_view());  // pw_act
        identity(b, "drop_path");
      } else if (a.type == "ir") {
        auto blk = b.module(idx, "InvertedResidual");
        const std::int64_t mid = make_divisible(static_cast<double>(in_chs) * a.exp_ratio);
        conv2d(b, "conv_pw", in_chs, mid, a.exp_kernel, 1, 1, false, d.pad_same);
        bn_act(b, "bn1", mid, act);
        conv2d(b, "conv_dw", mid, mid, a.kernel, stride, mid, false, d.pad_same);
        bn_act(b, "bn2", mid, act);
        squeeze_excite(b, d, mid, se, act);
        conv2d(b, "conv_pwl", mid, out, a.pw_kernel, 1, 1, false, d.pad_same);
        bn_act(b, "bn3", out, {});
        identity(b, "drop_path");
      } else {  // cn: ConvBnAct
        auto blk = b.module(idx, "ConvBnAct");
        conv2d(b, "conv", in_chs, out, a.kernel, stride, 1, false, d.pad_same);
        bn_act(b, "bn1", out, act);
        identity(b, "drop_path");
      }
      in_chs = out;
    }
  }
  return in_chs;
}

}  // namespace memfit::arch::timm
