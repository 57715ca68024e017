// memfit/plan/nodes.h — the hosts of a multi-node plan and the link between them, as `memfit plan
// --nodes … --link …` spells them.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "memfit/error.h"
#include "memfit/memory/gpu_catalog.h"
#include "memfit/plan/device.h"

namespace memfit::plan {

struct NodeSpec {
  std::string name;        // host name as given ("a", "gpu-box-2")
  MaxMemory max_memory;    // that host's own budgets, accelerate's form
  const GpuSpec* gpu = nullptr;  // its GPUs' kind ("gpu:H100"), for speeds; nullptr: not given
  std::uint64_t capacity() const;  // every budget but disk
  int gpu_count() const;
};

// "a=0:24GiB,1:24GiB,cpu:64GiB;b=0:24GiB,cpu:32GiB[,gpu:RTX 4090]": nodes separated by ';', each
// NAME=budgets where budgets are parse_max_memory's entries ('dev:size' or 'dev=size'), plus an
// optional `gpu:NAME` naming the host's GPU kind from the catalog. Errors name the node and the
// entry; names must be unique.
Result<std::vector<NodeSpec>> parse_nodes(const std::string& spec);

struct LinkSpec {
  double bytes_per_s = 10e9 / 8;  // 10 Gb/s Ethernet
  // One way, per message: TCP over a switched 10/100 GbE LAN is tens of microseconds; Gloo adds
  // its own send/recv bookkeeping. Give the measured figure when it is known.
  double latency_s = 50e-6;
};

// "10Gbps", "100Gb/s", "1.25GB/s", "400Mbps", optionally ",LATENCY" with LATENCY as "50us",
// "0.2ms", "1ms", "200ns", "0.001s". A bandwidth in bits: a lowercase 'b' (parse_size's rule).
Result<LinkSpec> parse_link(const std::string& text);

}  // namespace memfit::plan
