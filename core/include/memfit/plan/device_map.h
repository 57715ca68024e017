// memfit/plan/device_map.h — device maps: module (or tensor) name → device, in order.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "memfit/error.h"
#include "memfit/model/tensor_tree.h"
#include "memfit/plan/device.h"

namespace memfit::plan {

using DeviceMap = std::vector<std::pair<std::string, Device>>;

// accelerate's clean_device_map: merges every subtree whose keys all map to one device into one
// key (a model that fits on one device becomes {"": device}).
DeviceMap clean_device_map(DeviceMap map);

// accelerate's check_device_map, and more: every state-dict tensor must be covered by a key
// (prefix match), every key must name a module or tensor of the model, and no key may be
// covered twice. Each problem is reported by name (the first few in the message).
Result<bool> check_device_map(const TensorTree& tree, const DeviceMap& map);

// Whether device map key `key` covers `name`: "" covers everything, else `name` is `key` or lies
// below it ("model.layers.1" covers "model.layers.1.mlp", not "model.layers.10").
bool covers(const std::string& key, const std::string& name);

// The device a tensor name is placed on (the longest matching key), or nullptr.
const Device* device_of(const DeviceMap& map, const std::string& tensor_name);

}  // namespace memfit::plan
